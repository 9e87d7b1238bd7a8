// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/export*: formats found by name and extension; the pprof export keeps
 * only its weight's columns and samples and re-reads; speedscope frames are
 * shared, named as folded names them, escaped, and weights add up; the
 * Prometheus histogram is cumulative with escaped label values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/export_formats.h"
#include "src/export_pprof.h"
#include "src/weight.h"
#include "src/pprof.h"
#include "src/sysstats.h"
#include "tests/unit/check.h"

/* Two processes: "a\"pp" (pid 42, cpu + a slow read), "db" (pid 7, cpu only). */
static struct profile *two_procs(void)
{
	struct profile *p = profile_new();
	struct profile_mapping exe = { .start = 0x400000, .limit = 0x500000, .file = "/bin/app" };
	struct profile_label app[] = { { .key = "pid", .num = 42 }, { .key = "comm", .str = "a\"pp" },
				       { .key = "syscall", .str = "read" } };
	struct profile_label db[] = { { .key = "pid", .num = 7 }, { .key = "comm", .str = "db" } };
	uint64_t m, f_main, f_q, l_main, l_q, stack[2];
	int64_t cpu[4] = { 3, 30, 0, 0 }, lat[4] = { 0, 0, 1, 5000 }, none[4] = { 0 };

	profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
	profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
	profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
	profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
	m = profile_add_mapping(p, &exe);
	f_main = profile_function_id(p, "main", NULL, "app.c", 0);
	f_q = profile_function_id(p, "quote\"\\fn", NULL, "q.c", 0);
	l_main = profile_add_location(p, m, 0x401000, &(struct profile_line){ f_main, 12 }, 1);
	l_q = profile_add_location(p, m, 0x402000, &(struct profile_line){ f_q, 7 }, 1);
	stack[0] = l_q;
	stack[1] = l_main;
	profile_add_sample(p, stack, 2, cpu, app, 2);
	profile_add_sample(p, stack, 2, lat, app, 3);
	profile_add_sample(p, stack, 2, none, app, 2);	/* weighs nothing */
	profile_add_sample(p, &l_main, 1, cpu, db, 2);
	profile_set_meta(p, "proc.42.comm", "a\"pp");
	profile_set_meta(p, "lost.events_lost", "2");
	return p;
}

static char *capture(int format, const struct profile *p, const char *weight)
{
	struct profile_weight w;
	struct export_opts o = { .top = 3 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (weight) {
		CHECK(profile_weight_get(p, weight, &w) == 0);
		o.w = &w;
	}
	CHECK(export_write(f, format, p, &o) == 0);
	fclose(f);
	return buf;
}

static void test_lookup(void)
{
	CHECK(export_format_find("speedscope") == EXPORT_FORMAT_SPEEDSCOPE);
	CHECK(export_format_find("prometheus") == EXPORT_FORMAT_PROMETHEUS);
	CHECK(export_format_find("svg") == EXPORT_FORMAT_SVG);
	CHECK(export_format_find("bogus") == -ENOENT);
	CHECK(export_format_for_path("x/flame.folded") == EXPORT_FORMAT_FOLDED);
	CHECK(export_format_for_path("p.speedscope.json") == EXPORT_FORMAT_SPEEDSCOPE);
	CHECK(export_format_for_path("p.json") == EXPORT_FORMAT_JSON);
	CHECK(export_format_for_path("p.pb.gz") == EXPORT_FORMAT_PPROF);
	CHECK(export_format_for_path("m.prom") == EXPORT_FORMAT_PROMETHEUS);
	CHECK(export_format_for_path("f.svg") == EXPORT_FORMAT_SVG);
	CHECK(export_format_for_path("f.txt") == -ENOENT);
	CHECK(!export_format_has_weight(EXPORT_FORMAT_PROMETHEUS));
	CHECK(export_write(stdout, 99, NULL, NULL) == -EOPNOTSUPP);
}

static void test_pprof(void)
{
	struct profile *p = two_procs(), *n, *back = NULL;
	struct profile_weight w;
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(profile_weight_get(p, "latency", &w) == 0);
	n = profile_for_weight(p, &w, 0);
	CHECK(n && n->types.nr == 2 && n->samples.nr == 1);
	CHECK_STR(n->types.items[0].type, PROFILE_TYPE_SYSCALLS);
	CHECK_STR(n->default_type, PROFILE_TYPE_LATENCY);
	CHECK(n->samples.items[0].values[1] == 5000);
	CHECK_STR(profile_get_meta(n, "lost.events_lost"), "2");
	profile_free(n);
	CHECK(profile_weight_get(p, "cpu", &w) == 0);
	f = open_memstream(&buf, &len);
	CHECK(export_pprof(f, p, &w, 0) == 0);
	fclose(f);
	CHECK(pprof_read_mem(buf, len, &back, &why) == 0);
	CHECK(back && back->samples.nr == 2 && back->types.nr == 2);
	CHECK_STR(back->default_type, PROFILE_TYPE_SAMPLES);
	CHECK(back->locations.nr == p->locations.nr);
	profile_free(back);
	free(buf);
	profile_free(p);
}

/* wall: cpu and offcpu, then their sum as the default column. */
static void test_pprof_wall(void)
{
	struct profile *p = profile_new(), *n;
	struct profile_weight w;
	int64_t both[2] = { 30, 70 }, off[2] = { 0, 5 }, none[2] = { 0, 0 };
	uint64_t no_locs[1] = { 0 };

	profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
	profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds");
	profile_add_sample(p, no_locs, 0, both, NULL, 0);
	profile_add_sample(p, no_locs, 0, none, NULL, 0);
	profile_add_sample(p, no_locs, 0, off, NULL, 0);
	CHECK(profile_weight_get(p, "wall", &w) == 0);
	n = profile_for_weight(p, &w, 0);
	CHECK(n && n->types.nr == 3 && n->samples.nr == 2);
	CHECK_STR(n->types.items[2].type, PROFILE_TYPE_WALL);
	CHECK_STR(n->default_type, PROFILE_TYPE_WALL);
	CHECK(n->samples.items[0].values[2] == 100 && n->samples.items[1].values[2] == 5);
	profile_free(n);
	profile_free(p);
}

static void test_speedscope(void)
{
	struct profile *p = two_procs();
	char *s = capture(EXPORT_FORMAT_SPEEDSCOPE, p, "cpu");

	/* frames shared by both processes, escaped, with file and line */
	CHECK(strstr(s, "{\"name\":\"main\",\"file\":\"app.c\",\"line\":12}"));
	CHECK(strstr(s, "{\"name\":\"quote\\\"\\\\fn\",\"file\":\"q.c\",\"line\":7}"));
	CHECK(strstr(s, "\"name\":\"db (pid 7)\",\"unit\":\"none\",\"startValue\":0,"
			"\"endValue\":3,\"samples\":[\n[0]],\"weights\":[3]"));
	CHECK(strstr(s, "\"name\":\"a\\\"pp (pid 42)\""));
	free(s);
	s = capture(EXPORT_FORMAT_SPEEDSCOPE, p, "latency");
	CHECK(strstr(s, "{\"name\":\"syscall:read\"}"));
	CHECK(strstr(s, "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":5000"));
	CHECK(!strstr(s, "db (pid 7)"));
	free(s);
	profile_free(p);
}

/* Samples with a tid label: one profile per thread. */
static void test_speedscope_threads(void)
{
	struct profile *p = profile_new();
	struct profile_label t1[] = { { .key = "pid", .num = 5 }, { .key = "tid", .num = 5 },
				      { .key = "comm", .str = "main" } };
	struct profile_label t2[] = { { .key = "pid", .num = 5 }, { .key = "tid", .num = 6 },
				      { .key = "comm", .str = "worker" } };
	int64_t one[1] = { 1 }, two[1] = { 2 };
	uint64_t locs[1] = { 0 };
	char *s;

	profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
	profile_add_sample(p, locs, 0, one, t1, 3);
	profile_add_sample(p, locs, 0, two, t2, 3);
	s = capture(EXPORT_FORMAT_SPEEDSCOPE, p, "cpu");
	CHECK(strstr(s, "\"name\":\"main (pid 5, tid 5)\""));
	CHECK(strstr(s, "\"name\":\"worker (pid 5, tid 6)\""));
	CHECK(strstr(s, "\"activeProfileIndex\":1,"));	/* the heavier one */
	free(s);
	profile_free(p);
}

static void test_prom(void)
{
	struct profile *p = two_procs();
	struct sys_stat st = { .pid = 42, .name = "read", .count = 21, .errors = 1,
			       .total_ns = 1000000900 };
	char *s;

	st.hist[0] = 1;
	st.hist[16] = 20;
	sys_stat_store(p, &st);
	s = capture(EXPORT_FORMAT_PROMETHEUS, p, NULL);
	CHECK(strstr(s, "# TYPE latprof_syscall_duration_seconds histogram\n"));
	CHECK(strstr(s, "_bucket{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\",le=\"0.000001\"} 1\n"));
	CHECK(strstr(s, "_bucket{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\",le=\"0.032768\"} 1\n"));
	CHECK(strstr(s, "_bucket{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\",le=\"0.065536\"} 21\n"));
	CHECK(strstr(s, "_bucket{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\",le=\"+Inf\"} 21\n"));
	CHECK(strstr(s, "_sum{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\"} 1.000000900\n"));
	CHECK(strstr(s, "latprof_syscall_errors_total{pid=\"42\",comm=\"a\\\"pp\",syscall=\"read\"} 1\n"));
	CHECK(strstr(s, "latprof_cpu_samples_total{pid=\"7\",comm=\"db\"} 3\n"));
	CHECK(strstr(s, "latprof_lost_events_total{reason=\"events_lost\"} 2\n"));
	free(s);
	profile_free(p);
}

int main(void)
{
	test_lookup();
	test_pprof();
	test_pprof_wall();
	test_speedscope();
	test_speedscope_threads();
	test_prom();
	return check_exit();
}
