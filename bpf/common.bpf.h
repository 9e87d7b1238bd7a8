/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every latprof BPF program shares: the maps and configuration defined
 * in targets.bpf.c (declared extern here; bpftool links the objects into
 * one), loss counters, lifecycle events, and the helpers for maps and
 * syscall numbers. The concerns built on it have a header each:
 * targets.bpf.h (which processes are traced), task.bpf.h (per-thread state),
 * stacks.bpf.h (stack ids), ustack.bpf.h and python.bpf.h (DWARF user stacks
 * and Python frames), track.bpf.h and waits.bpf.h (what the syscall hooks
 * follow). Headers declare; each map and global is defined in one .bpf.c.
 *
 * Names: a program is on_<hook> (on_cpu_sample, on_sys_enter and its
 * tp_btf build on_sys_enter_btf, on_sched_switch, on_iter_task) and no
 * helper starts with on_, so a name in bpftool's list or bpf_stats is
 * always a program; helpers start with their concern (task_, stack_,
 * sys_, waits_, ...).
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
extern const volatile __u32 cfg_offcpu;	/* --mode offcpu */
extern const volatile __u64 cfg_offcpu_min_ns;	/* --min-block */
extern const volatile __u64 cfg_stall_min_ns;	/* --stall-min, 0: off (stalls.bpf.h) */
extern const volatile __u32 cfg_sys_filter_on;	/* --syscalls given */
extern const volatile __u8 cfg_sys_filter[LP_MAX_SYSCALL_NR];	/* its numbers */
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

/* Time charged to frame-pointer stacks (stacks.bpf.h, timed_add). */
struct timed_samples_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* resized by user space before load */
	__type(key, struct lp_timed_key);
	__type(value, struct lp_timed_value);
};

/* Per (process, thread name) counts for serve's drain (cfg_task_counts). */
struct task_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* resized by user space before load */
	__type(key, struct lp_task_count_key);
	__type(value, struct lp_task_count);
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
extern struct timed_samples_map timed_samples SEC(".maps");
extern struct task_counts_map task_counts SEC(".maps");
extern const volatile __u32 cfg_task_counts;

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

/*
 * The value of @key in the hash @map, added as *@init when missing (by this
 * call, or by another CPU first); NULL when it cannot be added (the map
 * full, or no free element for now), or was deleted at once by user space
 * (serve's drain). When the key was missing, the update's result goes to
 * *@err if @err is not NULL (0: this call added it).
 */
static __always_inline void *map_lookup_or_init(void *map, const void *key, const void *init,
						long *err)
{
	void *v = bpf_map_lookup_elem(map, key);
	long e;

	if (v)
		return v;
	e = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err)
		*err = e;
	return bpf_map_lookup_elem(map, key);
}

/*
 * Count @samples CPU samples and off-CPU time for (@tgid, @comm) in
 * task_counts, when the session asked for it (serve's shared session); a
 * full map counts a loss.
 */
static __always_inline void task_count_add(__u32 tgid, const char *comm, __u64 samples,
					   __u64 blocked_ns, __u64 preempted_ns)
{
	struct lp_task_count_key key = { .tgid = tgid };
	struct lp_task_count zero = {}, *v;

	if (!cfg_task_counts)
		return;
	__builtin_memcpy(key.comm, comm, sizeof(key.comm));
	v = map_lookup_or_init(&task_counts, &key, &zero, NULL);
	if (!v) {
		stat_inc(LP_STAT_SAMPLES_DROPPED);
		return;
	}
	if (samples)
		__sync_fetch_and_add(&v->samples, samples);
	if (blocked_ns)
		__sync_fetch_and_add(&v->blocked_ns, blocked_ns);
	if (preempted_ns)
		__sync_fetch_and_add(&v->preempted_ns, preempted_ns);
}

/*
 * Syscall number @nr, known to be below LP_MAX_SYSCALL_NR, as an index of an
 * array of that size, masked where the verifier sees it: the compiler drops a
 * mask it can prove redundant, and 6.1's verifier loses the bound of a value
 * spilled to the stack and filled into another register ("unbounded memory
 * access" in on_sys_exit with --requests, found by make check-kernels).
 */
static __always_inline __u32 sys_index(long nr)
{
	__u32 i = nr;

	asm volatile("" : "+r"(i));
	return i & (LP_MAX_SYSCALL_NR - 1);
}

/* Is syscall @nr one --syscalls asks for (all of them without it)? */
static __always_inline bool sys_traced(long nr)
{
	if (nr < 0)
		return false;
	if (!cfg_sys_filter_on)
		return true;
	return nr < LP_MAX_SYSCALL_NR && cfg_sys_filter[sys_index(nr)];
}

/*
 * Field @field of the syscall registers @regs a syscall hook was given: a
 * plain load when the hook is tp_btf (@typed, a constant: the kernel typed
 * the pointer), a probe read when it is raw_tp (to the verifier a number).
 */
#define SYS_REG(regs, typed, field) ((typed) ? (regs)->field : BPF_CORE_READ(regs, field))

#endif
