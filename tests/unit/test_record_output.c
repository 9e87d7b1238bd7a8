// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/record_output: `record -o` picks its format by extension, refuses
 * what it cannot write before recording, and weighs derived formats by the
 * first collector that has values (profile_weight_default, which every
 * verb that weighs stacks uses).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/export_formats.h"
#include "src/weight.h"
#include "src/record_output.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

static int format_of(const char *path, const char *weight, bool cpu, bool sys, bool off)
{
	struct record_output o = { .path = path, .weight = weight,
				   .modes = { .cpu = cpu, .syscall = sys, .offcpu = off } };

	return record_output_check(&o) ? -EINVAL : o.format;
}

static void test_check(void)
{
	log_level = LOG_LEVEL_QUIET;	/* the refusals print their reason */
	CHECK(format_of("latprof.pb.gz", NULL, true, true, false) == EXPORT_FORMAT_PPROF);
	CHECK(format_of("-", NULL, true, true, false) == EXPORT_FORMAT_PPROF);
	CHECK(format_of("dir.d/profile", NULL, true, true, false) == EXPORT_FORMAT_PPROF);
	CHECK(format_of("p.pprof", NULL, true, false, false) == EXPORT_FORMAT_PPROF);
	CHECK(format_of("a.folded", NULL, true, false, false) == EXPORT_FORMAT_FOLDED);
	CHECK(format_of("a.speedscope.json", NULL, false, true, false) ==
	      EXPORT_FORMAT_SPEEDSCOPE);
	CHECK(format_of("m.prom", "latency", true, false, false) == EXPORT_FORMAT_PROMETHEUS);
	CHECK(format_of("a.svg", NULL, true, true, false) == EXPORT_FORMAT_SVG);
	CHECK(format_of("a.jsn", NULL, true, true, false) == -EINVAL);
	CHECK(format_of("a.json", "latency", true, false, false) == -EINVAL);
	CHECK(format_of("a.json", "wall", true, true, false) == -EINVAL);
	CHECK(format_of("a.json", "wall", true, false, true) == EXPORT_FORMAT_JSON);
	CHECK(format_of("a.json", "bogus", true, true, true) == -EINVAL);
	CHECK(format_of("a.folded", NULL, false, false, true) == EXPORT_FORMAT_FOLDED);
}

/* Without CPU samples the folded output is weighted by latency. */
static void test_write_fallback(void)
{
	char dir[] = "/tmp/test_record_output.XXXXXX", path[64], *buf = NULL;
	struct record_output o = { .path = path, .modes = { .cpu = true, .syscall = true } };
	struct profile *p = profile_new();
	struct profile_label l[] = { { .key = "comm", .str = "app" },
				     { .key = "syscall", .str = "read" } };
	int64_t v[4] = { 0, 0, 1, 5000 };
	uint64_t locs[1] = { 0 };
	size_t len = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
	profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
	profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
	profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
	profile_add_sample(p, locs, 0, v, l, 2);
	CHECK(record_output_check(&o) == 0);
	CHECK(record_output_write(&o, p) == 0);
	CHECK(read_file(path, &buf, &len) == 0);
	CHECK_STR(buf, "app;syscall:read 5000\n");
	free(buf);
	unlink(path);
	rmdir(dir);
	profile_free(p);
}

/* A profile with the columns @types (NULL-ended), one sample of @values. */
static struct profile *profile_of(const char *const *types, const int64_t *values)
{
	struct profile *p = profile_new();
	uint64_t locs[1] = { 0 };
	size_t i;

	for (i = 0; types[i]; i++)
		profile_add_type(p, types[i], "count");
	if (values)
		profile_add_sample(p, locs, 0, values, NULL, 0);
	return p;
}

static void check_default(const char *const *types, const int64_t *values, const char *want)
{
	struct profile *p = profile_of(types, values);

	CHECK_STR(profile_weight_default(p), want);
	profile_free(p);
}

/* The first of cpu, latency, offcpu with values, else the first column. */
static void test_weight_default(void)
{
	static const char *const all[] = { PROFILE_TYPE_SAMPLES, PROFILE_TYPE_CPU,
		PROFILE_TYPE_SYSCALLS, PROFILE_TYPE_LATENCY, PROFILE_TYPE_OFFCPU, NULL };
	static const char *const sys[] = { PROFILE_TYPE_SYSCALLS, PROFILE_TYPE_LATENCY, NULL };
	static const char *const off[] = { PROFILE_TYPE_OFFCPU, NULL };
	static const char *const foreign[] = { "alloc_space", NULL };
	const int64_t cpu_v[] = { 3, 30, 0, 0, 0 }, lat_v[] = { 0, 0, 1, 5, 0 },
		      off_v[] = { 0, 0, 0, 0, 7 }, none[] = { 0, 0, 0, 0, 0 };

	check_default(all, cpu_v, "cpu");
	check_default(all, lat_v, "latency");
	check_default(all, off_v, "offcpu");
	check_default(all, none, "cpu");	/* no values at all: the first column */
	check_default(all, NULL, "cpu");	/* record's check, before any sample */
	check_default(sys, NULL, "latency");
	check_default(off, NULL, "offcpu");	/* was "cpu" in report: one column */
	check_default(foreign, NULL, "cpu");	/* profile_weight_get maps it to column 0 */
}

int main(void)
{
	test_weight_default();
	test_check();
	test_write_fallback();
	return check_exit();
}
