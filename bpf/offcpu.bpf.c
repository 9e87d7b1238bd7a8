// SPDX-License-Identifier: GPL-2.0-only
/*
 * Off-CPU collector (--mode offcpu): sched_switch notes when a target thread
 * leaves the CPU and whether it was still runnable (preempted) or waiting
 * (blocked), with its kernel stack; when it comes back the interval is
 * charged to its stacks. Inside a syscall with DWARF stacks the time is held
 * in the thread's state for the syscall's exit (syscall.bpf.c), where the
 * thread is current again and its user stack can be copied; elsewhere the
 * frame-pointer user stack taken at switch-out is used.
 */
#include "stacks.bpf.h"
#include "targets.bpf.h"
#include "task.bpf.h"
#include "ustack.bpf.h"
#include "waits.bpf.h"

const volatile __u32 cfg_debug_lose_switch_in = 0;	/* LATPROF_DEBUG_LOSE=switch_in */

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
	/*
	 * with DWARF, a timed syscall's user stack is copied at its sys_exit;
	 * one --syscalls leaves out sends nothing there (offcpu_in)
	 */
	if (!cfg_unwind_dwarf || !t->sys_start || !sys_traced(t->sys_nr))
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
	if (cfg_task_counts) {
		BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
		task_count_add(key.tgid, key.comm, 0, blocked, preempted);
	}
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
	if (!cfg_task_counts)	/* read above */
		BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
	timed_add(&key, 0, blocked, preempted);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
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
int BPF_PROG(on_sched_switch_nostate, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	offcpu_out(ctx, cur, preempt, task_run_state(cur));
	offcpu_in(next);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
