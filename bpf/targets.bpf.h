/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which processes are targets, and their state (struct lp_proc in procs):
 * the check every program makes first (current_target), a process's start
 * (proc_add) and its block of the per-CPU syscall statistics array
 * (proc_fast_base). Processes become targets by -p or as the command (user
 * space), as children of targets (targets.bpf.c, at fork), and by -a or
 * --comm (here, when they first run a program).
 */
#ifndef LATPROF_TARGETS_BPF_H
#define LATPROF_TARGETS_BPF_H

#include "common.bpf.h"

static __always_inline bool comm_matches(const char *comm)
{
	__u32 i, j;

	for (i = 0; i < LP_MAX_COMMS && i < cfg_nr_comms; i++) {
		for (j = 0; j < LP_COMM_LEN; j++) {
			if (comm[j] != cfg_comms[i][j])
				break;
			if (!comm[j])
				return true;
		}
		if (j == LP_COMM_LEN)
			return true;
	}
	return false;
}

/*
 * Can @tgid be a target? false is certain (its bit is clear, and neither -a
 * nor --comm can make it one now); true has to be confirmed in procs.
 */
static __always_inline bool maybe_target(__u32 tgid)
{
	if (cfg_all || cfg_nr_comms)
		return true;
	return lp_target_bits[(tgid / 64) & (LP_TARGET_WORDS - 1)] & (1ULL << (tgid & 63));
}

static __always_inline void target_bit_set(__u32 tgid)
{
	__sync_fetch_and_or(&lp_target_bits[(tgid / 64) & (LP_TARGET_WORDS - 1)],
			    1ULL << (tgid & 63));
}

/* Start tracing @tgid. Returns its state, or NULL when the map is full. */
static __always_inline struct lp_proc *proc_add(__u32 tgid, __u32 ppid)
{
	struct lp_proc zero = {};
	long err;

	zero.stamp = __sync_fetch_and_add(&lp_proc_stamps, 1) + 1;
	err = bpf_map_update_elem(&procs, &tgid, &zero, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(LP_STAT_PROCS_DROPPED);
		return NULL;
	}
	target_bit_set(tgid);
	if (!err)
		event_send(LP_EVENT_NEW, tgid, ppid, 0);
	return bpf_map_lookup_elem(&procs, &tgid);
}

/*
 * The target check every program does first, for the current task. Processes
 * become targets here when -a or --comm says so. Returns the process state
 * or NULL when the current task is not traced.
 */
static __always_inline struct lp_proc *current_target(__u32 tgid)
{
	struct lp_proc *p;
	char comm[LP_COMM_LEN];

	if (!maybe_target(tgid))
		return NULL;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p || !tgid || tgid == cfg_self_tgid)
		return p;
	if (cfg_all)
		return proc_add(tgid, 0);
	if (!cfg_nr_comms)
		return NULL;
	bpf_get_current_comm(comm, sizeof(comm));
	if (!comm_matches(comm))
		return NULL;
	return proc_add(tgid, 0);
}

/*
 * A free block of sys_fast for @tgid, claimed: 1 + its index, 0 if none is
 * free. A block is free while its owner in fast_slots is 0; serve hands
 * blocks back (src/collect/drain.c) once their process has gone.
 */
static __always_inline __u32 fast_slot_alloc(__u32 tgid)
{
	__u32 key, *owner, slot;

	for (slot = 0; slot < LP_SYS_FAST_SLOTS; slot++) {
		if (slot >= cfg_sys_fast_slots)
			break;
		key = slot + 1;
		owner = bpf_map_lookup_elem(&fast_slots, &key);
		if (owner && !*owner && !__sync_val_compare_and_swap(owner, 0, tgid))
			return slot + 1;
	}
	return 0;
}

/*
 * The first index of @proc's block of sys_fast, or -1 (its calls go to the
 * hash). The block is claimed when a thread of the process first needs its
 * state (its first syscall, or first switch off the CPU with --mode
 * offcpu), not when it becomes a target: with -a the CPU sampler makes
 * every process a target, kernel threads too, which make no syscall and
 * never exit, and -p can name one (-p 2).
 * A process that found none free tries again at its next thread's first
 * need.
 */
static __always_inline __s32 proc_fast_base(struct lp_proc *proc, __u32 tgid)
{
	__u32 slot = proc->fast_slot, prev, key, *owner;

	if (!slot && cfg_sys_fast_slots) {
		slot = fast_slot_alloc(tgid);
		prev = slot ? __sync_val_compare_and_swap(&proc->fast_slot, 0, slot) : 0;
		if (prev) {
			/* another of its threads claimed one first: ours goes back */
			key = slot;
			owner = bpf_map_lookup_elem(&fast_slots, &key);
			if (owner)
				__sync_val_compare_and_swap(owner, tgid, 0);
			slot = prev;
		}
	}
	return slot ? (slot - 1) * LP_MAX_SYSCALL_NR : -1;
}

#endif
