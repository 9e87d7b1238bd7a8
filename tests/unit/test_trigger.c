// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's triggers (src/trigger.h) on made-up windows: rules parsed and
 * refused; a p99 rule fires once per episode (K windows in a row, again
 * only after a window under), saving the history around it with the rule
 * in the file's metadata; every_s suppresses; --trigger-max-files keeps the
 * newest files; a CPU rule and a slow-calls rule measure their windows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "src/pprof.h"
#include "src/trigger.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

#define SEC NSEC_PER_SEC
#define T0 (1700000000ULL * SEC)

static void test_parse(void)
{
	struct trigger_rule r;
	char why[200];

	CHECK(trigger_rule_parse("name=a,syscall=read,p99_ms=50,windows=3,after_s=0", &r, why,
				 sizeof(why)) == 0);
	CHECK(r.kind == TRIGGER_KIND_SYSCALL_P99 && r.threshold == 50000000 && r.windows == 3);
	CHECK(r.after_ns == 0 && r.before_ns == 60 * SEC && r.every_ns == 300 * SEC);
	CHECK_STR(r.syscall, "read");
	CHECK(trigger_rule_parse("name=q,requests_p99_ms=250", &r, why, sizeof(why)) == 0);
	CHECK(r.kind == TRIGGER_KIND_REQUESTS_P99 && r.threshold == 250000000);
	CHECK(trigger_rule_parse("name=b,cpu_pct=80,comm=nginx", &r, why, sizeof(why)) == 0);
	CHECK(r.kind == TRIGGER_KIND_CPU && r.threshold == 8000);
	CHECK_STR(r.comm, "nginx");
	CHECK(trigger_rule_parse("syscall=read,p99_ms=5", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=x,p99_ms=5", &r, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "syscall") != NULL);
	CHECK(trigger_rule_parse("name=x,syscall=nosuch,p99_ms=5", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=x,cpu_pct=5,slow_calls=2", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=../x,cpu_pct=5", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=x,cpu_pct=5,bogus=1", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=x,cpu_pct", &r, why, sizeof(why)) == -EINVAL);
	CHECK(trigger_rule_parse("name=x,windows=0,cpu_pct=5", &r, why, sizeof(why)) == -EINVAL);
}

/* The fake metrics: cumulative calls of 1 us and of 50 ms so far. */
struct fake_sys {
	uint64_t fast, slow;
};

static bool fake_total(void *arg, const char *syscall, const char *comm, struct sys_stat *out)
{
	const struct fake_sys *f = arg;

	(void)comm;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", syscall);
	out->hist[1] = f->fast;
	out->hist[16] = f->slow;	/* [32.8, 65.5) ms */
	out->count = f->fast + f->slow;
	return true;
}

/* A window [T0 + i s, T0 + i + 1 s): @cpu_ms of CPU and @slow calls on one stack. */
static struct profile *window(int i, int64_t cpu_ms, int64_t slow)
{
	struct profile *p = profile_new();
	struct profile_label l[] = { { .key = "pid", .num = 7 }, { .key = "comm", .str = "app" },
				     { .key = "syscall", .str = "read" } };
	int64_t v[3] = { cpu_ms * 1000000, slow, slow * 50000000 };
	uint64_t loc;
	struct profile_line line = { .function_id = profile_function_id(p, "f", NULL, "", 0) };

	profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
	profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
	profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
	loc = profile_add_location(p, 0, 0x10, &line, 1);
	profile_add_sample(p, &loc, 1, v, l, 3);
	p->time_ns = T0 + i * SEC;
	p->duration_ns = SEC;
	return p;
}

/* Window @i into @h and past @t; @slow_share of 1000 calls at 50 ms. */
static void step(struct triggers *t, struct history *h, struct fake_sys *f, int i,
		 int slow_share, int64_t cpu_ms, int64_t slow_calls)
{
	struct profile *p = window(i, cpu_ms, slow_calls);
	struct trigger_window w = {
		.start_ns = p->time_ns, .end_ns = p->time_ns + SEC, .p = p,
		.sys_total = fake_total, .arg = f,
	};

	f->slow += slow_share;
	f->fast += 1000 - slow_share;
	CHECK(history_add(h, p, w.end_ns) == 0);
	triggers_window(t, &w);
	profile_free(p);
}

/* Window @i whose requests' p99 is @p99_ns (window.requests_p99_ns). */
static void step_meta(struct triggers *t, struct history *h, struct fake_sys *f, int i,
		      uint64_t p99_ns)
{
	struct profile *p = window(i, 0, 0);
	struct trigger_window w = {
		.start_ns = p->time_ns, .end_ns = p->time_ns + SEC, .p = p,
		.sys_total = fake_total, .arg = f,
	};

	CHECK(profile_set_meta_u64(p, "window.requests_p99_ns", p99_ns) == 0);
	CHECK(history_add(h, p, w.end_ns) == 0);
	triggers_window(t, &w);
	profile_free(p);
}

static size_t count(struct triggers *t, uint64_t *firings, uint64_t *suppressed)
{
	const char *names[4];

	return triggers_get_counts(t, names, firings, suppressed, 4);
}

static void test_p99(const char *dir)
{
	struct history_opts ho = { .keep_ns = 600 * SEC, .max_bytes = 1 << 20 };
	struct history *h = history_new(&ho);
	struct trigger_rule r[2];
	struct fake_sys f = { 0 };
	struct triggers *t;
	uint64_t firings[4], suppressed[4];
	char why[200], *buf = NULL, *list = NULL, path[600];
	size_t len, list_len;
	struct profile *p = NULL;
	FILE *out;
	int i;

	CHECK(trigger_rule_parse("name=lat,syscall=read,p99_ms=20,windows=2,before_s=3,after_s=2,every_s=0",
				 &r[0], why, sizeof(why)) == 0);
	CHECK(trigger_rule_parse("name=rare,syscall=read,p99_ms=20,after_s=0,every_s=100",
				 &r[1], why, sizeof(why)) == 0);
	t = triggers_new(r, 2, dir, 3, h);
	CHECK(t != NULL);
	if (!t)
		return;
	/* quiet 0-4, spike 5-7 (one window over alone at 2: K=2 ignores it), quiet 8-11 */
	for (i = 0; i < 12; i++)
		step(t, h, &f, i, (i >= 5 && i <= 7) || i == 2 ? 50 : 0, 0, 0);
	count(t, firings, suppressed);
	CHECK(firings[0] == 1 && suppressed[0] == 0);
	/* K=1: the lone window fires, the spike 3 s later is within every_s */
	CHECK(firings[1] == 1 && suppressed[1] == 1);
	out = open_memstream(&list, &list_len);
	CHECK(triggers_write_list(t, out) == 0);
	fclose(out);
	CHECK(strstr(list, "\"name\": \"lat-20231114T221327Z.pb.gz\"") != NULL);
	CHECK(triggers_read(t, "lat-20231114T221327Z.pb.gz", &buf, &len) == 0);
	{
		char *other = NULL;

		CHECK(triggers_read(t, "../x", &other, &len) == -ENOENT && !other);
	}
	snprintf(path, sizeof(path), "%s/lat-20231114T221327Z.pb.gz", dir);
	p = profile_load(path);
	CHECK(p != NULL);
	if (p) {
		/* fired at the end of window 6 (T0 + 7 s): [4 s, 9 s) saved */
		CHECK(p->time_ns == (int64_t)(T0 + 4 * SEC));
		CHECK(p->duration_ns == (int64_t)(5 * SEC));
		CHECK_STR(profile_get_meta(p, "trigger.name"), "lat");
		CHECK(profile_get_meta_u64(p, "trigger.first_over_ns") == T0 + 5 * SEC);
		CHECK(profile_get_meta_u64(p, "trigger.fired_ns") == T0 + 7 * SEC);
		CHECK(profile_get_meta_u64(p, "trigger.threshold") == 20000000);
	}
	profile_free(p);
	free(buf);
	free(list);
	/* three more episodes: rare is within every_s (suppressed), lat saves, 3 files kept */
	for (i = 12; i < 32; i++)
		step(t, h, &f, i, (i % 6) >= 3 ? 50 : 0, 0, 0);
	count(t, firings, suppressed);
	CHECK(firings[1] == 1 && suppressed[1] == 4);
	CHECK(firings[0] == 4);
	out = open_memstream(&list, &list_len);
	CHECK(triggers_write_list(t, out) == 0);
	fclose(out);
	CHECK(strstr(list, "lat-20231114T221327Z") == NULL);	/* the oldest went */
	free(list);
	CHECK(access(path, F_OK) != 0);
	triggers_free(t);
	history_free(h);
}

static void test_cpu_and_calls(const char *dir)
{
	struct history_opts ho = { .keep_ns = 600 * SEC, .max_bytes = 1 << 20 };
	struct history *h = history_new(&ho);
	struct trigger_rule r[2];
	struct fake_sys f = { 0 };
	uint64_t firings[4], suppressed[4];
	struct triggers *t;
	char why[200];

	CHECK(trigger_rule_parse("name=hot,cpu_pct=50,comm=app,after_s=0", &r[0], why,
				 sizeof(why)) == 0);
	CHECK(trigger_rule_parse("name=burst,slow_calls=10,syscall=read,after_s=0", &r[1], why,
				 sizeof(why)) == 0);
	t = triggers_new(r, 2, dir, 100, h);
	step(t, h, &f, 100, 0, 400, 9);		/* 40%, 9 calls: neither */
	step(t, h, &f, 101, 0, 600, 10);	/* 60%, but 10 calls is not over 10 */
	step(t, h, &f, 102, 0, 100, 11);
	count(t, firings, suppressed);
	CHECK(firings[0] == 1 && firings[1] == 1);
	triggers_free(t);

	/* the requests' p99 of a window: collect_cut_profile's window.requests_p99_ns */
	CHECK(trigger_rule_parse("name=req,requests_p99_ms=100,after_s=0", &r[0], why,
				 sizeof(why)) == 0);
	t = triggers_new(r, 1, dir, 100, h);
	step_meta(t, h, &f, 110, 40000000);
	step_meta(t, h, &f, 111, 0);		/* no request ended */
	step_meta(t, h, &f, 112, 150000000);
	count(t, firings, suppressed);
	CHECK(firings[0] == 1);
	triggers_free(t);
	history_free(h);
}

/* @dir/@name, holding @text. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool exists(const char *dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/*
 * A restarted agent takes up its earlier run's files by name: listed (rule
 * and range unknown), served, counted in max_files (the oldest removed at
 * once), and every_s counts from the last; other files are left alone.
 * T0 is 2023-11-14T22:13:20Z.
 */
static void test_restart(const char *parent)
{
	struct history_opts ho = { .keep_ns = 600 * SEC, .max_bytes = 1 << 20 };
	struct history *h = history_new(&ho);
	static const char *const others[] = {
		"lat-x-20231114T221321Z.pb.gz",		/* rule lat-x's */
		"latency-20231114T221321Z.pb.gz",
		"lat-20231114T221323Z.pb.gz.tmp.Ab12Cd",	/* a write cut short */
		"lat-2023111T221323Z.pb.gz",
		"lat-20231114T221324Z-.pb.gz",
		"lat-20231114T221324Z.pb.gz.bak",
		"notes.txt",
	};
	struct trigger_rule r;
	struct fake_sys f = { 0 };
	uint64_t firings[4], suppressed[4];
	struct triggers *t;
	char why[200], dir[520], *list = NULL, *buf = NULL;
	size_t i, len, list_len;
	FILE *out;

	snprintf(dir, sizeof(dir), "%s/restart", parent);
	CHECK(mkdir(dir, 0700) == 0);
	put_file(dir, "lat-20231114T221320Z.pb.gz", "oldest");
	put_file(dir, "lat-20231114T221325Z-1.pb.gz", "newest");
	put_file(dir, "lat-20231114T221322Z.pb.gz", "middle");
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		put_file(dir, others[i], "other");
	CHECK(mkdir(strcat(strcpy(why, dir), "/lat-20231114T221326Z.pb.gz"), 0700) == 0);

	CHECK(trigger_rule_parse("name=lat,syscall=read,p99_ms=20,after_s=0,before_s=5,every_s=100",
				 &r, why, sizeof(why)) == 0);
	t = triggers_new(&r, 1, dir, 2, h);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(!exists(dir, "lat-20231114T221320Z.pb.gz"));	/* past max_files 2 */
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		CHECK(exists(dir, others[i]));
	out = open_memstream(&list, &list_len);
	CHECK(triggers_write_list(t, out) == 0);
	fclose(out);
	CHECK_STR(list, "[\n"
		  " {\"name\": \"lat-20231114T221322Z.pb.gz\", \"rule\": null, \"fired_ns\": 1700000002000000000, \"start_ns\": null, \"end_ns\": null, \"bytes\": 6, \"earlier_run\": true},\n"
		  " {\"name\": \"lat-20231114T221325Z-1.pb.gz\", \"rule\": null, \"fired_ns\": 1700000005000000000, \"start_ns\": null, \"end_ns\": null, \"bytes\": 6, \"earlier_run\": true}\n"
		  "]\n");
	free(list);
	CHECK(triggers_read(t, "lat-20231114T221325Z-1.pb.gz", &buf, &len) == 0);
	CHECK(buf && len == 6 && !memcmp(buf, "newest", 6));
	free(buf);
	CHECK(triggers_read(t, "latency-20231114T221321Z.pb.gz", &buf, &len) == -ENOENT);

	/* a spike 5 s after the last file is within every_s; one 200 s after saves */
	step(t, h, &f, 10, 50, 0, 0);
	count(t, firings, suppressed);
	CHECK(firings[0] == 0 && suppressed[0] == 1);
	step(t, h, &f, 150, 0, 0, 0);
	step(t, h, &f, 200, 50, 0, 0);
	count(t, firings, suppressed);
	CHECK(firings[0] == 1);
	CHECK(exists(dir, "lat-20231114T221641Z.pb.gz"));
	CHECK(!exists(dir, "lat-20231114T221322Z.pb.gz"));	/* the cap: the oldest went */
	CHECK(exists(dir, "lat-20231114T221325Z-1.pb.gz"));
	out = open_memstream(&list, &list_len);
	CHECK(triggers_write_list(t, out) == 0);
	fclose(out);
	CHECK(strstr(list, "\"name\": \"lat-20231114T221641Z.pb.gz\", \"rule\": \"name=lat,") != NULL);
	CHECK(strstr(list, "\"earlier_run\": false}") != NULL);
	free(list);
	triggers_free(t);
	history_free(h);
}

int main(void)
{
	char dir[] = "/tmp/latprof-trigger-XXXXXX", cmd[64];

	test_parse();
	CHECK(mkdtemp(dir) != NULL);
	test_p99(dir);
	test_cpu_and_calls(dir);
	test_restart(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_exit();
}
