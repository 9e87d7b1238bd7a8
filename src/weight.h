/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a stack is weighed by: --weight resolved against a profile's columns,
 * a sample's weight, and the default every verb that weighs stacks takes.
 */
#ifndef LATPROF_WEIGHT_H
#define LATPROF_WEIGHT_H

#include "src/profile.h"

/*
 * What --weight weighs a stack by: one value column, or the sum of two
 * (wall = cpu time + off-CPU time), and how its stacks are named.
 */
struct profile_weight {
	const char *name;	/* "cpu", "latency", ...: without the wait filter */
	const char *unit;	/* "count" or "nanoseconds" */
	int cols[2];
	int nr_cols;
	unsigned int stack_flags;	/* enum stacks_flag to add */
	const char *wait;	/* ":path", ":idle" or ":readiness" filter: only the
				 * samples whose "wait" label is that (no label:
				 * path), NULL: all (syscalls.h) */
};

/* The names --weight accepts, for help and error messages. */
#define PROFILE_WEIGHTS "cpu, cpu-time, samples, latency, syscalls, offcpu, wall, stall " \
	"or await, optionally with :path, :idle or :readiness"

/*
 * Resolve --weight @name for @p: "WEIGHT" or "WEIGHT:path" / ":idle" /
 * ":readiness", which keep only the samples on the path of work (labelled
 * path, or not labelled), only the idle waits, or only the waits not decided.
 * 0, or -EINVAL after printing why (unknown weight or filter, or the
 * profile has no such values because the collector was off).
 */
int profile_weight_get(const struct profile *p, const char *name, struct profile_weight *w);

/*
 * The weight when none is asked for: the first of cpu, latency and offcpu
 * that @p has values of (a target that only waited still gets its stacks),
 * else the first it has the column of, else "cpu" (a foreign profile's one
 * column). Every verb that weighs stacks starts from this. Cannot fail.
 */
const char *profile_weight_default(const struct profile *p);

/* The weight of sample @s (0 when it has none). Cannot fail. */
int64_t profile_weight_of(const struct profile_weight *w, const struct profile_sample *s);

#endif
