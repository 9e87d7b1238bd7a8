// SPDX-License-Identifier: GPL-2.0-only
/*
 * Syscall and off-CPU collectors.
 *
 * syscall: sys_enter notes the start in the thread's slot of task_slots (no hash
 * insert/delete per call); sys_exit counts every call in a per-CPU log2
 * histogram per (tgid, syscall), and sends a slow one (>= cfg_syscall_min_ns)
 * with its user stack, which at exit is the stack that made the call.
 *
 * offcpu: sched_switch notes when a target thread leaves the CPU and whether
 * it was still runnable (preempted) or waiting (blocked), with its kernel
 * stack; when it comes back the interval is charged. Inside a syscall with
 * DWARF stacks the time is held until sys_exit, where the thread is current
 * again and its user stack can be copied; elsewhere the frame-pointer user
 * stack taken at switch-out is used.
 *
 * dump_in_flight, an iterator run once at stop, reports the syscalls and
 * off-CPU intervals still open then, with their time so far.
 */
#include "track.bpf.h"
#include "ustack.bpf.h"
#include "waits.bpf.h"

#define MAX_ERRNO 4095
#define TASK_RUNNING 0

const volatile __u32 cfg_syscalls = 0;		/* --mode syscall */
const volatile __u32 cfg_waits = 0;		/* the syscall hooks decide waits (waits.bpf.h) */
const volatile __u32 cfg_offcpu = 0;		/* --mode offcpu */
const volatile __u64 cfg_syscall_min_ns = 1000000;
const volatile __u64 cfg_offcpu_min_ns = 1000000;
const volatile __u32 cfg_sys_filter_on = 0;	/* --syscalls given */
const volatile __u32 cfg_debug_lose_switch_in = 0;	/* LATPROF_DEBUG_LOSE=switch_in */
const volatile __u32 cfg_sys_fast_drain = 0;	/* serve: sys_fast read as it runs (fast_used) */
const volatile __u8 cfg_sys_filter[LP_MAX_SYSCALL_NR] = {};

__u64 attach_ns = 0;	/* set by user space once everything is attached */
__u64 stop_ns = 0;	/* set by user space before dump_in_flight runs */

/*
 * Not preallocated: a per-CPU value of every entry for every CPU took 30 ms
 * to create at start-up (and its kernel memory) for what is an overflow of
 * sys_fast; an entry is allocated at a process's first call of a number.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* resized by user space before load */
	__type(key, struct lp_sys_key);
	__type(value, struct lp_sys_stat);
} sys_stats SEC(".maps");

/*
 * The first cfg_sys_fast_slots target processes count into this array, one
 * block of LP_MAX_SYSCALL_NR entries each (index = block + nr): an array
 * lookup is inlined, a hash lookup hashes the key on every syscall. Later
 * processes, and numbers past the block, use sys_stats.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LP_SYS_FAST_SLOTS * LP_MAX_SYSCALL_NR);	/* resized */
	__type(key, __u32);
	__type(value, struct lp_sys_stat);
} sys_fast SEC(".maps");

/*
 * With cfg_sys_fast_drain, the numbers each block of sys_fast holds calls
 * of (a bit per number, set at a number's first call on a CPU): what serve
 * reads once a second, and zeroes before it hands the block back.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_SYS_FAST_SLOTS);
	__type(key, __u32);
	__type(value, struct lp_sys_used);
} fast_used SEC(".maps");

/*
 * The calls whose (process, number) entry could not be made in sys_stats
 * (the map full, or the kernel's allocator out of entries for a moment),
 * by number: the syscall's statistics stay whole, only which process made
 * the calls is lost. Shared by every CPU (atomics): it is used only then.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_MAX_SYSCALL_NR);
	__type(key, __u32);
	__type(value, struct lp_sys_stat);
} sys_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* resized by user space before load */
	__type(key, struct lp_timed_key);
	__type(value, struct lp_timed_value);
} timed_samples SEC(".maps");


static const struct lp_sys_stat zero_stat;	/* too big for the BPF stack */

_Static_assert(LP_SYS_USED_WORDS * 64 == LP_MAX_SYSCALL_NR, "a bit per syscall number");

/* (@tgid, @nr) has an entry in sys_stats now: its exit event will say so. */
static __always_inline void sys_used_mark(__u32 tgid, __s32 nr)
{
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (proc && nr >= 0 && nr < LP_MAX_SYSCALL_NR)
		__sync_fetch_and_or(&proc->sys_used[(nr >> 6) & (LP_SYS_USED_WORDS - 1)],
				    1ULL << (nr & 63));
}

/* Count one call of @nr that has no entry of its process, in sys_spill. */
static __always_inline void sys_spill_account(__s32 nr, __u64 ns, bool error, bool in_flight)
{
	__u32 key = nr, slot;
	struct lp_sys_stat *st = bpf_map_lookup_elem(&sys_spill, &key);

	if (!st)
		return;
	if (ns > st->max_ns)
		st->max_ns = ns;	/* racy by design: a max, not a sum */
	if (error)
		__sync_fetch_and_add(&st->errors, 1);
	if (in_flight)
		__sync_fetch_and_add(&st->in_flight, 1);
	slot = lp_hist_slot(ns) & (LP_HIST_SLOTS - 1);
	__sync_fetch_and_add(&st->hist[slot].count, 1);
	__sync_fetch_and_add(&st->hist[slot].sum_ns, ns);
}

#define SYS_ACCOUNT_ERROR 1
#define SYS_ACCOUNT_IN_FLIGHT 2

/* Count a call that took @ns in @st, a per-CPU value: plain increments are safe. */
static __always_inline void sys_stat_add(struct lp_sys_stat *st, __u64 ns, bool error,
					 bool in_flight)
{
	__u32 slot = lp_hist_slot(ns) & (LP_HIST_SLOTS - 1);

	if (ns > st->max_ns)
		st->max_ns = ns;
	if (error)
		st->errors++;
	if (in_flight)
		st->in_flight++;
	st->hist[slot].count++;
	st->hist[slot].sum_ns += ns;
}

/* The entry of @nr in the array block at @fast_base, or NULL (-1: none). */
static __always_inline struct lp_sys_stat *sys_fast_entry(__s32 fast_base, __s32 nr)
{
	__u32 idx = fast_base + nr;

	if (fast_base < 0 || nr < 0 || nr >= LP_MAX_SYSCALL_NR)
		return NULL;
	return bpf_map_lookup_elem(&sys_fast, &idx);
}

/*
 * Count a call in @st, the entry of @nr in the block at @fast_base; with
 * cfg_sys_fast_drain, the first call on this CPU marks @nr used (a call
 * has taken some time: max_ns is 0 only before the first).
 */
static __always_inline void sys_fast_add(struct lp_sys_stat *st, __s32 fast_base, __s32 nr,
					 __u64 ns, bool error, bool in_flight)
{
	if (cfg_sys_fast_drain && !st->max_ns) {
		__u32 slot = (__u32)fast_base / LP_MAX_SYSCALL_NR;
		struct lp_sys_used *u = bpf_map_lookup_elem(&fast_used, &slot);

		if (u)
			__sync_fetch_and_or(&u->words[(nr >> 6) & (LP_SYS_USED_WORDS - 1)],
					    1ULL << (nr & 63));
	}
	sys_stat_add(st, ns, error, in_flight);
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
 * never exit. Processes named by -p or started as the command get theirs
 * from user space before attach (collect_add_pid). A process that found
 * none free tries again at its next thread's first need.
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

/*
 * Count one call of @nr that took @ns (every call, slow or not), in the
 * array block at @fast_base, or in the hash when it is -1 (in sys_spill
 * when the hash has no room for it). A global function, verified once on
 * its own; sys_exit counts into the array itself (sys_fast_entry).
 */
__noinline int sys_account(__u32 tgid, __s32 fast_base, __s32 nr, __u64 ns, __u32 flags)
{
	bool error = flags & SYS_ACCOUNT_ERROR, in_flight = flags & SYS_ACCOUNT_IN_FLIGHT;
	struct lp_sys_key key = { .tgid = tgid, .nr = nr };
	struct lp_sys_stat *st;
	long err;

	st = sys_fast_entry(fast_base, nr);
	if (st) {
		sys_fast_add(st, fast_base, nr, ns, error, in_flight);
		return 0;
	}
	st = bpf_map_lookup_elem(&sys_stats, &key);
	if (!st) {
		err = bpf_map_update_elem(&sys_stats, &key, &zero_stat, BPF_NOEXIST);
		if (err && bpf_map_lookup_elem(&sys_stats, &key) == NULL) {
			/* E2BIG: full; ENOMEM: no free element on this CPU now */
			stat_inc(err == -E2BIG ? LP_STAT_SYS_STATS_DROPPED : LP_STAT_SYS_STATS_NOMEM);
			sys_spill_account(nr, ns, error, in_flight);
			return 0;
		}
		sys_used_mark(tgid, nr);
		st = bpf_map_lookup_elem(&sys_stats, &key);
		if (!st)
			return 0;
	}
	sys_stat_add(st, ns, error, in_flight);
	return 0;
}

/* Add to the in-kernel aggregation of frame-pointer timed samples. */
static __always_inline void timed_add(struct lp_timed_key *key, __u64 latency_ns,
				      __u64 blocked_ns, __u64 preempted_ns)
{
	struct lp_timed_value *v = bpf_map_lookup_elem(&timed_samples, key), zero = {};

	if (!v) {
		bpf_map_update_elem(&timed_samples, key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&timed_samples, key);
		if (!v) {
			stat_inc(LP_STAT_TIMED_DROPPED);
			return;
		}
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

static __always_inline bool sys_traced(long nr)
{
	if (nr < 0)
		return false;
	if (!cfg_sys_filter_on)
		return true;
	return nr < LP_MAX_SYSCALL_NR && cfg_sys_filter[sys_index(nr)];
}

/* The state of target thread @tid that started at @start, or NULL (task_slot_find). */
static __always_inline struct lp_task *task_state_of(__u32 tid, __u64 start, __u32 *slot)
{
	struct lp_task_slot *s = task_slot_find(tid, start, slot);

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
	s = task_slot_claim(task->pid, slot);
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
 * With --requests/--files/--net, the syscalls they follow are timed even when
 * --syscalls leaves them out (they are not counted in the statistics then).
 */
static __always_inline bool sys_entered(long nr)
{
	if (sys_traced(nr) || (cfg_waits && waits_entered(nr)))
		return true;
	return cfg_track && nr >= 0 && nr < LP_MAX_SYSCALL_NR;
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

/*
 * The target check without the regs cache, which it fills: the state of the
 * current thread, created at its first syscall @nr that is traced, or NULL.
 * "Not a target" is cached only when no target can appear later for the
 * same thread (no -a, no --comm: those decide by name as processes run).
 */
static __always_inline struct lp_task *sys_task_lookup(__u64 regs, long nr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid;	/* a load: no second helper call */
	bool final = !cfg_all && !cfg_nr_comms;
	struct lp_task_slot *s;
	struct lp_proc *proc;
	struct lp_task *t;
	__u32 slot;

	/* nearly every syscall on the machine is not a target's: one load */
	if (!maybe_target(tgid)) {
		if (final)
			regs_cache_put(task, regs, LP_REGS_NOT_TARGET);
		return NULL;
	}
	t = task_state_of(task->pid, task->start_time, &slot);
	/* only target threads get state; the others pay the procs lookup */
	if (!t) {
		proc = current_target(tgid);
		if (!proc) {
			if (final)
				regs_cache_put(task, regs, LP_REGS_NOT_TARGET);
			return NULL;
		}
		if (!sys_entered(nr))
			return NULL;
		t = task_state_get(task, proc, tgid, &slot);
		if (!t)
			return NULL;
	}
	s = bpf_map_lookup_elem(&task_slots, &slot);
	if (s) {
		s->regs_owner = regs_key(regs);
		regs_cache_put(task, regs, slot + 1);
	}
	return t;
}

/*
 * sys_enter of syscall @nr, whose registers are @regs, at address @at; @typed:
 * the hook is tp_btf, so their fields are plain loads (SYS_REG).
 */
static __always_inline int on_sys_enter(struct pt_regs *regs, __u64 at, long nr,
					const bool typed)
{
	struct lp_task *t;

	/* a hit: no helper call, one load for a thread that is not a target */
	if (!regs_cache_get(at, &t))
		t = sys_task_lookup(at, nr);
	if (!t || !sys_entered(nr))
		return 0;
	t->sys_nr = nr;
	if (cfg_track) {
		t->sys_arg0 = SYS_REG(regs, typed, di);
		t->sys_arg1 = SYS_REG(regs, typed, si);
	}
	if (cfg_waits)
		waits_sys_enter(regs, typed, t, nr);
	if (cfg_offcpu) {
		t->pend_blocked = 0;
		t->pend_preempted = 0;
		t->pend_max = 0;
		t->pend_kstack = -ENOENT;
	}
	t->sys_start = bpf_ktime_get_ns();
	return 0;
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

/* sys_exit of a syscall that returned @ret, whose registers are at address @at */
static __always_inline int on_sys_exit(void *ctx, __u64 at, long ret)
{
	struct task_struct *task;
	__u64 now, dur, latency;
	struct lp_proc *proc;
	struct lp_task *t;
	__u32 tgid, wait;
	__s32 nr;

	if (!regs_cache_get(at, &t)) {
		task = bpf_get_current_task_btf();
		if (!maybe_target(task->tgid))
			return 0;
		t = task_state_find(task);
	}
	/* only targets have a start time: the target check, without a hash */
	if (!t || !t->sys_start)
		return 0;
	tgid = t->tgid;
	now = bpf_ktime_get_ns();
	dur = now - t->sys_start;
	t->sys_start = 0;
	/* running, yet off the CPU since a switch-out whose switch-in was not seen */
	if (cfg_offcpu && t->off_start) {
		stat_inc(LP_STAT_OFFCPU_UNMATCHED);
		t->off_start = 0;
	}
	nr = t->sys_nr;
	if (cfg_track)
		track_sys_exit(bpf_get_current_task_btf(), t, nr, now, dur, ret);
	if (cfg_waits)
		waits_sys_exit(t, nr, ret);
	if ((cfg_track || cfg_waits) && cfg_sys_filter_on && !sys_traced(nr))
		return 0;
	if (cfg_syscalls) {
		bool error = ret < 0 && ret >= -MAX_ERRNO;
		struct lp_sys_stat *st = sys_fast_entry(t->fast_base, nr);

		if (st)
			sys_fast_add(st, t->fast_base, nr, dur, error, false);
		else	/* no block of the array: the hash */
			sys_account(tgid, -1, nr, dur, error ? SYS_ACCOUNT_ERROR : 0);
	}
	latency = cfg_syscalls && dur >= cfg_syscall_min_ns ? dur : 0;
	if (!latency && !t->pend_blocked && !t->pend_preempted)
		return 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc)
		return 0;
	wait = waits_is_wait(nr) ? t->wait : LP_WAIT_NONE;
	if (cfg_unwind_dwarf) {
		if (t->pend_blocked || t->pend_preempted)
			count_offcpu_stack_errors(t->pend_kstack, -ENOENT);
		struct ustack_info info = {
			.kind = LP_SAMPLE_SYSCALL,
			.tgid = tgid,
			.gen = proc->gen,
			.kstack_id = t->pend_kstack,
			.value = latency,
			.blocked_ns = t->pend_blocked,
			.preempted_ns = t->pend_preempted,
			.nr = nr,
			.flags = wait << LP_USTACK_WAIT_SHIFT,
		};

		ustack_submit_task(&info, bpf_get_current_task_btf(), USTACK_CTX_TRACE);
	} else {
		/* frame pointers: off-CPU time was charged at switch-in already */
		struct lp_timed_key key = {
			.tgid = tgid,
			.gen = proc->gen,
			.kstack_id = -ENOENT,
			.nr = nr,
			.wait = wait,
		};

		key.ustack_id = stack_get(ctx, BPF_F_USER_STACK, false);
		count_stack_error(key.ustack_id, LP_STAT_USTACK_FULL, LP_STAT_USTACK_EFAULT,
				    LP_STAT_USTACK_OTHER);
		bpf_get_current_comm(key.comm, sizeof(key.comm));
		timed_add(&key, latency, 0, 0);
	}
	return 0;
}

/*
 * Each hook is built twice; user space loads one of the two (src/syshooks.h).
 *
 * raw_tp: the registers' address is a number to the verifier, so each field
 * read is a bpf_probe_read_kernel call (~35 ns on the development VM, as much
 * as the rest of the hook), made for every read, write and wait of a target.
 *
 * tp_btf ("lp_tp_btf/", a section src/syshooks.c registers with libbpf):
 * the kernel types the pointer, so a field is a plain load. The regs cache
 * needs the address as a number, which the verifier does not give for a
 * typed pointer; stored into memory (allowed to privileged programs) and
 * read back, it is one. The memory is a per-CPU array, a lookup inlined from
 * 6.10 (on older kernels it would be a helper call on every syscall of the
 * machine: src/syshooks.c keeps them on raw_tp). libbpf attaches tp_btf by
 * the kernel's BTF id of the tracepoint, which src/syshooks.c takes from the
 * BTF cache instead of reading the kernel's whole BTF.
 */
SEC("raw_tp/sys_enter")
int tp_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return on_sys_enter((struct pt_regs *)ctx->args[0], ctx->args[0], ctx->args[1], false);
}

SEC("raw_tp/sys_exit")
int tp_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return on_sys_exit(ctx, ctx->args[0], ctx->args[1]);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} regs_at SEC(".maps");

/* The address of @regs as a number (0 when the map fails, which it cannot). */
static __always_inline __u64 regs_address(struct pt_regs *regs)
{
	__u32 zero = 0;
	volatile __u64 *v = bpf_map_lookup_elem(&regs_at, &zero);

	if (!v)
		return 0;
	*v = (__u64)regs;
	return *v;
}

SEC("lp_tp_btf/sys_enter")
int btf_sys_enter(__u64 *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	__u64 at = regs_address(regs);

	return at ? on_sys_enter(regs, at, ctx[1], true) : 0;
}

SEC("lp_tp_btf/sys_exit")
int btf_sys_exit(__u64 *ctx)
{
	__u64 at = regs_address((struct pt_regs *)ctx[0]);

	return at ? on_sys_exit(ctx, at, ctx[1]) : 0;
}

/*
 * prev leaves the CPU: note when, why, and where. Current is still prev, so
 * @prev is the trusted current task, not the tracepoint's argument (which a
 * raw_tp program can only read through bpf_probe_read).
 */
static __always_inline void offcpu_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state)
{
	__u32 tgid = prev->tgid;
	struct lp_proc *proc;
	struct lp_task *t;
	__u32 slot;

	if (!maybe_target(tgid))
		return;
	t = task_state_find(prev);
	/*
	 * as in sys_enter: state means target; others pay the procs lookup. A
	 * thread past sched_process_exit has given its slot back and must not
	 * take a new one at its last switches (nothing would free it: 20,000
	 * exiting threads filled the array, tests/e2e/test_syscall_thread_churn.sh).
	 */
	if (!t) {
		proc = current_target(tgid);
		if (!proc || (prev->flags & (PF_KTHREAD | PF_EXITING)))
			return;
		t = task_state_get(prev, proc, tgid, &slot);
		if (!t)
			return;
	}
	/* the last interval's switch-in was never seen (a hook that did not run) */
	if (t->off_start)
		stat_inc(LP_STAT_OFFCPU_UNMATCHED);
	t->off_preempted = preempt || prev_state == TASK_RUNNING;
	/* our own frames (the program, bpf_trace_run4, ...) are cut in user space */
	t->off_kstack = stack_get(ctx, 0, false);
	/* with DWARF, a syscall's user stack is copied at its sys_exit */
	if (!cfg_unwind_dwarf || !t->sys_start)
		t->off_ustack = stack_get(ctx, BPF_F_USER_STACK, false);
	else
		t->off_ustack = -ENOENT;
	t->off_start = bpf_ktime_get_ns();
}

/* next comes back: charge the interval (current is still prev). */
static __always_inline void offcpu_in(struct task_struct *next)
{
	struct lp_timed_key key = {};
	__u64 dur, blocked, preempted;
	struct lp_proc *proc;
	struct lp_task *t;
	bool in_sys;
	__u32 slot;

	key.tgid = BPF_CORE_READ(next, tgid);
	if (!maybe_target(key.tgid))
		return;
	t = task_state_of(BPF_CORE_READ(next, pid), BPF_CORE_READ(next, start_time), &slot);
	if (!t || !t->off_start || cfg_debug_lose_switch_in)
		return;
	dur = bpf_ktime_get_ns() - t->off_start;
	t->off_start = 0;
	if (dur < cfg_offcpu_min_ns)
		return;
	blocked = t->off_preempted ? 0 : dur;
	preempted = t->off_preempted ? dur : 0;
	/*
	 * Inside a syscall --syscalls leaves out (timed for waits.bpf.h or
	 * --requests only), off-CPU time goes out as if outside one: that
	 * syscall's exit sends nothing.
	 */
	in_sys = t->sys_start && sys_traced(t->sys_nr);
	if (cfg_unwind_dwarf && in_sys) {
		t->pend_blocked += blocked;
		t->pend_preempted += preempted;
		if (dur > t->pend_max) {
			t->pend_max = dur;
			t->pend_kstack = t->off_kstack;
		}
		return;
	}
	count_offcpu_stack_errors(t->off_kstack, t->off_ustack);
	proc = bpf_map_lookup_elem(&procs, &key.tgid);
	if (!proc)
		return;
	key.gen = proc->gen;
	key.ustack_id = t->off_ustack;
	key.kstack_id = t->off_kstack;
	key.nr = in_sys ? t->sys_nr : -1;
	key.wait = in_sys && waits_is_wait(key.nr) ? t->wait : LP_WAIT_NONE;
	BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
	timed_add(&key, 0, blocked, preempted);
}

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

SEC("raw_tp/sched_switch")
int BPF_PROG(tp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	offcpu_out(ctx, bpf_get_current_task_btf(), preempt, prev_state);
	offcpu_in(next);
	return 0;
}

/*
 * Before 5.18 the tracepoint has no prev_state argument (commit fa2c3254d7cf,
 * "sched/tracing: Don't re-read p->state when emitting sched_switch event"),
 * and a raw_tp program that reads it does not attach; user space loads this
 * one instead with the older kernels' fallbacks (kernel_features, all of
 * whose newer features came by 6.1). prev's own state says the same thing
 * unless it was woken in the instants since it set it, which counts the
 * interval as preempted.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(tp_sched_switch_nostate, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	offcpu_out(ctx, cur, preempt, task_run_state(cur));
	offcpu_in(next);
	return 0;
}

/* Scratch state for a thread that was asleep in a syscall all along. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_task);
} parked SEC(".maps");

/*
 * A target thread asleep in a syscall since before attach has no state: it
 * never entered a syscall or left the CPU while we watched. Its registers
 * say which syscall (orig_ax, as /proc/PID/syscall reads it); its time in
 * the recording started at attach.
 */
static __always_inline struct lp_task *parked_since_attach(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u32 zero = 0;
	struct lp_task *t;
	long nr;

	if (task_run_state(task) == TASK_RUNNING || !regs || !attach_ns)
		return NULL;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr < 0 || nr >= LP_MAX_SYSCALL_NR)
		return NULL;
	t = bpf_map_lookup_elem(&parked, &zero);
	if (!t)
		return NULL;
	__builtin_memset(t, 0, sizeof(*t));
	t->sys_nr = nr;
	t->pend_kstack = -ENOENT;
	t->off_kstack = -ENOENT;
	t->fast_base = -1;
	if (cfg_syscalls)
		t->sys_start = attach_ns;
	if (cfg_offcpu)
		t->off_start = attach_ns;
	return t;
}

/*
 * Run once at stop, after the other programs are detached: every target
 * thread still in a syscall or off CPU is reported with its time up to
 * stop_ns and its user stack, copied from its address space by an iterator
 * of kind @uctx (USTACK_CTX_ITER, or USTACK_CTX_ITER_NOCOPY: registers only).
 */
static __always_inline int in_flight_report(struct task_struct *task, const enum ustack_ctx uctx)
{
	struct ustack_info info = { .nr = -1, .flags = LP_USTACK_IN_FLIGHT };
	struct lp_proc *proc;
	struct lp_task *t;
	__u64 dur;

	if (!task)
		return 0;
	info.tgid = task->tgid;
	proc = bpf_map_lookup_elem(&procs, &info.tgid);
	if (!proc)
		return 0;
	info.gen = proc->gen;
	t = task_state_find(task);
	if (!t || (!t->sys_start && !t->off_start))
		t = parked_since_attach(task);
	if (!t)
		return 0;
	info.kind = LP_SAMPLE_OFFCPU;
	info.kstack_id = -ENOENT;
	if (t->sys_start && t->sys_start < stop_ns && sys_traced(t->sys_nr)) {
		dur = stop_ns - t->sys_start;
		info.kind = LP_SAMPLE_SYSCALL;
		info.nr = t->sys_nr;
		info.blocked_ns = t->pend_blocked;
		info.preempted_ns = t->pend_preempted;
		info.kstack_id = t->pend_kstack;
		if (waits_is_wait(info.nr))
			info.flags |= t->wait << LP_USTACK_WAIT_SHIFT;
		if (cfg_syscalls) {
			sys_account(info.tgid, t->fast_base, info.nr, dur, SYS_ACCOUNT_IN_FLIGHT);
			if (dur >= cfg_syscall_min_ns)
				info.value = dur;
		}
	}
	if (cfg_offcpu && t->off_start && t->off_start < stop_ns) {
		dur = stop_ns - t->off_start;
		if (dur >= cfg_offcpu_min_ns) {
			if (t->off_preempted)
				info.preempted_ns += dur;
			else
				info.blocked_ns += dur;
			info.kstack_id = t->off_kstack;
		}
	}
	if (info.value || info.blocked_ns || info.preempted_ns)
		ustack_submit_task(&info, task, uctx);
	return 0;
}

/* Sleepable: bpf_copy_from_user_task reads the stack from the task's memory (5.18+). */
SEC("iter.s/task")
int dump_in_flight(struct bpf_iter__task *ctx)
{
	return in_flight_report(ctx->task, USTACK_CTX_ITER);
}

/*
 * Before 5.18 (no bpf_copy_from_user_task, no sleepable iterators), loaded
 * instead of dump_in_flight: the same times, each with the leaf frame its
 * registers give, but no deeper user stack.
 */
SEC("iter/task")
int dump_in_flight_nocopy(struct bpf_iter__task *ctx)
{
	return in_flight_report(ctx->task, USTACK_CTX_ITER_NOCOPY);
}

char LICENSE[] SEC("license") = "GPL";
