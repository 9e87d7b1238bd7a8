/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One profile out of several of the same agent: serve's history merges
 * the windows a request spans (src/history.h). Samples are appended, not
 * summed (readers add up equal stacks); mappings, functions and locations
 * are shared where equal; a column one profile lacks is zero in its
 * samples; metadata is the union, a later profile's value replacing an
 * earlier one's (loss counters are the agent's session's so far: the last
 * window's are the latest), except the per-syscall statistics, which add
 * up: the caller sums them apart (profile_merge_sys) and stores the sums
 * once. The profile's time and duration are the caller's.
 */
#ifndef LATPROF_PROFILE_MERGE_H
#define LATPROF_PROFILE_MERGE_H

#include <sys/types.h>

#include "src/profile.h"
#include "src/sysstats.h"

/* Which samples to take; zero: every sample. */
struct profile_merge_filter {
	pid_t pid;		/* 0: any; else the "pid" label's */
	const char *comm;	/* NULL or "": any; else the "comm" label's */
};

/*
 * Add @from's samples that pass @f (NULL: every one), with what they need,
 * to @into. 0 or -ENOMEM (then @into holds part of @from: free it).
 */
int profile_merge(struct profile *into, const struct profile *from,
		  const struct profile_merge_filter *f);

/*
 * Add @from's per-syscall statistics of the processes that pass @f (NULL:
 * all; a comm is a process's, "proc.PID.comm") to @sum (sysstats.h), for
 * sys_sum_store once every profile is merged. 0 or -ENOMEM.
 */
int profile_merge_sys(struct sys_sum *sum, const struct profile *from,
		      const struct profile_merge_filter *f);

#endif
