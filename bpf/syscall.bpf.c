// SPDX-License-Identifier: GPL-2.0-only
/*
 * Syscall collector (off-CPU's programs are in offcpu.bpf.c).
 *
 * syscall: sys_enter notes the start in the thread's slot of task_slots (no hash
 * insert/delete per call); sys_exit counts every call in a per-CPU log2
 * histogram per (tgid, syscall), and sends a slow one (>= cfg_syscall_min_ns)
 * with its user stack, which at exit is the stack that made the call.
 *
 * Off-CPU time inside a syscall with DWARF stacks is held in the thread's
 * state until sys_exit, where the thread is current again and its user
 * stack can be copied (offcpu.bpf.c).
 *
 * on_iter_task, an iterator run once at stop, reports the syscalls and
 * off-CPU intervals still open then, with their time so far.
 */
#include "gil.bpf.h"
#include "stacks.bpf.h"
#include "stalls.bpf.h"
#include "targets.bpf.h"
#include "task.bpf.h"
#include "track.bpf.h"
#include "ustack.bpf.h"
#include "waits.bpf.h"

#define MAX_ERRNO 4095

const volatile __u32 cfg_syscalls = 0;		/* --mode syscall */
const volatile __u32 cfg_waits = 0;		/* the syscall hooks decide waits (waits.bpf.h) */
const volatile __u64 cfg_syscall_min_ns = 1000000;
const volatile __u32 cfg_sys_fast_drain = 0;	/* serve: sys_fast read as it runs (fast_used) */
/* what track.bpf.h declares: --requests, --files, --net */
const volatile __u32 cfg_track = 0;
const volatile __u32 cfg_requests = 0;
const volatile __u32 cfg_files = 0;
const volatile __u32 cfg_net = 0;
const volatile __u8 cfg_sys_cat[LP_MAX_SYSCALL_NR] = {};
__u64 next_fd_id = 0;
struct conns_map conns SEC(".maps");
struct proc_times_map proc_times SEC(".maps");
struct fdstats_map fdstats SEC(".maps");
struct track_map track SEC(".maps");
/* what waits.bpf.h declares */
struct convs_map convs SEC(".maps");
__u32 waits_fd_epoch[WAITS_FD_EPOCHS] = {};

__u64 attach_ns = 0;	/* set by user space once everything is attached */
__u64 stop_ns = 0;	/* set by user space before on_iter_task runs */

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
	long err = 1;	/* stays 1 when the entry was there */

	st = sys_fast_entry(fast_base, nr);
	if (st) {
		sys_fast_add(st, fast_base, nr, ns, error, in_flight);
		return 0;
	}
	st = map_lookup_or_init(&sys_stats, &key, &zero_stat, &err);
	if (!st) {
		/* E2BIG: full; ENOMEM: no free element on this CPU now; 0: drained at once */
		if (err)
			stat_inc(err == -E2BIG ? LP_STAT_SYS_STATS_DROPPED :
				 LP_STAT_SYS_STATS_NOMEM);
		sys_spill_account(nr, ns, error, in_flight);
		return 0;
	}
	if (!err)	/* this call added the entry */
		sys_used_mark(tgid, nr);
	sys_stat_add(st, ns, error, in_flight);
	return 0;
}

_Static_assert(LP_TASK_GIL_WAIT == LP_USTACK_GIL, "a GIL wait's flag, passed on as it is");

/* What gil.bpf.h declares: a GIL wait's time into its thread's entry. */
__noinline int gil_wait_add(__u32 tgid, __u32 tid, __u64 dur)
{
	struct lp_gil_thread *g = gil_thread(tgid, tid);

	if (!g)
		return 0;
	__sync_fetch_and_add(&g->wait_ns, dur);
	__sync_fetch_and_add(&g->waits, 1);
	return 0;
}

/*
 * With --requests/--files/--net, the syscalls they follow are timed even when
 * --syscalls leaves them out (they are not counted in the statistics then).
 */
static __always_inline bool sys_entered(long nr)
{
	if (sys_traced(nr) || (cfg_waits && waits_entered(nr)) ||
	    (cfg_stall_min_ns && stall_wait_nr(nr)))
		return true;
	return cfg_track && nr >= 0 && nr < LP_MAX_SYSCALL_NR;
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
static __always_inline int handle_sys_enter(struct pt_regs *regs, __u64 at, long nr,
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
	/* only what the statistics count: the gil time is taken out of theirs */
	if (cfg_gil && cfg_syscalls)
		gil_sys_enter(t, regs, typed, nr);
	if (cfg_offcpu) {
		t->pend_blocked = 0;
		t->pend_preempted = 0;
		t->pend_max = 0;
		t->pend_kstack = -ENOENT;
	}
	t->sys_start = bpf_ktime_get_ns();
	if (cfg_stall_min_ns)
		stall_sys_enter(t, regs, typed, nr, t->sys_start);
	return 0;
}

/* sys_exit of a syscall that returned @ret, whose registers are at address @at */
static __always_inline int handle_sys_exit(void *ctx, __u64 at, long ret)
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
	/* the flag stays until the next sys_enter: the sample below says it */
	if (cfg_gil && (t->track_flags & LP_TASK_GIL_WAIT))
		gil_wait_add(tgid, (__u32)bpf_get_current_pid_tgid(), dur);
	if (cfg_stall_min_ns)
		stall_sys_exit(t, now, ret);
	if (cfg_track)
		track_sys_exit(bpf_get_current_task_btf(), t, nr, now, dur, ret);
	if (cfg_waits)
		waits_sys_exit(t, nr, ret);
	if ((cfg_track || cfg_waits || cfg_stall_min_ns) && cfg_sys_filter_on && !sys_traced(nr))
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
			.flags = wait << LP_USTACK_WAIT_SHIFT |
				 (stall_in(t, now) ? LP_USTACK_IN_STALL : 0) |
				 (t->track_flags & LP_TASK_GIL_WAIT),	/* = LP_USTACK_GIL */
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
int on_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return handle_sys_enter((struct pt_regs *)ctx->args[0], ctx->args[0], ctx->args[1], false);
}

SEC("raw_tp/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return handle_sys_exit(ctx, ctx->args[0], ctx->args[1]);
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
int on_sys_enter_btf(__u64 *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	__u64 at = regs_address(regs);

	return at ? handle_sys_enter(regs, at, ctx[1], true) : 0;
}

SEC("lp_tp_btf/sys_exit")
int on_sys_exit_btf(__u64 *ctx)
{
	__u64 at = regs_address((struct pt_regs *)ctx[0]);

	return at ? handle_sys_exit(ctx, at, ctx[1]) : 0;
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
	if (t && t->loop_ready)
		stall_in_flight(task, t, stop_ns);
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
		/* a GIL wait still going on: its time so far */
		if (cfg_gil && (t->track_flags & LP_TASK_GIL_WAIT)) {
			info.flags |= LP_USTACK_GIL;
			gil_wait_add(info.tgid, task->pid, dur);
		}
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
int on_iter_task(struct bpf_iter__task *ctx)
{
	return in_flight_report(ctx->task, USTACK_CTX_ITER);
}

/*
 * Before 5.18 (no bpf_copy_from_user_task, no sleepable iterators), loaded
 * instead of on_iter_task: the same times, each with the leaf frame its
 * registers give, but no deeper user stack.
 */
SEC("iter/task")
int on_iter_task_nocopy(struct bpf_iter__task *ctx)
{
	return in_flight_report(ctx->task, USTACK_CTX_ITER_NOCOPY);
}

char LICENSE[] SEC("license") = "GPL";
