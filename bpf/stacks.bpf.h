/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stack ids: a kernel or frame-pointer user stack stored once in the stacks
 * map and named by a small id (stack_get), the losses counted by cause, and
 * time charged to a pair of ids in timed_samples (timed_add). DWARF user
 * stacks are not ids: they are copied to user space (ustack.bpf.h).
 */
#ifndef LATPROF_STACKS_BPF_H
#define LATPROF_STACKS_BPF_H

#include "common.bpf.h"

/* Count a stack_get failure: the map full, the stack unreadable, or other. */
static __always_inline void count_stack_error(__s32 id, __u32 full, __u32 efault, __u32 other)
{
	if (id >= 0)
		return;
	if (id == -ENOSPC)
		stat_inc(full);
	else if (id == -EFAULT)
		stat_inc(efault);
	else
		stat_inc(other);
}

/*
 * An interval charged without its stacks: stack_get() failed when it began
 * (-ENOENT is no failure: a stack not taken on purpose).
 */
static __always_inline void count_offcpu_stack_errors(__s32 kstack, __s32 ustack)
{
	if (kstack != -ENOENT)
		count_stack_error(kstack, LP_STAT_KSTACK_FULL, LP_STAT_KSTACK_EFAULT,
				  LP_STAT_KSTACK_OTHER);
	if (ustack != -ENOENT)
		count_stack_error(ustack, LP_STAT_USTACK_FULL, LP_STAT_USTACK_EFAULT,
				  LP_STAT_USTACK_OTHER);
}

struct stack_hash_state {
	const struct lp_stack *st;
	__u64 h;
};

/* One frame into the hash: multiply and fold. */
static __always_inline long stack_hash_step(__u32 i, struct stack_hash_state *c)
{
	if (i >= LP_STACK_FRAMES)
		return 1;
	c->h ^= c->st->ips[i];
	c->h *= 0xff51afd7ed558ccdULL;
	c->h ^= c->h >> 32;
	return 0;
}

static long stack_hash_cb(__u32 i, void *c)
{
	return stack_hash_step(i, c);
}

/*
 * A 64-bit hash of the @nr frames of @st. In bpf_loop (5.17) the verifier
 * goes through the step once; unrolled, the 119 steps of each of the
 * sampler's two calls made on_cpu_sample 2,700 instructions and 4 ms longer
 * to load.
 */
static __always_inline __u64 stack_hash(const struct lp_stack *st, __u32 nr)
{
	struct stack_hash_state c = { .st = st, .h = (nr + 1) * 0x9e3779b97f4a7c15ULL };
	__u32 i;

	if (cfg_bpf_loop) {
		bpf_loop(nr, stack_hash_cb, &c, 0);
		return c.h;
	}
	for (i = 0; i < LP_STACK_FRAMES && i < nr; i++)
		stack_hash_step(i, &c);
	return c.h;
}

/*
 * The id of the stack of @ctx (@flags as for bpf_get_stack: 0 for the
 * kernel stack, BPF_F_USER_STACK), added to the stacks map when new.
 * bpf_get_stackid's map is a hash table without chains: a stack whose
 * bucket holds another one is refused (-EEXIST) at birthday odds, long
 * before the map is full (2500 distinct stacks in 4096 buckets lose 630).
 * Here the kernel's hash table keeps both, so a stack is lost only when
 * cfg_max_stacks are taken (-ENOSPC). Two stacks of the same 64-bit hash
 * are told apart by depth and leaf frame and the second one is refused
 * (-EEXIST, counted as an error: not seen so far). @sampler: the CPU
 * sampler, which can interrupt a tracepoint program's stack_get on the
 * same CPU, uses its own scratch record.
 */
static __always_inline __s32 stack_get(void *ctx, __u64 flags, const bool sampler)
{
	__u32 slot = sampler ? 0 : 1, nr;
	struct lp_stack *st, *old;
	long len, err;
	__u64 h;

	st = bpf_map_lookup_elem(&stack_scratch, &slot);
	if (!st)
		return -ENOENT;
	/* the helper zeroes the rest of ips[] */
	len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	if (len <= 0)
		return len < 0 ? len : -EFAULT;
	nr = len / sizeof(st->ips[0]);
	h = stack_hash(st, nr);
	old = bpf_map_lookup_elem(&stacks, &h);
	if (!old) {
		if (stack_next_id >= cfg_max_stacks)
			return -ENOSPC;
		st->id = __sync_fetch_and_add(&stack_next_id, 1);
		st->nr = nr;
		err = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);
		if (!err)
			return st->id;
		/* full (-E2BIG), an allocation failed, or another CPU added it first */
		if (err != -EEXIST)
			return err == -E2BIG ? -ENOSPC : err;
		old = bpf_map_lookup_elem(&stacks, &h);
		if (!old)
			return -ENOENT;
	}
	if (old->nr != nr || old->ips[0] != st->ips[0])
		return -EEXIST;
	return old->id;
}

/* Add to the in-kernel aggregation of frame-pointer timed samples. */
static __always_inline void timed_add(struct lp_timed_key *key, __u64 latency_ns,
				      __u64 blocked_ns, __u64 preempted_ns)
{
	struct lp_timed_value *v, zero = {};

	v = map_lookup_or_init(&timed_samples, key, &zero, NULL);
	if (!v) {
		stat_inc(LP_STAT_TIMED_DROPPED);
		return;
	}
	if (latency_ns) {
		__sync_fetch_and_add(&v->count, 1);
		__sync_fetch_and_add(&v->latency_ns, latency_ns);
		if (latency_ns > v->max_ns)
			v->max_ns = latency_ns;	/* racy by design: a max, not a sum */
	}
	if (blocked_ns)
		__sync_fetch_and_add(&v->blocked_ns, blocked_ns);
	if (preempted_ns)
		__sync_fetch_and_add(&v->preempted_ns, preempted_ns);
}

#endif
