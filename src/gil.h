/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * GIL waits of Python threads (record on a CPython with a GIL; the
 * detection is bpf/gil.bpf.h's): per thread, its time waiting to take the
 * GIL, which is the time of its futex waits on the GIL's own condition
 * variables and mutexes, and its time holding it, which is its CPU samples
 * that found it the GIL's holder (locked, last_holder its PyThreadState),
 * each worth the sampling period; beside them its CPU samples, holding or
 * not (a thread in C code that released the GIL runs without it). The
 * waits are also syscall time of futex: the report and exports move them
 * from the "sync" category to "gil".
 *
 * Metadata: "gil.threads" (their number), "gil.dropped" (waits and samples
 * not kept: the kernel's map of threads was full) and records
 * "pid,tid,waits,wait_ns,cpu_ns,held_ns" in gil.N (src/metarecords.h),
 * present only when the recording saw a Python thread with a GIL. This
 * module stores, loads and sums the list; it detects nothing.
 */
#ifndef LATPROF_GIL_H
#define LATPROF_GIL_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

struct gil_thread {
	uint32_t pid, tid;
	uint64_t waits;		/* futex waits on the GIL */
	uint64_t wait_ns;	/* their time (one in flight at the stop: up to it) */
	uint64_t cpu_ns;	/* CPU samples of the thread x period */
	uint64_t held_ns;	/* of them, those holding the GIL */
};

struct gil_threads {
	struct gil_thread *items;
	size_t nr, alloc;
};

/* Append @t; 0 or -ENOMEM. */
int gil_threads_add(struct gil_threads *g, const struct gil_thread *t);
/* Free what @g holds; it is empty afterwards. */
void gil_threads_release(struct gil_threads *g);

/*
 * Store @g (sorted by pid, then tid) in @p's metadata with @dropped; nothing
 * when @g is empty and nothing was dropped. 0 or -ENOMEM.
 */
int gil_store(struct profile *p, struct gil_threads *g, uint64_t dropped);

/*
 * Load the threads of @p into @out (empty). -ENOENT when the profile has
 * none (no Python thread with a GIL, or recorded before latprof knew
 * GILs); 0 or -ENOMEM. Malformed records are skipped.
 */
int gil_load(const struct profile *p, struct gil_threads *out);

/* The threads' GIL waits of process @pid (0: of every process), in ns. Cannot fail. */
uint64_t gil_wait_ns(const struct gil_threads *g, uint32_t pid);

/* Sort @g by wait_ns, largest first (then pid, tid). Cannot fail. */
void gil_sort_by_wait(struct gil_threads *g);

#endif
