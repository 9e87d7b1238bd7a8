// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof report`: a hotspot report for an 80-column terminal: recording
 * metadata, totals and losses, top functions by self and total weight, and the
 * heaviest stacks. Colour only on a terminal, never with NO_COLOR.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flamegraph/flame.h"
#include "src/hashmap.h"
#include "src/loadprof.h"
#include "src/report.h"
#include "src/stacks.h"
#include "src/util.h"
#include "src/verbs.h"


struct func_stat {
	const char *name;	/* interned: the key */
	uint64_t self, total;
	size_t last_sample;	/* counts a recursive function once per sample */
};

struct func_table {
	struct func_stat *items;
	size_t nr, alloc;
	struct hashmap idx;	/* name -> index + 1 */
};

static const char report_usage[] =
	"usage: latprof report [FILE] [OPTIONS]\n"
	"\n"
	"Hotspot report of a profile (default latprof.pb.gz).\n"
	"\n"
	"  -w, --weight W       cpu (samples), cpu-time, latency, syscalls, offcpu, wall\n"
	"                       (default: cpu, or latency without CPU samples)\n"
	"  -n, --top N          functions to list (default 15)\n"
	"      --stacks N       heaviest stacks to show (default 5)\n"
	"      --slowest N      slowest requests to show (default 5; record --requests)\n"
	"      --no-color       no colour even on a terminal (NO_COLOR is honoured)\n"
	"  -h, --help           this help\n";

const char *bold(const struct report_opts *o)
{
	return o->color ? "\033[1m" : "";
}

const char *reset(const struct report_opts *o)
{
	return o->color ? "\033[0m" : "";
}

void format_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 10 * NSEC_PER_SEC)
		snprintf(buf, size, "%.1fs", ns / 1e9);
	else if (ns >= NSEC_PER_SEC)
		snprintf(buf, size, "%.2fs", ns / 1e9);
	else if (ns >= 10000000)
		snprintf(buf, size, "%.0fms", ns / 1e6);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else if (ns >= 10000)
		snprintf(buf, size, "%.0fus", ns / 1e3);
	else if (ns >= 1000)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 "ns", ns);
}

static struct func_stat *func_get(struct func_table *t, const char *name)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&t->idx, name, 0, 0));

	if (i)
		return &t->items[i - 1];
	if (array_grow(t, t->nr + 1) || hashmap_put(&t->idx, name, 0, 0, HASHMAP_NUM(t->nr + 1)))
		return NULL;
	t->items[t->nr] = (struct func_stat){ .name = name, .last_sample = SIZE_MAX };
	return &t->items[t->nr++];
}

static int count_functions(const struct profile *p, const struct profile_weight *wt,
			   struct strtab *names, struct func_table *t)
{
	struct stack_names st = { 0 };
	struct func_stat *fs;
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		int64_t w = profile_weight_of(wt, s);

		if (w <= 0)
			continue;
		err = stack_names_of(p, s, STACKS_FLAG_NO_COMM | wt->stack_flags, names, &st);
		for (j = 0; !err && j < st.nr; j++) {
			fs = func_get(t, st.items[j]);
			if (!fs) {
				err = -ENOMEM;
				break;
			}
			if (fs->last_sample != i)
				fs->total += w;
			fs->last_sample = i;
			if (j == st.nr - 1)
				fs->self += w;
		}
	}
	free(st.items);
	return err;
}

static int cmp_self(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * part / total : 0.0;
}

/* A weight as the table shows it: a count, or a duration for nanoseconds. */
static void weight_str(const struct report_opts *o, uint64_t v, char *buf, size_t size)
{
	if (!strcmp(o->weight_unit, "nanoseconds"))
		format_ns(buf, size, v);
	else
		snprintf(buf, size, "%" PRIu64, v);
}

static void print_functions(const struct report_opts *o, struct func_table *t, uint64_t total)
{
	char self[32], tot[32];
	size_t i, n = t->nr;

	/* sorting moves the stats: the name index is of no use afterwards */
	array_sort(t->items, n, sizeof(*t->items), cmp_self);
	printf("\n%sTop functions by self %s%s\n", bold(o), o->weight, reset(o));
	printf("  %7s %8s %7s %8s  %s\n", "self%", "self", "total%", "total", "function");
	for (i = 0; i < n && i < o->top; i++) {
		const struct func_stat *s = &t->items[i];

		if (!s->self)
			break;
		weight_str(o, s->self, self, sizeof(self));
		weight_str(o, s->total, tot, sizeof(tot));
		printf("  %6.2f%% %8s %6.2f%% %8s  %.40s\n", pct(s->self, total), self,
		       pct(s->total, total), tot, s->name);
	}
}

static int cmp_stack_weight(const void *a, const void *b)
{
	const struct flame_stack *x = *(const struct flame_stack *const *)a;
	const struct flame_stack *y = *(const struct flame_stack *const *)b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

static int print_stacks(const struct report_opts *o, const struct profile *p,
			const struct profile_weight *w)
{
	char wbuf[32];
	struct flame *f = flame_new();
	const struct flame_stack *st, **order = NULL;
	size_t i, j, n;
	int err = f ? stacks_to_flame(p, w, STACKS_FLAG_PER_PID, f) : -ENOMEM;

	if (err)
		goto out;
	n = flame_nr_stacks(f);
	st = flame_stacks(f);
	order = calloc(n ? n : 1, sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		order[i] = &st[i];
	array_sort(order, n, sizeof(*order), cmp_stack_weight);
	printf("\n%sTop stacks (leaf first)%s\n", bold(o), reset(o));
	for (i = 0; i < n && i < o->stacks; i++) {
		weight_str(o, order[i]->weight, wbuf, sizeof(wbuf));
		printf("  #%zu %6.2f%% %8s  %.50s\n", i + 1, pct(order[i]->weight, flame_total(f)), wbuf,
		       order[i]->frames[0]);
		for (j = order[i]->nr_frames; j-- > 1;) {
			if (order[i]->nr_frames - j > 12) {
				printf("        ... %zu more\n", j);
				break;
			}
			printf("        %.70s\n", order[i]->frames[j]);
		}
	}
out:
	free(order);
	flame_free(f);
	return err;
}

static void print_header(const struct report_opts *o, const struct profile *p, const char *path,
			 uint64_t total)
{
	const char *cmd = profile_get_meta(p, "command_line");
	const char *exit_status = profile_get_meta(p, "exit_status");
	time_t t = p->time_ns / NSEC_PER_SEC;
	char when[64] = "", freq[32] = "";

	if (p->time_ns)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	printf("%slatprof report: %s%s\n", bold(o), path, reset(o));
	if (cmd)
		printf("  command    %.66s\n", cmd);
	if (profile_type_index(p, PROFILE_TYPE_SAMPLES) >= 0)
		snprintf(freq, sizeof(freq), " at %" PRIu64 " Hz", profile_get_meta_u64(p, "freq_hz"));
	printf("  recorded   %s, %.2f s%s (%s stacks), kernel %s\n", when, p->duration_ns / 1e9,
	       freq, profile_get_meta(p, "unwind") ? profile_get_meta(p, "unwind") : "?",
	       profile_get_meta(p, "kernel") ? profile_get_meta(p, "kernel") : "?");
	if (exit_status)
		printf("  exit       command exited with status %s\n", exit_status);
	if (profile_get_meta(p, "mode"))
		printf("  collectors %s\n", profile_get_meta(p, "mode"));
	printf("  total      %" PRIu64 " %s", total, o->weight);
	if (p->period > 0 && !strcmp(o->weight, "cpu"))
		printf(" = %.3f s on CPU", total * (double)p->period / 1e9);
	else if (!strcmp(o->weight_unit, "nanoseconds"))
		printf(" ns = %.3f s", total / 1e9);
	printf(", %" PRIu64 " processes\n", profile_get_meta_u64(p, "count.processes"));
}

static uint64_t proc_meta(const struct profile *p, const char *pid, const char *name)
{
	char key[96];

	snprintf(key, sizeof(key), "proc.%s.%s", pid, name);
	return profile_get_meta_u64(p, key);
}

/* Per process: how its user stacks were unwound and how many were complete. */
static void print_stack_quality(const struct report_opts *o, const struct profile *p)
{
	char pid[32], key[96];
	size_t i;

	printf("\n%sStacks%s (user stack unwinding per process)\n", bold(o), reset(o));
	for (i = 0; i < p->meta.nr; i++) {
		const char *k = p->meta.items[i].key, *mode = p->meta.items[i].value, *comm;
		uint64_t complete, copy, depth, noinfo, bad;

		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".unwind") ||
		    strlen(k) - 12 >= sizeof(pid))
			continue;
		snprintf(pid, sizeof(pid), "%.*s", (int)(strlen(k) - 12), k + 5);
		snprintf(key, sizeof(key), "proc.%s.comm", pid);
		comm = profile_get_meta(p, key);
		complete = proc_meta(p, pid, "stacks_complete");
		copy = proc_meta(p, pid, "truncated_copy");
		depth = proc_meta(p, pid, "truncated_depth");
		noinfo = proc_meta(p, pid, "truncated_no_unwind_info");
		bad = proc_meta(p, pid, "truncated_bad_read");
		if (strcmp(mode, "dwarf")) {
			printf("  %7s %-15s %-6s complete -  truncated -\n", pid, comm ? comm : "",
			       mode);
			continue;
		}
		if (!complete && !copy && !depth && !noinfo && !bad)
			continue;	/* an image that was never sampled */
		printf("  %7s %-15s %-6s complete %" PRIu64 "  truncated %" PRIu64 "\n"
		       "  %31s(copy %" PRIu64 ", depth %" PRIu64 ", no-unwind-info %" PRIu64
		       ", bad-read %" PRIu64 ")\n", pid, comm ? comm : "", mode, complete,
		       copy + depth + noinfo + bad, "", copy, depth, noinfo, bad);
	}
}

/* Per Python process: its interpreter, and how its frame walks ended, or why none was made. */
static void print_python(const struct report_opts *o, const struct profile *p)
{
	char pid[32];
	size_t i;

	if (!profile_get_meta(p, "python.processes"))
		return;
	printf("\n%sPython%s (interpreter frames replaced by Python functions)\n", bold(o),
	       reset(o));
	for (i = 0; i < p->meta.nr; i++) {
		const char *k = p->meta.items[i].key, *v = p->meta.items[i].value;

		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".python") ||
		    strlen(k) - 12 >= sizeof(pid))
			continue;
		snprintf(pid, sizeof(pid), "%.*s", (int)(strlen(k) - 12), k + 5);
		if (!strncmp(v, "unsupported: ", 13)) {
			printf("  %7s %s\n  %7s C frames kept: %" PRIu64 " stacks without Python"
			       " frames\n", pid, v, "",
			       proc_meta(p, pid, "python_samples_without_frames"));
			continue;
		}
		printf("  %7s Python %s\n  %7s stacks walked %" PRIu64 ", taken before it was found %"
		       PRIu64 ", truncated %" PRIu64 "\n  %7s thread not found %" PRIu64
		       ", unreadable %" PRIu64 ", unnamed frames %" PRIu64 "\n", pid, v, "",
		       proc_meta(p, pid, "python_walk_ok"),
		       proc_meta(p, pid, "python_walk_before_found"),
		       proc_meta(p, pid, "python_walk_truncated"), "",
		       proc_meta(p, pid, "python_walk_no_thread"),
		       proc_meta(p, pid, "python_walk_read_failed"),
		       proc_meta(p, pid, "python_frames_unnamed"));
	}
}

static void print_losses(const struct report_opts *o, const struct profile *p)
{
	const char *unread = profile_get_meta(p, "stats_unreadable"), *k;
	char label[64];
	size_t i;
	int n = 0;

	printf("\n%sLost and dropped%s\n", bold(o), reset(o));
	for (i = 0; i < p->meta.nr; i++) {
		uint64_t v;

		if (strncmp(p->meta.items[i].key, "lost.", 5))
			continue;
		v = profile_get_meta_u64(p, p->meta.items[i].key);
		if (!v)
			continue;
		printf("  %-34s %10" PRIu64 "\n", p->meta.items[i].key + 5, v);
		n++;
	}
	/* which processes mapped the files libdwfl refused */
	for (i = 0; i < p->meta.nr; i++) {
		k = p->meta.items[i].key;
		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".modules_refused"))
			continue;
		snprintf(label, sizeof(label), "modules_refused, pid %.*s",
			 (int)(strlen(k) - 21), k + 5);
		printf("  %-34s %10" PRIu64 "\n", label, profile_get_meta_u64(p, k));
	}
	if (unread)
		printf("  unknown: these counters could not be read from the kernel (0 = not known)"
		       "\n    %s\n", unread);
	if (n)
		printf("  the result is partial: the events counted above are missing from it\n");
	else if (!unread)
		printf("  none: every sample was recorded with its stacks\n");
}

int report_profile(struct report_opts *o, const struct profile *p, const char *path)
{
	struct func_table t = { 0 };
	struct strtab *names;
	struct profile_weight w;
	uint64_t total = 0;
	size_t i;
	int err;

	/* a recording without CPU samples is weighed by what it has */
	if (!o->weight)
		o->weight = profile_type_index(p, PROFILE_TYPE_SAMPLES) >= 0 || p->types.nr == 1 ?
			"cpu" : profile_type_index(p, PROFILE_TYPE_LATENCY) >= 0 ? "latency" :
			"offcpu";
	if (profile_weight_get(p, o->weight, &w))
		return -EINVAL;
	o->weight_unit = w.unit;
	names = strtab_new();
	if (!names)
		return -ENOMEM;
	for (i = 0; i < p->samples.nr; i++)
		total += profile_weight_of(&w, &p->samples.items[i]);
	print_header(o, p, path, total);
	err = report_time_breakdown(o, p);
	if (!err)
		err = report_syscalls(o, p);
	if (!err)
		err = report_slow_sites(o, p);
	if (!err)
		err = report_processes(o, p);
	if (!err)
		err = report_timeline(o, p);
	if (!err)
		err = report_requests(o, p);
	if (!err)
		err = report_io(o, p);
	if (!err)
		err = count_functions(p, &w, names, &t);
	if (!err) {
		print_functions(o, &t, total);
		err = print_stacks(o, p, &w);
	}
	if (!err) {
		print_stack_quality(o, p);
		print_python(o, p);
		print_losses(o, p);
	}
	free(t.items);
	hashmap_release(&t.idx);
	strtab_free(names);
	return err;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "weight", required_argument, NULL, 'w' },
		{ "top", required_argument, NULL, 'n' },
		{ "stacks", required_argument, NULL, 's' },
		{ "slowest", required_argument, NULL, 'S' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts o = { .top = 15, .stacks = 5, .slowest = 5 };
	const char *path;
	struct profile *p;
	uint64_t v;
	int c, err;

	o.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			o.weight = optarg;
			break;
		case 'n':
		case 's':
		case 'S':
			if (parse_u64(optarg, 0, 100000, &v)) {
				pr_err("invalid count '%s'", optarg);
				return EXIT_STATUS_USAGE;
			}
			*(c == 'n' ? &o.top : c == 's' ? &o.stacks : &o.slowest) = v;
			break;
		case 'C':
			o.color = false;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("report", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (argc - optind > 1) {
		pr_err("too many arguments (one profile at a time)");
		return EXIT_STATUS_USAGE;
	}
	path = optind < argc ? argv[optind] : "latprof.pb.gz";
	p = profile_load(path);
	if (!p)
		return EXIT_STATUS_USAGE;
	err = report_profile(&o, p, path);
	profile_free(p);
	if (err == -EINVAL)
		return EXIT_STATUS_USAGE;
	if (err)
		pr_err("cannot report: %s", strerror(-err));
	return err ? EXIT_STATUS_FAILURE : EXIT_STATUS_OK;
}
