/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Event-loop stalls (--stall-min): an event loop's thread waits for all of
 * its work at once in a readiness wait (select, poll, epoll), and between
 * the wait's return and its next start it runs what became ready. A stretch
 * of at least cfg_stall_min_ns is a stall: every request on that loop waited
 * for one piece of work (a blocking call in a coroutine, a long callback).
 * The syscall hooks time the stretches of every target thread that makes
 * such waits and send each stall as an event (struct lp_stall_event); the
 * samples taken inside one once it is past the threshold (slow syscalls,
 * CPU samples) are flagged LP_USTACK_IN_STALL, so user space charges the
 * stall to the stacks that ran in it.
 *
 * Which waits are the loop's: epoll, and poll on two descriptors or more (a
 * loop's wakeup descriptor and at least one more). A poll on one descriptor
 * is a blocking call waiting for its reply (libpq, CPython's sockets with a
 * timeout, glibc's resolver): part of the stretch, the very stall to find.
 * select says how many descriptors only in its sets' bits, and the loops
 * on Linux (asyncio, libuv, nginx) use epoll: select is never one, and
 * neither are sleeps written as a poll without descriptors.
 */
#ifndef LATPROF_STALLS_BPF_H
#define LATPROF_STALLS_BPF_H

#include "common.bpf.h"
#include "waits.bpf.h"

/*
 * lp_task.loop_ready counts ktime in units of 2^STALL_SHIFT ns, 32 bits of
 * them: a difference of two is right up to 36 minutes (a signed 32-bit
 * count), and the | 1 that keeps a stamp from reading "none" makes it
 * at most one unit late.
 */
#define STALL_SHIFT 10

/* How long @t has run since its last readiness wait returned (0: none since). */
static __always_inline __u64 stall_busy_ns(const struct lp_task *t, __u64 now)
{
	__s32 d = (__s32)((__u32)(now >> STALL_SHIFT) - t->loop_ready);

	return t->loop_ready && d > 0 ? (__u64)d << STALL_SHIFT : 0;
}

/* Is @t inside a stall at @now: its stretch is already past the threshold? */
static __always_inline bool stall_in(const struct lp_task *t, __u64 now)
{
	return cfg_stall_min_ns && stall_busy_ns(t, now) >= cfg_stall_min_ns;
}

#define NR_restart_syscall 219
#define ERESTARTSYS 512		/* -512..-516: the kernel restarts the call */
#define ERESTART_RESTARTBLOCK 516

/*
 * Must the hooks see syscall @nr for stalls: a loop wait (stall_loop_wait),
 * restart_syscall, which goes on with one a signal interrupted, or close,
 * which can end the loop (stall_sys_enter)?
 */
static __always_inline bool stall_wait_nr(__s32 nr)
{
	switch (nr) {
	case NR_epoll_wait: case NR_epoll_pwait: case NR_epoll_pwait2:
	case NR_poll: case NR_ppoll: case NR_restart_syscall: case NR_close:
		return true;
	}
	return false;
}

/* Is syscall @nr, with registers @regs (SYS_REG), a wait for an event loop's work? */
static __always_inline bool stall_loop_wait(struct pt_regs *regs, const bool typed, __s32 nr)
{
	switch (nr) {
	case NR_epoll_wait: case NR_epoll_pwait: case NR_epoll_pwait2:
		return true;
	case NR_poll: case NR_ppoll:
		return SYS_REG(regs, typed, si) > 1;
	}
	return false;
}

/*
 * Send the stall of thread @task of @tgid that ended at @now after @busy ns,
 * with @flags (enum lp_stall_flag); @remote: @task is not current (the
 * in-flight iterator).
 */
static __always_inline void stall_send(struct task_struct *task, __u32 tgid, __u64 now,
				       __u64 busy, __u32 flags, const bool remote)
{
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct lp_stall_event *e;

	if (!proc)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LP_STAT_EVENTS_LOST);
		return;
	}
	e->e.type = LP_EVENT_STALL;
	e->e.pid = tgid;
	e->e.ppid = 0;
	e->e.gen = proc->gen;
	e->e.time_ns = now;
	if (remote) {
		bpf_probe_read_kernel_str(e->e.comm, sizeof(e->e.comm), task->comm);
		e->tid = task->pid;
	} else {
		bpf_get_current_comm(e->e.comm, sizeof(e->e.comm));
		e->tid = (__u32)bpf_get_current_pid_tgid();
	}
	e->dur_ns = busy;
	e->flags = flags;
	stat_inc(LP_STAT_EVENTS);
	bpf_ringbuf_submit(e, 0);
}

/*
 * sys_enter of @nr at @now: a loop wait ends @t's stretch (sent if a stall).
 * So does the close of the epoll descriptor its last wait was on: the loop
 * is gone (asyncio.run's end), and what the thread runs after it, until its
 * next loop if any, is no stall (CI: 70 ms of an interpreter's finalization
 * after the loop were charged as stall weight, no stall listed for them).
 */
static __always_inline void stall_sys_enter(struct lp_task *t, struct pt_regs *regs,
					    const bool typed, __s32 nr, __u64 now)
{
	__u64 busy;

	if (nr == NR_close) {
		if (!t->loop_ready || t->loop_fd < 0 ||
		    (__s32)SYS_REG(regs, typed, di) != t->loop_fd)
			return;
		t->loop_fd = -1;
	} else if (stall_loop_wait(regs, typed, nr)) {
		t->track_flags |= LP_TASK_LOOP_WAIT;
		t->loop_fd = nr == NR_poll || nr == NR_ppoll ? -1 : (__s32)SYS_REG(regs, typed, di);
	} else {
		return;
	}
	busy = stall_busy_ns(t, now);
	t->loop_ready = 0;
	if (busy >= cfg_stall_min_ns)
		stall_send(NULL, t->tgid, now, busy, 0, false);
}

/* A stall @task (state @t) is in at the stop, @stop: sent, its time up to then. */
static __always_inline void stall_in_flight(struct task_struct *task, const struct lp_task *t,
					    __u64 stop)
{
	__u64 busy = stall_busy_ns(t, stop);

	if (cfg_stall_min_ns && busy >= cfg_stall_min_ns)
		stall_send(task, t->tgid, stop, busy, LP_STALL_IN_FLIGHT, true);
}

/*
 * sys_exit at @now, returning @ret: the return of a loop wait starts @t's
 * next stretch. Not when the kernel is about to restart it (a stop signal,
 * ptrace, the cgroup freezer): the wait goes on, again or as
 * restart_syscall, whose exit (the flag still set) starts the stretch.
 */
static __always_inline void stall_sys_exit(struct lp_task *t, __u64 now, long ret)
{
	if (!(t->track_flags & LP_TASK_LOOP_WAIT))
		return;
	if (ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK)
		return;
	t->track_flags &= ~LP_TASK_LOOP_WAIT;
	t->loop_ready = (__u32)(now >> STALL_SHIFT) | 1;
}

#endif
