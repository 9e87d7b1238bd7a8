// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/sysstats: per-syscall statistics survive the trip through profile
 * metadata and a pprof file; percentiles land in the right log2 bucket and
 * never past the maximum; malformed metadata is skipped, not trusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/pprof.h"
#include "src/sysstats.h"
#include "tests/unit/check.h"

/* 20 reads of ~50 ms: all in the [32768, 65536) us bucket (slot 16). */
static struct sys_stat pipe_reads(void)
{
	struct sys_stat s = { .pid = 42, .name = "read", .count = 21, .errors = 1,
			      .total_ns = 1000000000ULL + 900, .max_ns = 50400000 };

	s.hist[16] = 20;
	s.hist_ns[16] = 1000000000ULL;	/* mean 50 ms */
	s.hist[0] = 1;	/* one fast read that failed */
	s.hist_ns[0] = 900;
	return s;
}

/* The kernel's slot of a duration is the bucket sys_hist_bucket_us names. */
static void test_kernel_slot(void)
{
	uint64_t lo, hi, ns, probes[] = { 0, 1, 999, 1000, 1999, 2000, 32767999, 32768000,
					  50000000, 65535999, 65536000, ~0ULL };
	unsigned int i, k;
	int d;

	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		sys_hist_bucket_us(lp_hist_slot(probes[i]), &lo, &hi);
		CHECK(probes[i] / 1000 >= lo);
		CHECK(probes[i] / 1000 < hi || lp_hist_slot(probes[i]) == SYS_HIST_SLOTS - 1);
	}
	/* every boundary, both sides, against the bit length of ns / 1000 */
	for (k = 0; k < 62; k++) {
		for (d = -2; d <= 2; d++) {
			uint64_t us;
			unsigned int want = 0;

			ns = (k < 52 ? 1000ULL << k : 1ULL << k) + d;
			for (us = ns / 1000; us; us >>= 1)
				want++;
			if (want >= SYS_HIST_SLOTS)
				want = SYS_HIST_SLOTS - 1;
			CHECK(lp_hist_slot(ns) == want);
		}
	}
}

static void test_buckets(void)
{
	uint64_t lo, hi;

	sys_hist_bucket_us(0, &lo, &hi);
	CHECK(lo == 0 && hi == 1);
	sys_hist_bucket_us(1, &lo, &hi);
	CHECK(lo == 1 && hi == 2);
	sys_hist_bucket_us(16, &lo, &hi);
	CHECK(lo == 32768 && hi == 65536);
}

static void test_quantiles(void)
{
	struct sys_stat s = pipe_reads(), empty = { 0 }, one = { .count = 1, .max_ns = 3500 };
	uint64_t p50 = sys_stat_quantile_ns(&s, 0.5), p99 = sys_stat_quantile_ns(&s, 0.99);

	CHECK(p50 >= 32768000 && p50 < 65536000);
	CHECK(p50 == 50000000);				/* the bucket's mean */
	CHECK(p99 >= p50 && p99 <= s.max_ns);		/* capped at the maximum */
	CHECK(sys_stat_quantile_ns(&s, 1.0) == s.max_ns);
	CHECK(sys_stat_quantile_ns(&s, 0.01) < 1000);	/* the fast one */
	CHECK(sys_stat_quantile_ns(&empty, 0.5) == 0);
	one.hist[2] = 1;				/* [2, 4) us, sum unknown */
	CHECK(sys_stat_quantile_ns(&one, 0.5) >= 2000 && sys_stat_quantile_ns(&one, 0.5) <= 3500);
	one.hist_ns[2] = 3100;
	CHECK(sys_stat_quantile_ns(&one, 0.5) == 3100);
}

static void test_roundtrip(void)
{
	struct profile *p = profile_new(), *q = NULL;
	struct sys_stat s = pipe_reads(), u = { .pid = 7, .count = 3, .total_ns = 30 };
	struct sys_stats st = { 0 };
	char path[] = "/tmp/latprof-sysstats-XXXXXX";
	const char *why = NULL;
	int fd = mkstemp(path);

	CHECK(p && fd >= 0);
	sys_stat_name(1023, u.name, sizeof(u.name));
	CHECK_STR(u.name, "syscall_1023");
	u.hist[5] = 3;
	CHECK(sys_stat_store(p, &s) == 0);
	CHECK(sys_stat_store(p, &u) == 0);
	CHECK(profile_add_type(p, "samples", "count") == 0);
	CHECK(pprof_write_file(p, path) == 0);
	CHECK(pprof_read_file(path, &q, &why) == 0);
	CHECK(q && sys_stats_load(q, &st) == 0);
	CHECK(st.nr == 2);
	for (size_t i = 0; i < st.nr; i++) {
		const struct sys_stat *want = st.items[i].pid == 42 ? &s : &u;

		CHECK(!memcmp(&st.items[i], want, sizeof(*want)));
	}
	free(st.items);
	profile_free(q);
	profile_free(p);
	unlink(path);
}

static void test_malformed(void)
{
	static const char *const bad[][2] = {
		{ "syscall.x.read", "count=1 errors=0 total_ns=1 max_ns=1 in_flight=0 hist=0:1" },
		{ "syscall.5.", "count=1 errors=0 total_ns=1 max_ns=1 in_flight=0 hist=0:1" },
		{ "syscall.5.read", "count=1 errors=0" },
		{ "syscall.5.read", "count=1 errors=0 total_ns=1 max_ns=1 in_flight=0 hist=99:1" },
		{ "syscall.5.read", "count=1 errors=0 total_ns=1 max_ns=1 in_flight=0 hist=1:x" },
	};
	struct sys_stats st = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile *p = profile_new();

		CHECK(p && profile_set_meta(p, bad[i][0], bad[i][1]) == 0);
		CHECK(sys_stats_load(p, &st) == 0);
		CHECK(st.nr == 0);
		profile_free(p);
	}
	free(st.items);
}

static void test_merge(void)
{
	struct sys_stat a = pipe_reads(), b = pipe_reads();

	b.max_ns = 70000000;
	sys_stat_merge(&a, &b);
	CHECK(a.count == 42 && a.errors == 2 && a.hist[16] == 40 && a.max_ns == 70000000);
	CHECK(a.hist_ns[16] == 2000000000ULL);
}

/* An older look taken out of a newer: what happened between, never below 0. */
static void test_sub(void)
{
	struct sys_stat a = pipe_reads(), b = pipe_reads(), c = pipe_reads();
	char text[SYS_HIST_TEXT_MAX];
	struct sys_stat parsed = { 0 };

	sys_stat_merge(&a, &b);
	sys_stat_sub(&a, &b);
	CHECK(a.count == c.count && a.errors == c.errors && a.hist[16] == c.hist[16]);
	CHECK(a.hist_ns[16] == c.hist_ns[16] && a.total_ns == c.total_ns);
	b.count += 5;
	b.hist[3] = 7;
	sys_stat_sub(&c, &b);
	CHECK(c.count == 0 && c.hist[16] == 0 && c.hist[3] == 0 && c.total_ns == 0);
	/* the histogram's text and back (the metadata's hist=, a sample's latency_hist) */
	a = pipe_reads();
	sys_hist_format(&a, text, sizeof(text));
	CHECK(sys_hist_parse(text, &parsed) == 0);
	CHECK(!memcmp(parsed.hist, a.hist, sizeof(a.hist)) &&
	      !memcmp(parsed.hist_ns, a.hist_ns, sizeof(a.hist_ns)));
	CHECK(sys_hist_parse("3:x", &parsed) == -EINVAL);
}

int main(void)
{
	test_kernel_slot();
	test_buckets();
	test_quantiles();
	test_roundtrip();
	test_malformed();
	test_merge();
	test_sub();
	return check_exit();
}
