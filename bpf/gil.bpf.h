/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * GIL waits of CPython threads. A thread that wants the GIL while another
 * holds it waits in futex calls on the GIL's own condition variables and
 * mutexes (take_gil; drop_gil's forced switch), all inside its struct
 * _gil_runtime_state, whose address and size user space found for each
 * Python process (struct lp_py_proc's gil, symbolize/pygil.h). So a futex
 * wait of a target thread whose address lies in that range is a GIL wait,
 * known without symbols (stripped interpreters) and never confused with
 * the program's own locks (a threading.Lock is a futex elsewhere).
 *
 * The syscall hooks (syscall.bpf.c) mark such a call at its sys_enter
 * (LP_TASK_GIL_WAIT) and, at its sys_exit, add its time to the thread's
 * entry of gil_threads and flag its sample (LP_USTACK_GIL): its stack stays
 * the real one (...;take_gil;...;syscall:futex), only its category is
 * "gil". The CPU sampler counts each sample of a Python thread in the same
 * entry, and whether it found the thread holding the GIL (locked, with
 * last_holder its PyThreadState): the thread's time holding the GIL, as
 * sampled. A thread keeps its process's GIL in its state and looks
 * py_procs up again only after user space changed that map (lp_gil_epoch):
 * a futex call costs a load and a compare more, a lookup once per change.
 * Free-threaded builds have no GIL: user space never finds one, so nothing
 * is marked for them.
 */
#ifndef LATPROF_GIL_BPF_H
#define LATPROF_GIL_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"

#define NR_futex 202
/* futex operations that wait (include/uapi/linux/futex.h), without the flags */
#define FUTEX_CMD_MASK_ (~(128 | 256))	/* FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
#define FUTEX_WAIT_ 0
#define FUTEX_LOCK_PI_ 6
#define FUTEX_WAIT_BITSET_ 9
#define FUTEX_WAIT_REQUEUE_PI_ 11
#define FUTEX_LOCK_PI2_ 13

extern const volatile __u32 cfg_gil;	/* GIL waits looked for (Python, --mode syscall) */
extern __u32 lp_gil_epoch;	/* bumped by user space after each change of py_procs */

struct gil_threads_map {	/* per Python thread: its GIL waits and samples */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* resized by user space before load */
	__type(key, struct lp_gil_key);
	__type(value, struct lp_gil_thread);
};

extern struct gil_threads_map gil_threads SEC(".maps");	/* defined in ustack.bpf.c */

/* Is futex operation @op (its second argument) a wait? */
static __always_inline bool gil_futex_waits(__u64 op)
{
	switch (op & FUTEX_CMD_MASK_) {
	case FUTEX_WAIT_: case FUTEX_LOCK_PI_: case FUTEX_WAIT_BITSET_:
	case FUTEX_WAIT_REQUEUE_PI_: case FUTEX_LOCK_PI2_:
		return true;
	}
	return false;
}

/*
 * sys_enter of syscall @nr of thread @t, with registers @regs (SYS_REG):
 * mark a futex wait on its process's GIL, unmark anything else.
 */
static __always_inline void gil_sys_enter(struct lp_task *t, struct pt_regs *regs,
					  const bool typed, long nr)
{
	__u32 epoch = lp_gil_epoch;
	struct lp_py_proc *pp;
	__u64 uaddr;

	if (t->track_flags & LP_TASK_GIL_WAIT)
		t->track_flags &= ~LP_TASK_GIL_WAIT;	/* the last call's, kept past its exit */
	if (nr != NR_futex || !sys_traced(nr))
		return;
	if (t->gil_epoch != epoch) {
		pp = bpf_map_lookup_elem(&py_procs, &t->tgid);
		t->gil = pp ? pp->gil : 0;
		t->gil_size = pp ? pp->gil_size : 0;
		t->gil_epoch = epoch;
	}
	if (!t->gil)
		return;
	uaddr = SYS_REG(regs, typed, di);
	/* below the GIL, the difference wraps past its size */
	if (uaddr - t->gil >= t->gil_size || !gil_futex_waits(SYS_REG(regs, typed, si)))
		return;
	t->track_flags |= LP_TASK_GIL_WAIT;
}

/* The gil_threads entry of thread @tid of @tgid, added when new; NULL (counted): full. */
static __always_inline struct lp_gil_thread *gil_thread(__u32 tgid, __u32 tid)
{
	static const struct lp_gil_thread zero;
	struct lp_gil_key key = { .tgid = tgid, .tid = tid };
	struct lp_gil_thread *g = map_lookup_or_init(&gil_threads, &key, &zero, NULL);

	if (!g)
		stat_inc(LP_STAT_GIL_DROPPED);
	return g;
}

/*
 * A GIL wait of @dur ns of thread @tid of @tgid ended (or is cut at the
 * stop). A global function (in syscall.bpf.c): inlined, its map update in
 * one branch of sys_exit doubled the states the verifier went through.
 */
int gil_wait_add(__u32 tgid, __u32 tid, __u64 dur);

/*
 * A CPU sample of thread @tid of @tgid, whose PyThreadState is @ts: count
 * it, and whether the thread holds the GIL now. A global function (in
 * cpu.bpf.c), verified once on its own and not in the sampler's every path.
 */
int gil_cpu_sample(__u32 tgid, __u32 tid, __u64 ts);

#endif
