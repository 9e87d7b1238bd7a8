/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof report`, the report body: its options and its sections. The whole
 * report is report.c; the sections live in report_sys.c, report_req.c and
 * report_procs.c, which call nothing of report.c and share only this header
 * and the formatting leaf report_fmt.h. The verb (options, loading the
 * profile, exit status) is cmd_report.c. Everything writes to the FILE it is
 * given, nothing else: write errors are left in that FILE's error indicator.
 */
#ifndef LATPROF_REPORT_H
#define LATPROF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "src/profile.h"

struct report_opts {
	const char *weight;	/* NULL: chosen from the profile's columns */
	const char *weight_unit;	/* set by report_profile() */
	unsigned int top;	/* rows per table */
	unsigned int stacks;
	unsigned int slowest;	/* requests listed with their own breakdown */
	bool color;		/* bold headings (escape sequences) */
	unsigned int stack_flags;	/* enum stacks_flag: STACKS_FLAG_NATIVE or 0 */
};

/*
 * Write the whole report of @p (read from @path, named in the header) to
 * @out. o->weight NULL picks one from the profile's columns; o->weight and
 * o->weight_unit are set to the weight used. 0, -EINVAL when the profile has
 * no such weight (after printing why), or -ENOMEM.
 */
int report_profile(FILE *out, struct report_opts *o, const struct profile *p, const char *path);

/*
 * The sections. Each writes to @out, starting with a blank line and its
 * heading, and writes nothing at all when @p has no such data. 0 or -ENOMEM.
 */

/* Where the time went (report_sys.c): CPU, syscalls by category, off CPU. */
int report_time_breakdown(FILE *out, const struct report_opts *o, const struct profile *p);
/* One row per syscall with percentiles (report_sys.c). */
int report_syscalls(FILE *out, const struct report_opts *o, const struct profile *p);
/* The call sites of the slow syscalls (report_sys.c; with a latency column). */
int report_slow_sites(FILE *out, const struct report_opts *o, const struct profile *p);

/* The process tree with lifetimes and peak memory (report_procs.c). */
int report_processes(FILE *out, const struct report_opts *o, const struct profile *p);
/* The per-interval activity, in at most 24 rows (report_procs.c). */
int report_timeline(FILE *out, const struct report_opts *o, const struct profile *p);

/* Requests (record --requests): latency, breakdown, slowest (report_req.c). */
int report_requests(FILE *out, const struct report_opts *o, const struct profile *p);
/* Files and network peers (record --files, --net) (report_req.c). */
int report_io(FILE *out, const struct report_opts *o, const struct profile *p);
struct flame;
struct flame_stack;
struct profile_weight;
/*
 * The stacks of @p weighed by @w (with o->stack_flags, per process),
 * heaviest first: *@f holds them (flame_free), *@order (free) points into
 * it, *@nr of them. 0 or -ENOMEM.
 */
int report_sorted_stacks(const struct report_opts *o, const struct profile *p,
			 const struct profile_weight *w, struct flame **f,
			 const struct flame_stack ***order, size_t *nr);

/* The event-loop stalls section (report_stalls.c); nothing without stall detection. */
int report_stalls(FILE *out, const struct report_opts *o, const struct profile *p);

/* The asyncio awaits section (report_awaits.c); nothing without await time. */
int report_awaits(FILE *out, const struct report_opts *o, const struct profile *p);

/*
 * The lines the slow call sites print under an event loop's wait
 * (report_awaits.c): the heaviest await chains with their shares, what
 * the loop's tasks awaited while it waited. *@note malloc'ed, NULL for a
 * profile without await time. 0 or -ENOMEM.
 */
int report_await_note(const struct report_opts *o, const struct profile *p, char **note);

/* Python threads' GIL waits and held time (report_gil.c); nothing without a GIL seen. */
int report_gil(FILE *out, const struct report_opts *o, const struct profile *p);

#endif
