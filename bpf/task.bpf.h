/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-thread state of the syscall and off-CPU programs (struct lp_task in
 * a slot of task_slots), and the regs cache that finds it: a thread's slot
 * by the address of its syscall registers, one load on the hot path, and
 * for threads that are not targets the answer "not a target". A thread's
 * slot is found by probing from its tid (task_slot_probe); it is taken at
 * the thread's first syscall or switch off the CPU (task_state_get) and
 * given back at its exit (task_slot_release).
 */
#ifndef LATPROF_TASK_BPF_H
#define LATPROF_TASK_BPF_H

#include "common.bpf.h"
#include "targets.bpf.h"

/*
 * The regs cache's key for the thread whose syscall registers are at @regs:
 * the address's bits 14-61 (x86_64 kernel stacks are 16 KiB or more, so no
 * two live threads share them; 57-bit addresses fit).
 */
static __always_inline __u64 regs_key(__u64 regs)
{
	return (regs >> 14) & ((1ULL << (64 - LP_REGS_VAL_BITS)) - 1);
}

static __always_inline __u64 *regs_cache_entry(__u64 key)
{
	return &lp_regs_cache[key & (LP_REGS_CACHE_SLOTS - 1)];
}

/*
 * Cache @val (LP_REGS_NOT_TARGET, or a task_slots index + 1) for the current
 * thread @task, whose registers are at @regs. The first call learns where a
 * thread's registers are from the start of its stack, which
 * regs_cache_forget needs; an unlikely answer turns the cache off.
 */
static __always_inline void regs_cache_put(struct task_struct *task, __u64 regs, __u64 val)
{
	__u64 off = lp_regs_offset;

	if (!off) {
		off = regs - (__u64)task->stack;
		off = off >= 8192 && off < 65536 ? off : 1;
		lp_regs_offset = off;
	}
	if (off != 1)
		*regs_cache_entry(regs_key(regs)) = regs_key(regs) << LP_REGS_VAL_BITS | val;
}

/*
 * Clear the entry of new task @child's registers (at fork, before it runs):
 * what was cached for a thread that had the same kernel stack before is not
 * about this one.
 */
static __always_inline void regs_cache_forget(struct task_struct *child)
{
	__u64 off = lp_regs_offset, key, *e, old;

	if (off <= 1)
		return;
	key = regs_key((__u64)BPF_CORE_READ(child, stack) + off);
	e = regs_cache_entry(key);
	old = *e;
	if (old >> LP_REGS_VAL_BITS == key)
		__sync_val_compare_and_swap(e, old, 0);
}

/* Which slot task_slot_probe looks for. */
enum task_probe {
	TASK_PROBE_OWNED,	/* owned by @tid, which started at @match (start_time) */
	TASK_PROBE_OF_TGID,	/* owned by @tid, of process @match (task_slot_rekey) */
	TASK_PROBE_CLAIM,	/* free: taken for @tid, for the caller to fill in */
};

/*
 * The task_slots slot of thread @tid that @how says (a constant), or NULL:
 * at @tid modulo LP_TASK_SLOTS or one of the LP_TASK_PROBES after it (its
 * index in *@slot). Inlined array lookups: the task-storage helper this
 * replaces cost 20-30 ns per call (docs/performance.md). Only the owner's
 * programs write a slot, so a claimed one is the caller's alone.
 */
static __always_inline struct lp_task_slot *task_slot_probe(__u32 tid, __u64 match,
							    const enum task_probe how, __u32 *slot)
{
	struct lp_task_slot *s;
	__u32 key, i;
	bool hit;

	for (i = 0; i < LP_TASK_PROBES; i++) {
		key = (tid + i) & (LP_TASK_SLOTS - 1);
		s = bpf_map_lookup_elem(&task_slots, &key);
		if (!s)
			return NULL;
		if (how == TASK_PROBE_OWNED)
			hit = s->tid == tid && s->start_time == match;
		else if (how == TASK_PROBE_OF_TGID)
			hit = s->tid == tid && s->t.tgid == match;
		else
			hit = !s->tid && !__sync_val_compare_and_swap(&s->tid, 0, tid);
		if (hit) {
			*slot = key;
			return s;
		}
	}
	return NULL;
}

/* Free the task_slots slot of exiting thread @task, if it owns one. */
static __always_inline void task_slot_release(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid), slot;
	struct lp_task_slot *s;

	s = task_slot_probe(tid, BPF_CORE_READ(task, start_time), TASK_PROBE_OWNED, &slot);
	if (s)
		__sync_val_compare_and_swap(&s->tid, tid, 0);
}

/*
 * Thread @task of @tgid, once @old_tid, has just exec'd from a thread that
 * was not the leader: de_thread gave it the leader's pid and start time, so
 * its state can no longer be found under its old identity, and the old
 * slot would never be freed (its exit looks for the new one). Move the state
 * to a slot of the new identity and point the regs cache there; the
 * execve in flight is then timed at its sys_exit as before. Only @task runs
 * its programs now (de_thread has ended the other threads).
 */
static __always_inline void task_slot_rekey(struct task_struct *task, __u32 old_tid, __u32 tgid)
{
	__u32 tid = BPF_CORE_READ(task, pid), from, to = 0;
	__u64 off = lp_regs_offset, rk;
	struct lp_task_slot *o, *n;

	o = task_slot_probe(old_tid, tgid, TASK_PROBE_OF_TGID, &from);
	if (!o)
		return;
	n = task_slot_probe(tid, 0, TASK_PROBE_CLAIM, &to);
	if (n) {
		n->start_time = BPF_CORE_READ(task, start_time);
		n->regs_owner = 0;
		__builtin_memcpy(&n->t, &o->t, sizeof(n->t));
		/* the thread is current: its registers are where it cached them */
		if (off > 1) {
			rk = regs_key((__u64)BPF_CORE_READ(task, stack) + off);
			n->regs_owner = rk;
			*regs_cache_entry(rk) = rk << LP_REGS_VAL_BITS | (to + 1);
		}
	} else {
		stat_inc(LP_STAT_TASK_STATE_FAILED);
	}
	__sync_val_compare_and_swap(&o->tid, old_tid, 0);
}

/* The state of target thread @tid that started at @start, or NULL. */
static __always_inline struct lp_task *task_state_of(__u32 tid, __u64 start, __u32 *slot)
{
	struct lp_task_slot *s = task_slot_probe(tid, start, TASK_PROBE_OWNED, slot);

	return s ? &s->t : NULL;
}

/* The state of target thread @task, a trusted pointer (read directly). */
static __always_inline struct lp_task *task_state_find(struct task_struct *task)
{
	__u32 slot;

	return task_state_of(task->pid, task->start_time, &slot);
}

/*
 * The state in task_slots slot @slot, which the regs cache gave for the
 * thread whose cache key is @key: NULL unless the slot is owned and was
 * cached by that thread (its kernel stack), so a stale entry is only a miss.
 */
static __always_inline struct lp_task *task_state_at(__u32 slot, __u64 key)
{
	struct lp_task_slot *s = bpf_map_lookup_elem(&task_slots, &slot);

	if (!s || !s->tid || s->regs_owner != (__u32)key)
		return NULL;
	/* or the compiler offsets s before the check, which the verifier refuses */
	asm volatile("" : "+r"(s));
	return &s->t;
}

/*
 * The state of target thread @task of @proc, created on first use in the
 * first free slot of its probes (its index in *@slot); NULL (counted) when
 * all are taken.
 */
static __always_inline struct lp_task *task_state_get(struct task_struct *task,
						      struct lp_proc *proc, __u32 tgid, __u32 *slot)
{
	struct lp_task_slot *s;
	struct lp_task *t;

	t = task_state_of(task->pid, task->start_time, slot);
	if (t)
		return t;
	s = task_slot_probe(task->pid, 0, TASK_PROBE_CLAIM, slot);
	if (!s) {
		stat_inc(LP_STAT_TASK_STATE_FAILED);
		return NULL;
	}
	s->regs_owner = 0;
	__builtin_memset(&s->t, 0, sizeof(s->t));
	s->start_time = task->start_time;
	t = &s->t;
	t->tgid = tgid;
	t->stamp = proc->stamp;
	t->fast_base = proc_fast_base(proc, tgid);
	t->pend_kstack = -ENOENT;
	return t;
}

/*
 * What the regs cache says about the thread whose registers are at address
 * @regs: true when it has an answer, in *@t (NULL: not a target).
 */
static __always_inline bool regs_cache_get(__u64 regs, struct lp_task **t)
{
	__u64 key = regs_key(regs), v = *regs_cache_entry(key);
	__u32 val = v & ((1U << LP_REGS_VAL_BITS) - 1);

	if (v >> LP_REGS_VAL_BITS != key)
		return false;
	*t = val == LP_REGS_NOT_TARGET ? NULL : task_state_at(val - 1, key);
	return val == LP_REGS_NOT_TARGET || *t;
}

#define TASK_RUNNING 0

/* task_struct before 5.14, whose state was not yet __state */
struct task_struct___pre514 {
	long state;
};

/* The run state of @task (0: TASK_RUNNING); renamed to __state in 5.14 (commit 2f064a59a11f). */
static __always_inline unsigned int task_run_state(struct task_struct *task)
{
	struct task_struct___pre514 *old = (void *)task;

	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ(old, state);
}

#endif
