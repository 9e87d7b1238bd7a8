/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tables a hotspot view is made of, computed from a profile and printed
 * by others: functions by self and total weight, and the call sites of the
 * slow syscalls grouped by their "wait" label. `latprof report` prints them
 * once (report.c, report_sys.c); `latprof top` computes them every interval
 * and shows what changed (top.h). Names are interned in the caller's strtab,
 * so a name is one pointer for as long as that strtab lives.
 */
#ifndef LATPROF_HOTSPOTS_H
#define LATPROF_HOTSPOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"
#include "src/profile.h"
#include "src/sysstats.h"
#include "src/weight.h"

/* The samples a table counts. */
struct hot_filter {
	uint64_t pid;			/* only this process's ("pid" label); 0: all */
	const struct hashmap *pids;	/* and only those whose pid is a key
					 * (NULL obj, pid, 0) here; NULL: all */
	unsigned int stack_flags;	/* enum stacks_flag to add (STACKS_FLAG_NATIVE) */
};

/* Does @f keep sample @s? */
bool hot_keeps(const struct hot_filter *f, const struct profile_sample *s);

struct hot_func {
	const char *name;	/* interned: the key */
	uint64_t self, total;
	size_t last_sample;	/* counts a recursive function once per sample */
};

struct hot_funcs {
	struct hot_func *items;
	size_t nr, alloc;
	struct hashmap idx;	/* name -> index + 1 (until sorted) */
};

/*
 * Add the weight @w of @p's samples (those @f keeps) to each function of
 * their stacks in @t: self for the innermost frame, total once per sample
 * for every frame. 0 or -ENOMEM.
 */
int hot_funcs_count(const struct profile *p, const struct profile_weight *w,
		    const struct hot_filter *f, struct strtab *names, struct hot_funcs *t);
/* The entry of @name (interned in the same strtab), NULL: none. */
struct hot_func *hot_funcs_find(const struct hot_funcs *t, const char *name);
/* ... added empty when new; NULL: out of memory. */
struct hot_func *hot_funcs_get(struct hot_funcs *t, const char *name);
/*
 * Weight @v of sample number @sample met function @name: its total grows
 * once per sample, its self when @self (innermost). 0 or -ENOMEM.
 */
int hot_funcs_add(struct hot_funcs *t, const char *name, size_t sample, int64_t v, bool self);
/* By self weight, then total, then name; the index is of no use afterwards. */
void hot_funcs_sort(struct hot_funcs *t);
void hot_funcs_release(struct hot_funcs *t);

/* The groups of sites, in the order they are printed: by their "wait" label. */
enum hot_wait { HOT_WAIT_PATH, HOT_WAIT_READY, HOT_WAIT_IDLE, HOT_WAITS };

#define HOT_SITE_FRAMES 4	/* innermost frames that name a call site */
#define HOT_SITE_WIDTH 54	/* columns for them */

struct hot_site {
	/* interned: its group's digit, then "syscall:NAME\tframes;..." */
	const char *name;
	uint64_t total_ns, calls, max_ns;
	enum hot_wait wait;
	/*
	 * The calls' log2 histogram (the samples' "latency_hist" labels:
	 * DWARF-unwound stacks), hist.count of the calls it holds.
	 */
	struct sys_stat hist;
};

struct hot_sites {
	struct hot_site *items;
	size_t nr, alloc;
	struct hashmap idx;	/* name -> index + 1 (until sorted) */
};

/*
 * The slow syscalls of @p (latency column @lat, count column @calls or -1)
 * by call site: the syscall and the innermost program frames (a Python
 * stack ends at the C function its innermost Python frame called). 0 or
 * -ENOMEM.
 */
int hot_sites_collect(const struct profile *p, int lat, int calls, const struct hot_filter *f,
		      struct strtab *names, struct hot_sites *t);
struct hot_site *hot_sites_find(const struct hot_sites *t, const char *name);
/* ... added empty in group @wait when new; NULL: out of memory. */
struct hot_site *hot_sites_get(struct hot_sites *t, const char *name, enum hot_wait wait);
/* Path of work first, then undecided, idle last; each by total time. */
void hot_sites_sort(struct hot_sites *t);
void hot_sites_release(struct hot_sites *t);

/* A site's name as printed, after its group's digit. */
static inline const char *hot_site_text(const char *name)
{
	return name + 1;
}

#endif
