/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Aggregation of user-space-unwound samples: identical (process, thread name,
 * kernel stack id, user pcs) add up, so memory grows with distinct stacks,
 * not with samples. The in-kernel map does this for frame-pointer stacks;
 * DWARF-unwound stacks only exist in user space.
 */
#ifndef LATPROF_STACKAGG_H
#define LATPROF_STACKAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/sysstats.h"

struct stackagg_key {
	uint32_t tgid;
	uint32_t gen;		/* exec generation */
	int32_t kstack_id;	/* kernel stack map id or -errno */
	uint32_t kind;		/* enum lp_sample_kind */
	int32_t nr;		/* syscall number, -1 for none */
	uint32_t wait;		/* enum lp_wait (syscalls.h: syscall_wait_decided) */
	uint32_t gil;		/* 1: a syscall that waited for the GIL (src/gil.h) */
	char comm[16];
};

/* What one event adds. */
struct stackagg_values {
	uint64_t value;		/* CPU samples, or ns of a slow syscall */
	uint64_t blocked_ns;	/* off CPU, waiting */
	uint64_t preempted_ns;	/* off CPU, runnable */
	uint64_t stall_ns;	/* of an event-loop stall (src/stalls.h) */
	uint64_t await_ns;	/* an asyncio task suspended (src/awaits.h) */
	bool hist;		/* value is a slow syscall's ns: count it in the histogram */
};

struct stackagg_entry {
	struct stackagg_key key;
	uint64_t count;		/* events with a nonzero value */
	struct stackagg_values sum;
	uint64_t max_value;	/* the largest single value */
	struct sys_stat *hist;	/* the values' log2 histogram (hist set), or NULL */
	size_t nr_pcs;
	uint64_t pcs[];		/* user pcs, leaf first */
};

struct stackagg;

/* A new empty aggregation, or NULL with errno set. */
struct stackagg *stackagg_new(void);
/* NULL is a no-op. */
void stackagg_free(struct stackagg *a);
/* Empty @a (a window cut out of a running session); its table stays. Cannot fail. */
void stackagg_clear(struct stackagg *a);
/* Add one event with values @v. 0 or -ENOMEM. */
int stackagg_add(struct stackagg *a, const struct stackagg_key *key, const uint64_t *pcs,
		 size_t nr_pcs, const struct stackagg_values *v);
/* Whether stackagg_keep keeps entry @e. */
typedef bool (*stackagg_keep_fn)(void *arg, const struct stackagg_entry *e);
/*
 * Keep only the entries @keep keeps (the others are freed; the indexes of
 * the rest change); returns how many went. Cannot fail.
 */
size_t stackagg_keep(struct stackagg *a, stackagg_keep_fn keep, void *arg);

/* Distinct stacks, and the i-th (borrowed until stackagg_free). Cannot fail. */
size_t stackagg_nr(const struct stackagg *a);
const struct stackagg_entry *stackagg_get(const struct stackagg *a, size_t i);

#endif
