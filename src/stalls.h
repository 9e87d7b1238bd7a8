/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Event-loop stalls (record --stall-min, bpf/stalls.bpf.h): each stretch in
 * which a thread that waits in epoll (or poll on several fds) ran at least the
 * threshold between two such waits. The list lives in the profile's
 * metadata (stalls.min_ns, stalls.count, stalls.dropped and the records
 * "pid,tid,start_ns,duration_ns,flags" in stalls.N, src/metarecords.h);
 * the stacks that ran in them are the
 * profile's "stall" column. This module stores, loads and summarizes the
 * list; it does not detect anything.
 */
#ifndef LATPROF_STALLS_H
#define LATPROF_STALLS_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

enum stall_flag {
	STALL_IN_FLIGHT = 1,	/* still running at the stop: its time up to it */
};

struct stall {
	uint32_t pid, tid;
	uint64_t start_ns;	/* CLOCK_MONOTONIC: the wait's return */
	uint64_t duration_ns;
	uint32_t flags;		/* enum stall_flag */
};

struct stalls {
	struct stall *items;
	size_t nr, alloc;
};

struct stalls_summary {
	size_t count, in_flight;
	uint64_t total_ns, p50_ns, p99_ns, max_ns;
};

/* Append a stall; 0 or -ENOMEM. */
int stalls_add(struct stalls *s, const struct stall *st);
/* Free what @s holds; it is empty afterwards. */
void stalls_release(struct stalls *s);

/*
 * Store @s (sorted by start) in @p's metadata, with the threshold @min_ns
 * and the number @dropped past the cap. 0 or -ENOMEM.
 */
int stalls_store(struct profile *p, struct stalls *s, uint64_t min_ns, uint64_t dropped);

/*
 * Load the stalls of @p into @out (empty) and the threshold into *@min_ns.
 * -ENOENT when the recording did not look for stalls; 0 or -ENOMEM.
 */
int stalls_load(const struct profile *p, struct stalls *out, uint64_t *min_ns);

/* Count, total and quantiles of the durations of @s. 0 or -ENOMEM. */
int stalls_summarize(const struct stalls *s, struct stalls_summary *sum);

#endif
