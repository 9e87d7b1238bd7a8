/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `latprof top` shows, computed from two looks at a running session:
 * each look is a profile of everything so far (collect_peek_profile), so
 * the last interval is the newer look minus the older one, table by table
 * (hotspots.h), over the processes whose samples changed; "since start"
 * adds the intervals up. Three views:
 * functions by CPU (own and total), the call sites of slow syscalls (on the
 * path of work, readiness, idle), and syscalls (calls, errors, percentiles
 * from the kernel's histograms); plus the callers and callees of one
 * function (zoom), and the samples of one process only (filter). Does no
 * I/O: the screen and the text snapshots print it (top_screen.c,
 * top_text.c).
 */
#ifndef LATPROF_TOP_MODEL_H
#define LATPROF_TOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "src/hotspots.h"
#include "src/sysstats.h"

enum top_view { TOP_VIEW_FUNCS, TOP_VIEW_WAITS, TOP_VIEW_SYSCALLS, TOP_VIEWS };

/* A function: CPU nanoseconds in the last interval, and since the start. */
struct top_func {
	const char *name;		/* interned in the model's strtab */
	uint64_t self, total, self_all, total_all;
};

/* A call site of slow syscalls (hot_site's name and group). */
struct top_site {
	const char *name;		/* its group's digit, then the site (hot_site_text) */
	enum hot_wait wait;
	uint64_t calls, ns;		/* the last interval */
	uint64_t p99_ns;		/* ... its calls' p99, 0: none, or no histogram */
	uint64_t calls_all, ns_all, max_ns;	/* since the start */
};

/* A syscall, over the processes shown. */
struct top_sys {
	char name[SYS_NAME_LEN];
	uint64_t calls, errors, ns, p50_ns, p99_ns, max_ns;	/* the last interval */
	uint64_t calls_all, errors_all, ns_all;
};

/* A process that has samples: what the filter cycles through. */
struct top_proc {
	uint64_t pid;
	const char *comm;		/* interned */
	uint64_t cpu_ns;		/* the last interval */
	bool active;			/* its samples grew in it */
};

/* What the header says; the caller fills the counters the profile does not hold. */
struct top_header {
	uint64_t elapsed_ns;		/* since the start */
	uint64_t interval_ns;		/* between the two looks */
	uint64_t samples, samples_all;	/* CPU samples of the targets */
	uint64_t lost, lost_all;	/* everything counted lost */
	uint64_t cpu_ns;		/* the targets' CPU in the interval */
	unsigned int processes, threads;	/* alive now */
	double self_cpu;		/* latprof's own CPU, share of one core */
	bool have_cpu, have_syscalls;	/* the collectors that ran */
	uint64_t min_duration_us;	/* the slow-syscall threshold (the caller's) */
};

struct top_model {
	struct strtab *names;		/* every name shown; lives as long as the model */
	struct profile *prev, *cur;	/* the two last looks (owned) */
	struct sys_stats prev_sys, cur_sys;	/* and their syscall statistics */
	bool sys_failed;		/* reading cur_sys failed: compute says so */
	struct hot_filter filter;	/* pid 0: every process */
	const char *zoom;		/* a function's callers and callees, NULL: none */
	struct top_header hdr;
	struct { struct top_func *items; size_t nr, alloc; } funcs, callers, callees;
	struct { struct top_site *items; size_t nr, alloc; } sites;
	struct { struct top_sys *items; size_t nr, alloc; } sys;
	struct { struct top_proc *items; size_t nr, alloc; } procs;
	/*
	 * Since the start, added to at each look with what changed (the
	 * processes whose samples grew), counted again from the newer look
	 * when the filter or the zoom changes: a look costs what the active
	 * processes' samples cost, not what every process ever seen does.
	 */
	struct hot_funcs all_funcs, all_zoom_funcs[2];
	struct hot_sites all_sites;
	bool all_valid;			/* they are of the filter and zoom below */
	uint64_t all_pid;
	const char *all_zoom;
	bool pushed;			/* a look came since they were added to */
};

/* 0 or -ENOMEM. */
int top_model_init(struct top_model *m, unsigned int stack_flags);
void top_model_release(struct top_model *m);

/*
 * Take look @p (owned from now on) taken @elapsed_ns after the start, with
 * its syscall statistics @sys (taken over and emptied; NULL: read from @p's
 * metadata): it becomes the newer look, the newer one the older.
 */
void top_model_push(struct top_model *m, struct profile *p, struct sys_stats *sys,
		    uint64_t elapsed_ns);

/*
 * Compute every table from the two looks, with the filter and the zoom as
 * they are now (after a key changed them, without a new look). Rows are
 * sorted by the last interval's weight. 0 or -ENOMEM.
 */
int top_model_compute(struct top_model *m);

/* Column a view sorts by (0: its default); see top_model_sort. */
enum top_sort {
	TOP_SORT_NOW,		/* the last interval's time (own, site's, syscall's) */
	TOP_SORT_TOTAL,		/* functions: total; sites, syscalls: calls */
	TOP_SORT_ALL,		/* since the start: total, site's time, syscall's calls */
	TOP_SORT_NAME,
	TOP_SORTS
};

/* Sort @view's rows (the zoom's too) by @sort. Cannot fail. */
void top_model_sort(struct top_model *m, enum top_view view, enum top_sort sort);

#endif
