// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/timeline: deltas of counter snapshots, interval bucketing, merging
 * when full, lookup by time, and the metadata round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/timeline.h"
#include "tests/unit/check.h"

#define S 1000000000ULL

static void check_delta(void)
{
	struct timeline_counters a = { .ns = { 10, 20, 30, 40, 0, 50, 60 }, .opens = 5 };
	struct timeline_counters b = { .ns = { 15, 20, 90, 40, 7, 49, 61 }, .opens = 9 };
	struct timeline_counters d;

	timeline_counters_delta(&a, &b, &d);
	CHECK(d.ns[TIMELINE_SERIES_CPU] == 5);
	CHECK(d.ns[TIMELINE_SERIES_FILE] == 0);
	CHECK(d.ns[TIMELINE_SERIES_NETWORK] == 60);
	CHECK(d.ns[TIMELINE_SERIES_GIL] == 7);
	CHECK(d.ns[TIMELINE_SERIES_SLEEP] == 0);	/* a counter going down gives 0 */
	CHECK(d.ns[TIMELINE_SERIES_OTHER] == 1);
	CHECK(d.opens == 4);
}

/* Three snapshots one second apart after a baseline: three intervals of deltas. */
static void check_bucketing(void)
{
	struct timeline tl;
	struct timeline_counters c = { 0 };
	struct timeline_interval iv = { .rss_kb = 100, .procs = 1 };

	timeline_init(&tl, S, 0);
	c.ns[TIMELINE_SERIES_CPU] = 7 * S;	/* before the start: the baseline */
	tl.last = c;
	c.ns[TIMELINE_SERIES_CPU] += S / 2;
	c.ns[TIMELINE_SERIES_FILE] += S / 4;
	c.opens += 12;
	CHECK(timeline_add(&tl, S, &c, &iv) == 0);
	c.ns[TIMELINE_SERIES_CPU] += S;
	iv.rss_kb = 200;
	CHECK(timeline_add(&tl, 2 * S + 5, &c, &iv) == 0);
	CHECK(timeline_add(&tl, 2 * S + 5, &c, &iv) == 0);	/* zero length: ignored */
	c.ns[TIMELINE_SERIES_SLEEP] += S / 10;
	CHECK(timeline_add(&tl, 2 * S + S / 2, &c, &iv) == 0);	/* the stop */
	CHECK(tl.items.nr == 3);
	CHECK(tl.items.items[0].start_ns == 0 && tl.items.items[0].duration_ns == S);
	CHECK(tl.items.items[0].ns[TIMELINE_SERIES_CPU] == S / 2);
	CHECK(tl.items.items[0].ns[TIMELINE_SERIES_FILE] == S / 4);
	CHECK(tl.items.items[0].opens == 12 && tl.items.items[0].rss_kb == 100);
	CHECK(tl.items.items[1].start_ns == S && tl.items.items[1].duration_ns == S + 5);
	CHECK(tl.items.items[1].ns[TIMELINE_SERIES_CPU] == S);
	CHECK(tl.items.items[1].ns[TIMELINE_SERIES_FILE] == 0 && tl.items.items[1].opens == 0);
	CHECK(tl.items.items[1].rss_kb == 200);
	CHECK(tl.items.items[2].duration_ns == S / 2 - 5);
	CHECK(tl.items.items[2].ns[TIMELINE_SERIES_SLEEP] == S / 10);
	CHECK(timeline_find(&tl, 0) == 0);
	CHECK(timeline_find(&tl, S - 1) == 0);
	CHECK(timeline_find(&tl, S) == 1);
	CHECK(timeline_find(&tl, 2 * S + 6) == 2);
	CHECK(timeline_find(&tl, 3 * S) == -1);
	timeline_release(&tl);
}

/* A full timeline merges neighbours: sums add up, memory is the later one's. */
static void check_coarsen(void)
{
	struct timeline tl;
	struct timeline_counters c = { 0 };
	struct timeline_interval iv = { 0 };
	uint64_t i, total = 0;

	timeline_init(&tl, S, 4);
	for (i = 1; i <= 5; i++) {
		c.ns[TIMELINE_SERIES_CPU] += i * 1000;
		total += i * 1000;
		iv.rss_kb = i;
		CHECK(timeline_add(&tl, i * S, &c, &iv) == 0);
	}
	/* 4 intervals of 1 s merged into 2 of 2 s, then the fifth appended */
	CHECK(tl.items.nr == 3);
	CHECK(tl.interval_ns == 2 * S);
	CHECK(tl.items.items[0].start_ns == 0 && tl.items.items[0].duration_ns == 2 * S);
	CHECK(tl.items.items[0].ns[TIMELINE_SERIES_CPU] == 3000 && tl.items.items[0].rss_kb == 2);
	CHECK(tl.items.items[1].start_ns == 2 * S && tl.items.items[1].rss_kb == 4);
	CHECK(tl.items.items[2].start_ns == 4 * S && tl.items.items[2].duration_ns == S);
	CHECK(tl.items.items[0].ns[0] + tl.items.items[1].ns[0] + tl.items.items[2].ns[0] == total);
	timeline_release(&tl);
}

/* Field by field: the struct's tail padding is not part of its value. */
static bool interval_equal(const struct timeline_interval *a, const struct timeline_interval *b)
{
	int s;

	for (s = 0; s < TIMELINE_SERIES_NR; s++)
		if (a->ns[s] != b->ns[s])
			return false;
	return a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       a->opens == b->opens && a->rss_kb == b->rss_kb && a->pss_kb == b->pss_kb &&
	       a->procs == b->procs;
}

static void check_round_trip(void)
{
	struct profile *p = profile_new();
	struct timeline tl, back;
	struct timeline_counters c = { .ns = { 1, 2, 3, 4, 5, 6 }, .opens = 7 };
	struct timeline_interval iv = { .rss_kb = 1234, .pss_kb = 1000, .procs = 3 };

	timeline_init(&tl, S / 2, 0);
	tl.start_ns = 987654321;
	tl.has_cpu = true;
	CHECK(timeline_add(&tl, S / 2, &c, &iv) == 0);
	CHECK(timeline_store(&tl, p) == 0);
	timeline_init(&back, 0, 0);
	CHECK(timeline_load(&back, p) == 0);
	CHECK(back.items.nr == 1 && back.interval_ns == S / 2 && back.start_ns == 987654321);
	CHECK(back.has_cpu && !back.has_syscalls);
	CHECK(interval_equal(&back.items.items[0], &tl.items.items[0]));
	CHECK_STR(timeline_series_name(TIMELINE_SERIES_NETWORK), "network");
	timeline_release(&tl);
	timeline_release(&back);
	profile_free(p);
}

int main(void)
{
	check_delta();
	check_bucketing();
	check_coarsen();
	check_round_trip();
	return check_exit();
}
