// SPDX-License-Identifier: GPL-2.0-only
/* serve's triggers (see trigger.h): rules, their state, the files they save. */
#include "src/trigger.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/pprof.h"
#include "src/syscalls.h"
#include "src/lib/util.h"

#define TRIGGER_FILE_SUFFIX ".pb.gz"

/* One rule's progress over the windows. */
struct trigger_state {
	struct trigger_rule r;
	unsigned int over;		/* windows in a row over the threshold */
	bool held;			/* fired, not yet a window under since */
	uint64_t first_over_ns;		/* the start of the first window of the run */
	uint64_t value;			/* the last window's measure */
	struct sys_stat prev;		/* syscall rules: the cumulative at the last window */
	bool have_prev;
	bool pending;			/* fired: the file is due at save_ns */
	uint64_t fired_ns, save_ns, fired_value, fired_first_ns;
	uint64_t last_file_ns;		/* 0: none yet */
	uint64_t firings, suppressed;
};

struct trigger_file {
	char name[TRIGGER_NAME_LEN + 48];
	const char *rule;		/* the rule's text, in t->rules; NULL: earlier */
	uint64_t fired_ns, start_ns, end_ns, bytes;
	bool earlier;			/* an earlier run's: fired_ns to the second, no range */
};

struct triggers {
	pthread_mutex_t lock;
	struct trigger_state *rules;
	size_t nr;
	char *dir;
	unsigned int max_files;
	struct history *h;
	struct { struct trigger_file *items; size_t nr, alloc; } files;	/* oldest first */
};

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* A "KEY=VALUE" of a rule; 0 or -EINVAL with @why set. */
static int rule_key(struct trigger_rule *r, const char *key, const char *v, bool *have_kind,
		    char *why, size_t size)
{
	uint64_t n;
	int kind = -1;

	if (!strcmp(key, "name") || !strcmp(key, "syscall") || !strcmp(key, "comm")) {
		char *dst = !strcmp(key, "name") ? r->name :
			    !strcmp(key, "syscall") ? r->syscall : r->comm;
		size_t max = !strcmp(key, "name") ? sizeof(r->name) :
			     !strcmp(key, "syscall") ? sizeof(r->syscall) : sizeof(r->comm);

		if (!*v || strlen(v) >= max || (!strcmp(key, "name") && !name_ok(v))) {
			snprintf(why, size, "invalid %s '%.40s'", key, v);
			return -EINVAL;
		}
		snprintf(dst, max, "%s", v);
		if (!strcmp(key, "syscall") && syscall_number(v) < 0) {
			snprintf(why, size, "unknown syscall '%.40s'", v);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "p99_ms") && !parse_u64(v, 1, 3600000, &n)) {
		kind = TRIGGER_KIND_SYSCALL_P99;
		r->threshold = n * 1000000;
	} else if (!strcmp(key, "cpu_pct") && !parse_u64(v, 1, 100000, &n)) {
		kind = TRIGGER_KIND_CPU;
		r->threshold = n * 100;
	} else if (!strcmp(key, "requests_p99_ms") && !parse_u64(v, 1, 3600000, &n)) {
		kind = TRIGGER_KIND_REQUESTS_P99;
		r->threshold = n * 1000000;
	} else if (!strcmp(key, "slow_calls") && !parse_u64(v, 1, 1000000000, &n)) {
		kind = TRIGGER_KIND_SLOW_CALLS;
		r->threshold = n;
	} else if (!strcmp(key, "windows") && !parse_u64(v, 1, 1000, &n)) {
		r->windows = n;
	} else if (!strcmp(key, "before_s") && !parse_u64(v, 0, 86400, &n)) {
		r->before_ns = n * NSEC_PER_SEC;
	} else if (!strcmp(key, "after_s") && !parse_u64(v, 0, 3600, &n)) {
		r->after_ns = n * NSEC_PER_SEC;
	} else if (!strcmp(key, "every_s") && !parse_u64(v, 0, 86400 * 7, &n)) {
		r->every_ns = n * NSEC_PER_SEC;
	} else {
		snprintf(why, size, "invalid %.20s '%.40s': want name, syscall, comm, p99_ms, requests_p99_ms, cpu_pct, slow_calls, windows, before_s, after_s or every_s with a number in range",
			 key, v);
		return -EINVAL;
	}
	if (kind >= 0) {
		if (*have_kind) {
			snprintf(why, size, "give one of p99_ms, requests_p99_ms, cpu_pct and slow_calls");
			return -EINVAL;
		}
		*have_kind = true;
		r->kind = kind;
	}
	return 0;
}

int trigger_rule_parse(const char *arg, struct trigger_rule *r, char *why, size_t size)
{
	char buf[sizeof(r->text)], *save = NULL, *item, *eq;
	bool have_kind = false;
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->windows = 1;
	r->before_ns = TRIGGER_DEFAULT_BEFORE_S * NSEC_PER_SEC;
	r->after_ns = TRIGGER_DEFAULT_AFTER_S * NSEC_PER_SEC;
	r->every_ns = TRIGGER_DEFAULT_EVERY_S * NSEC_PER_SEC;
	if (strlen(arg) >= sizeof(buf)) {
		snprintf(why, size, "longer than %zu characters", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(r->text, sizeof(r->text), "%s", arg);
	snprintf(buf, sizeof(buf), "%s", arg);
	for (item = strtok_r(buf, ",", &save); !err && item; item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		if (!eq) {
			snprintf(why, size, "'%.40s' is not KEY=VALUE", item);
			return -EINVAL;
		}
		*eq = 0;
		err = rule_key(r, item, eq + 1, &have_kind, why, size);
	}
	if (err)
		return err;
	if (!r->name[0] || !have_kind) {
		snprintf(why, size,
			 "a rule needs name= and one of p99_ms=, requests_p99_ms=, cpu_pct=, slow_calls=");
		return -EINVAL;
	}
	if (r->kind == TRIGGER_KIND_SYSCALL_P99 && !r->syscall[0]) {
		snprintf(why, size, "p99_ms needs syscall=NAME");
		return -EINVAL;
	}
	return 0;
}

/*
 * The firing second of @name, in ns, if it is a file of rule @rule:
 * "RULE-YYYYmmddTHHMMSSZ.pb.gz" or "RULE-YYYYmmddTHHMMSSZ-K.pb.gz" (file_name()).
 * 0: not one.
 */
static uint64_t file_fired_ns(const char *name, const char *rule)
{
	size_t n = strlen(rule);
	struct tm tm = { 0 };
	const char *stamp = name + n + 1, *rest;
	time_t sec;

	if (strncmp(name, rule, n) || name[n] != '-')
		return 0;
	rest = strptime(stamp, "%Y%m%dT%H%M%SZ", &tm);
	if (!rest || rest - stamp != 16)
		return 0;
	if (rest[0] == '-' && isdigit((unsigned char)rest[1]))
		for (rest++; isdigit((unsigned char)*rest); rest++)
			;
	if (strcmp(rest, TRIGGER_FILE_SUFFIX))
		return 0;
	sec = timegm(&tm);
	return sec > 0 ? (uint64_t)sec * NSEC_PER_SEC : 0;
}

static int file_cmp(const void *a, const void *b)
{
	const struct trigger_file *x = a, *y = b;

	if (x->fired_ns != y->fired_ns)
		return x->fired_ns < y->fired_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void file_remove_oldest(struct triggers *t);

/*
 * The files an earlier run of the agent saved in the directory for these
 * rules (by name): listed, served and counted in max_files as this run's
 * are, the oldest first removed, and each rule's every_s counts from its
 * last one, so an agent restarted in a loop cannot fill the disk either.
 * Other files are left alone. Their names say all that is read: reading 100
 * profiles would delay the start by seconds.
 */
static void files_adopt(struct triggers *t)
{
	struct trigger_file f;
	struct dirent *de;
	struct stat sb;
	uint64_t fired;
	size_t i, removed = 0;
	DIR *d = opendir(t->dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		fired = 0;
		for (i = 0; i < t->nr; i++) {
			fired = file_fired_ns(de->d_name, t->rules[i].r.name);
			if (fired)
				break;
		}
		if (!fired || strlen(de->d_name) >= sizeof(f.name) ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode) ||
		    array_grow(&t->files, t->files.nr + 1))
			continue;
		f = (struct trigger_file){ .fired_ns = fired, .bytes = sb.st_size, .earlier = true };
		snprintf(f.name, sizeof(f.name), "%s", de->d_name);
		t->files.items[t->files.nr++] = f;
		if (fired > t->rules[i].last_file_ns)
			t->rules[i].last_file_ns = fired;
	}
	closedir(d);
	if (!t->files.nr)
		return;
	qsort(t->files.items, t->files.nr, sizeof(*t->files.items), file_cmp);
	for (; t->max_files && t->files.nr > t->max_files; removed++)
		file_remove_oldest(t);
	pr_info("triggers: %zu files of an earlier run in %s kept%s", t->files.nr, t->dir,
		removed ? ", the oldest removed past --trigger-max-files" : "");
}

struct triggers *triggers_new(const struct trigger_rule *rules, size_t nr, const char *dir,
			      unsigned int max_files, struct history *h)
{
	struct triggers *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->rules = calloc(nr ? nr : 1, sizeof(*t->rules));
	t->dir = strdup(dir);
	if (!t->rules || !t->dir || (mkdir(dir, 0700) && errno != EEXIST)) {
		int err = t->rules && t->dir ? errno : ENOMEM;

		free(t->rules);
		free(t->dir);
		free(t);
		errno = err;
		return NULL;
	}
	for (i = 0; i < nr; i++)
		t->rules[i].r = rules[i];
	t->nr = nr;
	t->max_files = max_files;
	t->h = h;
	pthread_mutex_init(&t->lock, NULL);
	files_adopt(t);
	return t;
}

void triggers_free(struct triggers *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->files.items);
	free(t->rules);
	free(t->dir);
	free(t);
}

/* The calls of the window: now's cumulative less the last window's (a series reset: all). */
static uint64_t window_p99(struct trigger_state *s, const struct trigger_window *w)
{
	struct sys_stat cur, d;
	int j;

	if (!w->sys_total(w->arg, s->r.syscall, s->r.comm[0] ? s->r.comm : NULL, &cur))
		return 0;
	d = cur;
	if (s->have_prev && cur.count >= s->prev.count) {
		d.count = cur.count - s->prev.count;
		for (j = 0; j < SYS_HIST_SLOTS; j++) {
			d.hist[j] = cur.hist[j] >= s->prev.hist[j] ? cur.hist[j] - s->prev.hist[j] : 0;
			d.hist_ns[j] = cur.hist_ns[j] >= s->prev.hist_ns[j] ?
				       cur.hist_ns[j] - s->prev.hist_ns[j] : 0;
		}
	}
	s->prev = cur;
	s->have_prev = true;
	return d.count ? sys_stat_quantile_ns(&d, 0.99) : 0;
}

static bool sample_of(const struct profile_sample *smp, const char *comm)
{
	const struct profile_label *l;

	if (!*comm)
		return true;
	l = profile_sample_label(smp, PROFILE_LABEL_COMM);
	return l && l->str && !strcmp(l->str, comm);
}

/* CPU of the processes named comm (any: the busiest pid) in hundredths of a percent. */
static uint64_t window_cpu(const struct trigger_state *s, const struct trigger_window *w)
{
	int c = profile_type_index(w->p, PROFILE_TYPE_CPU);
	uint64_t ns = 0, dur = w->end_ns > w->start_ns ? w->end_ns - w->start_ns : 1;
	size_t i;

	for (i = 0; c >= 0 && i < w->p->samples.nr; i++)
		if (sample_of(&w->p->samples.items[i], s->r.comm))
			ns += w->p->samples.items[i].values[c];
	return ns * 10000 / dur;
}

/* The most slow calls of one stack (of syscall, when the rule names one). */
static uint64_t window_slow_calls(const struct trigger_state *s, const struct trigger_window *w)
{
	int c = profile_type_index(w->p, PROFILE_TYPE_SYSCALLS);
	const struct profile_sample *smp;
	const struct profile_label *l;
	uint64_t max = 0;
	size_t i;

	for (i = 0; c >= 0 && i < w->p->samples.nr; i++) {
		smp = &w->p->samples.items[i];
		if (!sample_of(smp, s->r.comm) || smp->values[c] <= 0)
			continue;
		l = profile_sample_label(smp, PROFILE_LABEL_SYSCALL);
		if (s->r.syscall[0] && (!l || !l->str || strcmp(l->str, s->r.syscall)))
			continue;
		if ((uint64_t)smp->values[c] > max)
			max = smp->values[c];
	}
	return max;
}

static uint64_t window_measure(struct trigger_state *s, const struct trigger_window *w)
{
	switch (s->r.kind) {
	case TRIGGER_KIND_SYSCALL_P99:
		return window_p99(s, w);
	case TRIGGER_KIND_REQUESTS_P99:	/* collect_cut_profile's, with --requests */
		return profile_get_meta_u64(w->p, "window.requests_p99_ns");
	case TRIGGER_KIND_CPU:
		return window_cpu(s, w);
	default:
		return window_slow_calls(s, w);
	}
}

/* The state of one rule after window @w; t->lock held. */
static void rule_window(struct trigger_state *s, const struct trigger_window *w)
{
	s->value = window_measure(s, w);
	if (s->value <= s->r.threshold) {
		s->over = 0;
		s->held = false;
		return;
	}
	if (!s->over++)
		s->first_over_ns = w->start_ns;
	if (s->held || s->over < s->r.windows)
		return;
	s->held = true;
	if (s->pending || (s->last_file_ns && w->end_ns < s->last_file_ns + s->r.every_ns)) {
		s->suppressed++;
		pr_info("trigger %s held again, within every_s: nothing saved", s->r.name);
		return;
	}
	s->firings++;
	s->pending = true;
	s->fired_ns = w->end_ns;
	s->fired_first_ns = s->first_over_ns;
	s->fired_value = s->value;
	s->save_ns = w->end_ns + s->r.after_ns;
	s->last_file_ns = w->end_ns;
	pr_info("trigger %s fired (%" PRIu64 " over %" PRIu64 "): saving in %.0f s", s->r.name,
		s->value, s->r.threshold, s->r.after_ns / 1e9);
}

static int store_meta(struct profile *p, const struct trigger_state *s)
{
	int err = profile_set_meta(p, "trigger.name", s->r.name);

	if (!err)
		err = profile_set_meta(p, "trigger.rule", s->r.text);
	if (!err)
		err = profile_set_meta_u64(p, "trigger.fired_ns", s->fired_ns);
	if (!err)
		err = profile_set_meta_u64(p, "trigger.first_over_ns", s->fired_first_ns);
	if (!err)
		err = profile_set_meta_u64(p, "trigger.value", s->fired_value);
	if (!err)
		err = profile_set_meta_u64(p, "trigger.threshold", s->r.threshold);
	return err;
}

/* "NAME-YYYYmmddTHHMMSSZ" of @s's firing into @f->name, a suffix when taken. */
static void file_name(struct triggers *t, const struct trigger_state *s, struct trigger_file *f)
{
	time_t sec = s->fired_ns / NSEC_PER_SEC;
	char stamp[20];
	struct tm tm;
	size_t i;
	int k = 0;

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (;;) {
		if (k)
			snprintf(f->name, sizeof(f->name), "%s-%.16s-%d" TRIGGER_FILE_SUFFIX, s->r.name,
				 stamp, k);
		else
			snprintf(f->name, sizeof(f->name), "%s-%.16s" TRIGGER_FILE_SUFFIX, s->r.name,
				 stamp);
		for (i = 0; i < t->files.nr && strcmp(t->files.items[i].name, f->name); i++)
			;
		if (i == t->files.nr)
			return;
		k++;
	}
}

static void file_remove_oldest(struct triggers *t)
{
	char *path;

	if (asprintf(&path, "%s/%s", t->dir, t->files.items[0].name) >= 0) {
		unlink(path);
		free(path);
	}
	memmove(t->files.items, t->files.items + 1, (t->files.nr - 1) * sizeof(*t->files.items));
	t->files.nr--;
}

/* Save the history around @s's firing; t->lock held. 0 or -errno. */
static int rule_save(struct triggers *t, struct trigger_state *s)
{
	struct trigger_file f = { .rule = s->r.text, .fired_ns = s->fired_ns };
	uint64_t start = s->fired_ns > s->r.before_ns ? s->fired_ns - s->r.before_ns : 0;
	struct profile *p = NULL;
	const char *why;
	struct stat sb;
	char *path = NULL;
	int err;

	s->pending = false;
	err = history_query(t->h, start, s->fired_ns + s->r.after_ns, NULL, &p, &why);
	if (!err)
		err = store_meta(p, s);
	file_name(t, s, &f);
	if (!err && asprintf(&path, "%s/%s", t->dir, f.name) < 0)
		err = -ENOMEM;
	if (!err)
		err = pprof_write_file(p, path);
	if (!err && !stat(path, &sb))
		f.bytes = sb.st_size;
	if (!err) {
		f.start_ns = p->time_ns;
		f.end_ns = p->time_ns + p->duration_ns;
		if (t->max_files && t->files.nr >= t->max_files)
			file_remove_oldest(t);
		err = array_grow(&t->files, t->files.nr + 1);
	}
	if (!err) {
		t->files.items[t->files.nr++] = f;
		pr_info("trigger %s: saved %s", s->r.name, path);
	} else {
		pr_warn("trigger %s: cannot save %s: %s", s->r.name, f.name, strerror(-err));
	}
	profile_free(p);
	free(path);
	return err;
}

void triggers_window(struct triggers *t, const struct trigger_window *w)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr; i++) {
		rule_window(&t->rules[i], w);
		if (t->rules[i].pending && w->end_ns >= t->rules[i].save_ns)
			rule_save(t, &t->rules[i]);
	}
	pthread_mutex_unlock(&t->lock);
}

/* @s as a JSON string: names and rules are ASCII without quotes, but say so anyway. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

int triggers_write_list(struct triggers *t, FILE *out)
{
	const struct trigger_file *f;
	size_t i;

	pthread_mutex_lock(&t->lock);
	fputs("[", out);
	for (i = 0; i < t->files.nr; i++) {
		f = &t->files.items[i];
		fputs(i ? ",\n {\"name\": " : "\n {\"name\": ", out);
		json_str(out, f->name);
		fputs(", \"rule\": ", out);
		if (f->earlier) {
			fprintf(out, "null, \"fired_ns\": %" PRIu64 ", \"start_ns\": null"
				", \"end_ns\": null, \"bytes\": %" PRIu64 ", \"earlier_run\": true}",
				f->fired_ns, f->bytes);
			continue;
		}
		json_str(out, f->rule);
		fprintf(out, ", \"fired_ns\": %" PRIu64 ", \"start_ns\": %" PRIu64
			", \"end_ns\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"earlier_run\": false}",
			f->fired_ns, f->start_ns, f->end_ns, f->bytes);
	}
	fputs(t->files.nr ? "\n]\n" : "]\n", out);
	pthread_mutex_unlock(&t->lock);
	return ferror(out) ? -EIO : 0;
}

int triggers_read(struct triggers *t, const char *name, char **buf, size_t *len)
{
	char *path = NULL;
	size_t i;
	int err = -ENOENT;

	*buf = NULL;
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->files.nr; i++)
		if (!strcmp(t->files.items[i].name, name))
			break;
	if (i < t->files.nr)
		err = asprintf(&path, "%s/%s", t->dir, name) < 0 ? -ENOMEM : 0;
	pthread_mutex_unlock(&t->lock);
	if (!err)
		err = read_file(path, buf, len);
	free(path);
	return err;
}

size_t triggers_get_counts(struct triggers *t, const char **names, uint64_t *firings,
			   uint64_t *suppressed, size_t n)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr && i < n; i++) {
		names[i] = t->rules[i].r.name;
		firings[i] = t->rules[i].firings;
		suppressed[i] = t->rules[i].suppressed;
	}
	pthread_mutex_unlock(&t->lock);
	return i;
}
