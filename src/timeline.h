/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * struct timeline: what the targets did in each interval of a recording
 * (record --interval): CPU time, syscall time by category, files opened,
 * resident memory and processes alive. The recorder takes a snapshot of
 * cumulative counters at every interval boundary; an interval holds the
 * difference of two snapshots (timeline_add). Stored in a profile as
 * "timeline.*" metadata (docs/formats.md), read back by report, export and
 * `latprof timeline`. At most max_intervals are kept: past that, neighbours
 * are merged in pairs and the interval doubles, so a long recording keeps
 * its whole span at a coarser grain. No I/O.
 */
#ifndef LATPROF_TIMELINE_H
#define LATPROF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

/* The stacked series of an interval, in this order. */
enum timeline_series {
	TIMELINE_SERIES_CPU,
	TIMELINE_SERIES_FILE,
	TIMELINE_SERIES_NETWORK,
	TIMELINE_SERIES_SYNC,
	TIMELINE_SERIES_GIL,	/* futex waits for a Python GIL, not in sync (src/gil.h) */
	TIMELINE_SERIES_SLEEP,
	TIMELINE_SERIES_OTHER,	/* every other syscall category */
	TIMELINE_SERIES_NR,
};

/* Cumulative counters since the start of a recording, as sampled. */
struct timeline_counters {
	uint64_t ns[TIMELINE_SERIES_NR];	/* CPU and syscall time */
	uint64_t opens;				/* open/openat/openat2/creat calls */
};

struct timeline_interval {
	uint64_t start_ns, duration_ns;		/* relative to the recording's start */
	uint64_t ns[TIMELINE_SERIES_NR];	/* spent in the interval, all targets */
	uint64_t opens;
	uint64_t rss_kb;			/* sum over targets, at the end of the interval */
	uint64_t pss_kb;			/* 0: not read */
	uint32_t procs;				/* targets alive at the end */
};

struct timeline {
	struct { struct timeline_interval *items; size_t nr, alloc; } items;
	uint64_t interval_ns;	/* nominal length (grows when intervals merge) */
	uint64_t start_ns;	/* CLOCK_MONOTONIC at the recording's start */
	bool has_cpu;		/* CPU column measured (--mode cpu) */
	bool has_syscalls;	/* syscall columns measured (--mode syscall) */
	size_t max_intervals;	/* 0: unbounded */
	struct timeline_counters last;	/* snapshot at the end of the last interval */
};

/* The series' names in JSON and the chart: "cpu", "file", ... */
const char *timeline_series_name(enum timeline_series s);

/* Whether any interval of @tl has time in series @s. Cannot fail. */
bool timeline_has(const struct timeline *tl, enum timeline_series s);

/* An empty timeline. Cannot fail. */
void timeline_init(struct timeline *tl, uint64_t interval_ns, size_t max_intervals);
void timeline_release(struct timeline *tl);

/*
 * @cur - @prev, per counter; a counter that went down (it cannot, unless
 * the source was reset) gives 0. Cannot fail.
 */
void timeline_counters_delta(const struct timeline_counters *prev,
			     const struct timeline_counters *cur, struct timeline_counters *d);

/*
 * Close the interval that ends at @end_ns (relative) with cumulative
 * counters @cur: it starts where the last one ended (or at 0) and holds
 * @cur minus the previous snapshot; @iv supplies rss_kb, pss_kb, procs.
 * An interval of zero length is ignored. 0 or -ENOMEM.
 */
int timeline_add(struct timeline *tl, uint64_t end_ns, const struct timeline_counters *cur,
		 const struct timeline_interval *iv);

/* The interval holding relative time @t_ns, or -1. Cannot fail. */
long timeline_find(const struct timeline *tl, uint64_t t_ns);

/* Store as "timeline.*" metadata. 0 or -ENOMEM. */
int timeline_store(const struct timeline *tl, struct profile *p);

/*
 * Read the timeline of @p into @tl (initialized, empty). 0 (no timeline:
 * tl->items.nr is 0) or -ENOMEM.
 */
int timeline_load(struct timeline *tl, const struct profile *p);

#endif
