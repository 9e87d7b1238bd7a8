/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every latprof BPF program shares: the maps and configuration defined in
 * targets.bpf.c (declared extern here; bpftool links the objects into one),
 * and the target check that each program does first.
 */
#ifndef LATPROF_COMMON_BPF_H
#define LATPROF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "latprof.h"

/* errno values (vmlinux.h has no macros) */
#define ENOENT 2
#define EFAULT 14
#define EEXIST 17
#define E2BIG 7
#define ENOSPC 28
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

extern const volatile __u32 cfg_all;		/* -a: every process is a target */
extern const volatile __u32 cfg_nr_comms;	/* --comm filters in cfg_comms */
extern const volatile __u32 cfg_self_tgid;	/* latprof itself: never a target */
extern const volatile char cfg_comms[LP_MAX_COMMS][LP_COMM_LEN];
extern const volatile __u32 cfg_sys_fast_slots;	/* <= LP_SYS_FAST_SLOTS */
extern const volatile __u32 cfg_bpf_loop;	/* the kernel has bpf_loop (5.17) */
extern __u64 lp_target_bits[LP_TARGET_WORDS];	/* latprof.h */
extern __u32 lp_proc_stamps;	/* the last struct lp_proc.stamp given */
extern __u64 lp_regs_cache[LP_REGS_CACHE_SLOTS];	/* latprof.h */
extern __u64 lp_regs_offset;	/* pt_regs - task_struct.stack: 0 unknown yet, 1 cache off */

/*
 * Map types are named so that the definitions in targets.bpf.c and the extern
 * declarations here are the same type (the BPF linker requires it).
 */
struct procs_map {	/* tgid -> state of every target process */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);	/* resized by user space before load */
	__type(key, __u32);
	__type(value, struct lp_proc);
};

struct stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LP_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
};

struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* about 2,700 exits (fork, exec, exit of 900 processes): a busy machine's second */
	__uint(max_entries, 1024 * 1024);
};

/*
 * Kernel stacks, and frame-pointer user stacks (stack_get): a hash table with
 * chains, keyed by a 64-bit hash of the frames. Allocated on use where the
 * kernel lets a perf_event program use such a map (6.1; user space sets
 * BPF_F_NO_PREALLOC then), so max_entries is a cap, not memory.
 */
struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* resized by user space before load */
	__type(key, __u64);
	__type(value, struct lp_stack);
};

/* Where stack_get builds a stack: [0] the CPU sampler, [1] tracepoints. */
struct stack_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct lp_stack);
};

/*
 * Blocks of the per-CPU syscall stats array (syscall.bpf.c), handed out to
 * processes as they become targets: [1 + i] = the tgid that owns block i,
 * 0 while it is free ([0] is not used).
 */
struct fast_slots_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_SYS_FAST_SLOTS + 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct task_slots_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_TASK_SLOTS);
	__type(key, __u32);
	__type(value, struct lp_task_slot);
};

extern struct procs_map procs SEC(".maps");
extern struct task_slots_map task_slots SEC(".maps");
extern struct fast_slots_map fast_slots SEC(".maps");
extern struct stacks_map stacks SEC(".maps");
extern struct stack_scratch_map stack_scratch SEC(".maps");
extern __u32 stack_next_id;	/* ids handed out so far */
extern const volatile __u32 cfg_max_stacks;	/* the stacks map's max_entries */
extern struct stats_map stats SEC(".maps");
extern struct events_map events SEC(".maps");

static __always_inline void stat_inc(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += 1;	/* per-CPU slot: no atomic needed */
}

/* Tell user space about a target's lifecycle; counts a loss if full. */
static __always_inline void event_send(__u32 type, __u32 pid, __u32 ppid, __u32 gen)
{
	struct lp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(LP_STAT_EVENTS_LOST);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->ppid = ppid;
	e->gen = gen;
	e->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	stat_inc(LP_STAT_EVENTS);
	bpf_ringbuf_submit(e, 0);
}

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
 * Syscall number @nr, known to be below LP_MAX_SYSCALL_NR, as an index of an
 * array of that size, masked where the verifier sees it: the compiler drops a
 * mask it can prove redundant, and 6.1's verifier loses the bound of a value
 * spilled to the stack and filled into another register ("unbounded memory
 * access" in tp_sys_exit with --requests, found by make check-kernels).
 */
static __always_inline __u32 sys_index(long nr)
{
	__u32 i = nr;

	asm volatile("" : "+r"(i));
	return i & (LP_MAX_SYSCALL_NR - 1);
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

/*
 * Field @field of the syscall registers @regs a syscall hook was given: a
 * plain load when the hook is tp_btf (@typed, a constant: the kernel typed
 * the pointer), a probe read when it is raw_tp (to the verifier a number).
 */
#define SYS_REG(regs, typed, field) ((typed) ? (regs)->field : BPF_CORE_READ(regs, field))

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

/*
 * The task_slots slot owned by thread @tid that started at @start (its
 * task_struct's pid and start_time), or NULL: at its tid modulo
 * LP_TASK_SLOTS or one of the LP_TASK_PROBES after it (its index in *@slot).
 * Inlined array lookups: the task-storage helper this replaces cost 20-30 ns
 * per call (docs/performance.md).
 */
static __always_inline struct lp_task_slot *task_slot_find(__u32 tid, __u64 start, __u32 *slot)
{
	struct lp_task_slot *s;
	__u32 key, i;

	for (i = 0; i < LP_TASK_PROBES; i++) {
		key = (tid + i) & (LP_TASK_SLOTS - 1);
		s = bpf_map_lookup_elem(&task_slots, &key);
		if (!s)
			return NULL;
		if (s->tid == tid && s->start_time == start) {
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
	struct lp_task_slot *s = task_slot_find(tid, BPF_CORE_READ(task, start_time), &slot);

	if (s)
		__sync_val_compare_and_swap(&s->tid, tid, 0);
}

/*
 * Take a free slot among the LP_TASK_PROBES of thread @tid (its index in
 * *@slot), or NULL when all are taken. The caller owns it and fills it in:
 * only the owner's programs write a slot.
 */
static __always_inline struct lp_task_slot *task_slot_claim(__u32 tid, __u32 *slot)
{
	struct lp_task_slot *s;
	__u32 key, i;

	for (i = 0; i < LP_TASK_PROBES; i++) {
		key = (tid + i) & (LP_TASK_SLOTS - 1);
		s = bpf_map_lookup_elem(&task_slots, &key);
		if (!s)
			break;
		if (s->tid || __sync_val_compare_and_swap(&s->tid, 0, tid) != 0)
			continue;
		*slot = key;
		return s;
	}
	return NULL;
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
	__u32 tid = BPF_CORE_READ(task, pid), key, i, to = 0;
	struct lp_task_slot *o = NULL, *n, *s;
	__u64 off = lp_regs_offset, rk;

	for (i = 0; i < LP_TASK_PROBES; i++) {
		key = (old_tid + i) & (LP_TASK_SLOTS - 1);
		s = bpf_map_lookup_elem(&task_slots, &key);
		if (s && s->tid == old_tid && s->t.tgid == tgid) {
			o = s;
			break;
		}
	}
	if (!o)
		return;
	n = task_slot_claim(tid, &to);
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

#endif
