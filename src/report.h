/* SPDX-License-Identifier: GPL-2.0-only */
/* What the parts of `latprof report` share (report.c, report_sys.c, report_req.c). */
#ifndef LATPROF_REPORT_H
#define LATPROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

struct report_opts {
	const char *weight;	/* NULL: chosen from the profile's columns */
	const char *weight_unit;
	unsigned int top;	/* rows per table */
	unsigned int stacks;
	unsigned int slowest;	/* requests listed with their own breakdown */
	bool color;
};

/*
 * Print the whole report of @p (read from @path, named in the header) to
 * stdout. o->weight NULL picks one from the profile's columns. 0, -EINVAL
 * when the profile has no such weight, or -ENOMEM.
 */
int report_profile(struct report_opts *o, const struct profile *p, const char *path);

/* Escape sequences for headings ("" without colour). */
const char *bold(const struct report_opts *o);
const char *reset(const struct report_opts *o);

/* Percentage of @part in @total, 0 for an empty total. */
double pct(uint64_t part, uint64_t total);

/* A duration in at most 6 characters: "1.23s", "45ms", "7.8us", "120ns". */
void format_ns(char *buf, size_t size, uint64_t ns);

/* Sections about syscalls and time off CPU; each prints nothing when the
 * profile has no such data. 0 or -ENOMEM. */
int report_time_breakdown(const struct report_opts *o, const struct profile *p);
int report_syscalls(const struct report_opts *o, const struct profile *p);
int report_slow_sites(const struct report_opts *o, const struct profile *p);
/* The process tree with lifetimes and peak memory, and the per-interval
 * timeline (report_procs.c); nothing when the profile has none. 0 or -ENOMEM. */
int report_processes(const struct report_opts *o, const struct profile *p);
int report_timeline(const struct report_opts *o, const struct profile *p);

/* Sections of report_req.c (record --requests, --files, --net); nothing
 * when the profile has no such data. 0 or -ENOMEM. */
int report_requests(const struct report_opts *o, const struct profile *p);
int report_io(const struct report_opts *o, const struct profile *p);

#endif
