// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/stalls and src/metarecords: event-loop stalls survive the trip through
 * profile metadata, in chunks past METARECORDS_PER_CHUNK, sorted by start;
 * a profile recorded without stall detection says so (-ENOENT) and one with
 * none says 0; malformed records are skipped, not trusted; the quantiles are
 * the requests' nearest-rank ones.
 */
#include <errno.h>
#include <stdlib.h>

#include "src/metarecords.h"
#include "src/stalls.h"
#include "tests/unit/check.h"

/* @n stalls, given in reverse start order: the store sorts them. */
static void test_roundtrip(size_t n)
{
	struct profile *p = profile_new();
	struct stalls s = { 0 }, back = { 0 };
	uint64_t min_ns = 0;
	size_t i;

	CHECK(p != NULL);
	for (i = 0; i < n; i++) {
		struct stall st = { .pid = 7, .tid = 7 + i % 3, .start_ns = 1000000 * (n - i),
				    .duration_ns = 10000000 + i, .flags = i == 0 ? STALL_IN_FLIGHT : 0 };

		CHECK(stalls_add(&s, &st) == 0);
	}
	CHECK(stalls_store(p, &s, 10000000, 2) == 0);
	CHECK(profile_get_meta_u64(p, "stalls.count") == n);
	CHECK(profile_get_meta_u64(p, "stalls.dropped") == 2);
	CHECK(stalls_load(p, &back, &min_ns) == 0);
	CHECK(min_ns == 10000000);
	CHECK(back.nr == n);
	for (i = 0; i < back.nr && i < n; i++) {
		CHECK(back.items[i].start_ns == 1000000 * (i + 1));
		CHECK(back.items[i].duration_ns == 10000000 + (n - 1 - i));
		CHECK(back.items[i].tid == 7 + (n - 1 - i) % 3);
		CHECK(back.items[i].flags == (i == n - 1 ? STALL_IN_FLIGHT : 0));
	}
	stalls_release(&s);
	stalls_release(&back);
	profile_free(p);
}

static void test_absent_and_none(void)
{
	struct profile *p = profile_new();
	struct stalls s = { 0 };
	struct stalls_summary sum;
	uint64_t min_ns = 0;

	CHECK(stalls_load(p, &s, &min_ns) == -ENOENT);
	CHECK(stalls_store(p, &s, 5000000, 0) == 0);
	CHECK(stalls_load(p, &s, &min_ns) == 0);
	CHECK(s.nr == 0 && min_ns == 5000000);
	CHECK(stalls_summarize(&s, &sum) == 0);
	CHECK(sum.count == 0 && sum.total_ns == 0 && sum.max_ns == 0);
	profile_free(p);
}

static int count_one(void *arg, const uint64_t *v)
{
	(void)v;
	++*(size_t *)arg;
	return 0;
}

/* Records with too few or too many numbers, signs, junk: skipped. */
static void test_malformed(void)
{
	struct profile *p = profile_new();
	struct stalls s = { 0 };
	uint64_t min_ns;
	size_t n = 0;

	CHECK(profile_set_meta_u64(p, "stalls.min_ns", 1) == 0);
	CHECK(profile_set_meta(p, "stalls.0", "1,2,3,4,0;1,2,3,4;1,2,3,4,5,6;-1,2,3,4,0;"
			       "1,2,x,4,0;;99999999999,2,3,4,0;5,6,7,8,1") == 0);
	CHECK(profile_set_meta(p, "stalls.x", "9,9,9,9,0") == 0);	/* not a chunk */
	CHECK(stalls_load(p, &s, &min_ns) == 0);
	CHECK(s.nr == 2);
	CHECK(s.nr == 2 && s.items[0].pid == 1 && s.items[1].duration_ns == 8);
	CHECK(s.nr == 2 && !s.items[0].flags && s.items[1].flags == STALL_IN_FLIGHT);
	CHECK(metarecords_each(p, "stalls", 5, count_one, &n) == 0);
	CHECK(n == 3);	/* a pid past 32 bits is the stalls' rule, not the records' */
	CHECK(metarecords_each(p, "stalls", 0, count_one, &n) == -EINVAL);
	CHECK(metarecords_store(p, "x", NULL, 0, METARECORDS_MAX_FIELDS + 1) == -EINVAL);
	stalls_release(&s);
	profile_free(p);
}

static void test_summary(void)
{
	struct stalls s = { 0 };
	struct stalls_summary sum;
	size_t i;

	for (i = 1; i <= 100; i++) {
		struct stall st = { .pid = 1, .tid = 1, .start_ns = i, .duration_ns = i * 1000 };

		CHECK(stalls_add(&s, &st) == 0);
	}
	CHECK(stalls_summarize(&s, &sum) == 0);
	CHECK(sum.count == 100 && sum.in_flight == 0);
	CHECK(sum.total_ns == 5050 * 1000);
	CHECK(sum.p50_ns == 50000);
	CHECK(sum.p99_ns == 99000);
	CHECK(sum.max_ns == 100000);
	stalls_release(&s);
}

int main(void)
{
	test_roundtrip(3);
	test_roundtrip(METARECORDS_PER_CHUNK * 2 + 5);
	test_absent_and_none();
	test_malformed();
	test_summary();
	return check_exit();
}
