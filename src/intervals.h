/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The timeline and memory sampler of `record` (not the CPU sampler, which
 * is the perf_event program bpf/cpu.bpf.c): at every --interval boundary
 * it reads the cumulative counters of the BPF session (collect_counters)
 * and the memory of every live target from /proc, and closes one timeline
 * interval. User space only: nothing runs in the targets' context. RSS
 * comes from statm every interval; PSS from smaps_rollup, which walks the
 * target's page tables, at most as often as keeps its cost under 1% of the
 * interval per process, and all of them together under 1% of the interval
 * in each tick, taking turns (procmem.h).
 */
#ifndef LATPROF_INTERVALS_H
#define LATPROF_INTERVALS_H

#include <stdint.h>

#include "src/collect.h"
#include "src/profile.h"
#include "src/timeline.h"

#define INTERVALS_MAX 3600	/* then intervals merge in pairs (timeline.h) */

struct intervals {
	struct collect *col;	/* borrowed */
	struct timeline tl;
	uint64_t start_ns;	/* CLOCK_MONOTONIC of the recording's start */
	uint64_t next_ns;	/* next boundary */
	uint64_t pss_spent_ns;	/* smaps_rollup time in the current tick */
	size_t pss_cursor;	/* where the next tick starts reading PSS */
};

/*
 * Start sampling @col every @interval_ns from @start_ns (now): the counters
 * so far are the baseline. 0 or -errno.
 */
int intervals_start(struct intervals *s, struct collect *col, uint64_t interval_ns,
		    uint64_t start_ns, bool has_cpu, bool has_syscalls);

/* Milliseconds from @now_ns to the next boundary (0 when due), at most @max_ms. */
int intervals_wait_ms(const struct intervals *s, uint64_t now_ns, int max_ms);

/*
 * Close the interval ending at @tick_ns (now) if a boundary has passed, or
 * always with @force (the end of the recording). 0 or -errno.
 */
int intervals_tick(struct intervals *s, uint64_t tick_ns, bool force);

/* Store the timeline and the process tree (times relative to the start). 0 or -ENOMEM. */
int intervals_store(struct intervals *s, struct profile *p);

void intervals_release(struct intervals *s);

#endif
