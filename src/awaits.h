/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Await attribution for a recording (CPython 3.14+): a wall-clock walk of
 * each traced Python process's asyncio tasks (symbolize/pyasync.h), @hz
 * times a second, from user space, with nothing stopped. Every task found
 * suspended at an await is charged the time since the process's previous
 * walk, on a stack of its await chain (the coroutine frames from the
 * innermost awaiting one out to the task's own, under a "[task NAME]"
 * frame), kind LP_SAMPLE_AWAIT in the recording's stack aggregation: the
 * profile's "await" column. Owned by the record session; knows nothing
 * about the skeleton. Processes before 3.14 have no structures an outside
 * tool can find and are listed as such.
 */
#ifndef LATPROF_AWAITS_H
#define LATPROF_AWAITS_H

#include <stdint.h>

struct awaits;
struct profile;
struct pystacks;
struct stackagg;

/*
 * A walker at @hz (1..1000) whose stacks go to @agg, named through @ps
 * (both the caller's, outliving it). NULL with errno set.
 */
struct awaits *awaits_new(struct pystacks *ps, struct stackagg *agg, unsigned int hz);
/* NULL is a no-op. */
void awaits_free(struct awaits *a);

/*
 * Image (@pid, @gen) runs a walkable Python: look at its tasks from now on,
 * and no longer at the process's other images (as awaits_forget).
 */
void awaits_add(struct awaits *a, int pid, uint32_t gen);
/* @pid exited (@new_gen 0) or exec'ed image @new_gen: its older images are not walked again. */
void awaits_forget(struct awaits *a, int pid, uint32_t new_gen);

/* Milliseconds until the next walk is due at @now_ns; -1: nothing to walk. */
int awaits_due_ms(const struct awaits *a, uint64_t now_ns);
/* Walk every process whose walk is due at @now_ns. 0 or -ENOMEM. */
int awaits_tick(struct awaits *a, uint64_t now_ns);

/*
 * Into the profile's metadata: "awaits.hz", "awaits.walks", the walks' own
 * time "awaits.walk_ns", and per process "proc.PID.awaits" (what was found:
 * "asyncio", or why not) with its counts. 0 or -ENOMEM.
 */
int awaits_store(const struct awaits *a, struct profile *p);

#endif
