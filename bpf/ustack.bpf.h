/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF half of DWARF unwinding, shared by every collector: copy the user
 * registers and the top of the user stack of the current task into the
 * ustacks ring buffer, for user space to unwind with the binaries' CFI.
 * Maps and configuration are defined in ustack.bpf.c.
 */
#ifndef LATPROF_USTACK_BPF_H
#define LATPROF_USTACK_BPF_H

#include "common.bpf.h"
#include "gil.bpf.h"
#include "python.bpf.h"

#define PAGE_BYTES 4096

extern const volatile __u32 cfg_unwind_dwarf;	/* user stacks: copy, not FP */
extern const volatile __u32 cfg_stack_size;	/* bytes to copy, <= LP_MAX_STACK_COPY */
extern const volatile __u32 cfg_nr_cpus;	/* possible CPUs: scratch slots per context */

/*
 * Which scratch record a program may use. The CPU sampler runs from a timer
 * interrupt and can land in the middle of a tracepoint program's copy on the
 * same CPU, so the two kinds have their own records: slot = cpu for the
 * sampler, nr_cpus + cpu for tracepoints, 2 x nr_cpus for the (run once)
 * in-flight iterator. The iterator reads another task's stack, which needs
 * bpf_copy_from_user_task and a sleepable iterator (5.18); before that it
 * sends the registers without the stack (USTACK_CTX_ITER_NOCOPY).
 */
enum ustack_ctx {
	USTACK_CTX_SAMPLE,
	USTACK_CTX_TRACE,
	USTACK_CTX_ITER,
	USTACK_CTX_ITER_NOCOPY,
};

/* A record plus one page of slack, so the verifier can bound each copy. */
struct ustack_scratch {
	struct lp_ustack_sample s;
	__u8 slack[PAGE_BYTES];
	/*
	 * One Python frame (python.bpf.h), read with a length masked to
	 * 2 * LP_PY_FRAME_READ - 1 and then checked against LP_PY_FRAME_READ.
	 * 6.1's verifier does not carry that check to the copy of the length
	 * spilled to the stack and reloaded for the read ("invalid access to
	 * map value"), so the buffer has room for the mask's bound, not the
	 * check's.
	 */
	__u8 pyframe[2 * LP_PY_FRAME_READ + 8];
	/* the walk's frames, appended to the sample after its stack */
	struct lp_py_frame py[LP_PY_MAX_FRAMES];
};

struct ustack_scratch_map {	/* one record per CPU: too big for the BPF stack */
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);	/* resized to 2 x CPUs + 1 before load */
	__type(key, __u32);
	__type(value, struct ustack_scratch);
};

struct ustacks_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);	/* resized by user space before load */
};

extern struct ustack_scratch_map ustack_scratch SEC(".maps");
extern struct ustacks_map ustacks SEC(".maps");

/*
 * Copy up to cfg_stack_size bytes from @sp, page by page: readability changes
 * only at page boundaries, so the copy stops exactly at the end of the
 * mapped stack instead of failing as a whole near its top. @remote: @task is
 * not current (a sleepable iterator reads another address space).
 */
static __always_inline __u32 ustack_copy(struct lp_ustack_sample *s, __u64 sp,
					 struct task_struct *task, const bool remote)
{
	/* 64-bit on purpose: the verifier loses bounds across 32-bit copies */
	__u64 len = 0, n, off, want = cfg_stack_size;
	__u32 i;
	long err;

	for (i = 0; i < LP_MAX_STACK_COPY / PAGE_BYTES + 1; i++) {
		if (len >= want || len > LP_MAX_STACK_COPY - PAGE_BYTES)
			break;
		n = PAGE_BYTES - ((sp + len) & (PAGE_BYTES - 1));
		if (n > want - len)
			n = want - len;
		/* bounds the verifier can follow (barrier_var keeps clang from
		 * dropping them); the page of slack after stack[] covers off + n */
		barrier_var(n);
		n &= 2 * PAGE_BYTES - 1;
		if (n == 0 || n > PAGE_BYTES)
			break;
		off = len;
		barrier_var(off);
		off &= LP_MAX_STACK_COPY - 1;
		if (remote)
			err = bpf_copy_from_user_task(&s->stack[off], n, (void *)(sp + len), task, 0);
		else
			err = bpf_probe_read_user(&s->stack[off], n, (void *)(sp + len));
		if (err)
			break;
		len += n;
	}
	return len;
}

static __always_inline void ustack_read_regs(struct lp_ustack_sample *s, struct task_struct *task)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(task);

	s->regs[0] = BPF_CORE_READ(r, ax);
	s->regs[1] = BPF_CORE_READ(r, dx);
	s->regs[2] = BPF_CORE_READ(r, cx);
	s->regs[3] = BPF_CORE_READ(r, bx);
	s->regs[4] = BPF_CORE_READ(r, si);
	s->regs[5] = BPF_CORE_READ(r, di);
	s->regs[6] = BPF_CORE_READ(r, bp);
	s->regs[7] = BPF_CORE_READ(r, sp);
	s->regs[8] = BPF_CORE_READ(r, r8);
	s->regs[9] = BPF_CORE_READ(r, r9);
	s->regs[10] = BPF_CORE_READ(r, r10);
	s->regs[11] = BPF_CORE_READ(r, r11);
	s->regs[12] = BPF_CORE_READ(r, r12);
	s->regs[13] = BPF_CORE_READ(r, r13);
	s->regs[14] = BPF_CORE_READ(r, r14);
	s->regs[15] = BPF_CORE_READ(r, r15);
	s->regs[16] = BPF_CORE_READ(r, ip);
}

/*
 * Wake the reader only when a quarter of the ring is filled: a wakeup per
 * sample means an IPI and a context switch per sample on the profiled CPUs.
 * The reader also polls on a timer, so nothing waits long.
 */
static __always_inline __u64 ustack_wakeup_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&ustacks, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&ustacks, BPF_RB_RING_SIZE);

	return avail >= size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * Put the walk's py_nr frames after the @len bytes of stack copied, from the
 * next multiple of 8 (LP_USTACK_PY_OFF): the bytes of stack[] to send.
 */
static __always_inline __u32 ustack_append_py(struct lp_ustack_sample *s,
					      struct ustack_scratch *scratch, __u32 len)
{
	__u64 off = (len + 7) & ~7u, n = s->py_nr, bytes;

	barrier_var(off);
	off &= 2 * LP_MAX_STACK_COPY - 1;
	if (off > LP_MAX_STACK_COPY)
		return len;
	barrier_var(n);
	n &= 2 * LP_PY_MAX_FRAMES - 1;
	if (n == 0 || n > LP_PY_MAX_FRAMES)
		return len;
	bytes = n * sizeof(struct lp_py_frame);
	if (bpf_probe_read_kernel(&s->stack[off], bytes, scratch->py)) {
		s->py_nr = 0;
		s->py_walk = LP_PY_WALK_READ_FAILED;
		return len;
	}
	return off + bytes;
}

/* What a collector sends along with a user stack. */
struct ustack_info {
	__u32 kind;		/* enum lp_sample_kind */
	__u32 tgid;
	__u32 gen;
	__s32 kstack_id;
	__u64 value;
	__u64 blocked_ns;
	__u64 preempted_ns;
	__s32 nr;
	__u32 flags;
};

/*
 * Send the user stack of @task with @info, from a program of kind @ctx. The
 * user registers come from the task's saved pt_regs, so this works from any
 * hook (perf_event, tracepoints, iterators) whether the task was in user or
 * kernel mode. Only the iterators may pass a @task that is not current.
 * Returns 0, or -1 when the sample was lost (counted).
 */
static __always_inline int ustack_submit_task(const struct ustack_info *info,
					      struct task_struct *task, const enum ustack_ctx ctx)
{
	const bool remote = ctx == USTACK_CTX_ITER || ctx == USTACK_CTX_ITER_NOCOPY;
	__u32 slot = bpf_get_smp_processor_id();
	struct ustack_scratch *scratch;
	struct lp_ustack_sample *s;
	__u32 len, pylen;
	__u64 ts;

	if (ctx == USTACK_CTX_TRACE)
		slot += cfg_nr_cpus;
	else if (remote)
		slot = 2 * cfg_nr_cpus;
	scratch = bpf_map_lookup_elem(&ustack_scratch, &slot);
	if (!scratch) {
		stat_inc(LP_STAT_USTACKS_LOST);
		return -1;
	}
	s = &scratch->s;
	s->kind = info->kind;
	s->tgid = info->tgid;
	s->gen = info->gen;
	s->kstack_id = info->kstack_id;
	s->value = info->value;
	s->blocked_ns = info->blocked_ns;
	s->preempted_ns = info->preempted_ns;
	s->nr = info->nr;
	s->flags = info->flags;
	if (remote) {
		s->tid = BPF_CORE_READ(task, pid);
		bpf_probe_read_kernel_str(s->comm, sizeof(s->comm), task->comm);
	} else {
		s->tid = (__u32)bpf_get_current_pid_tgid();
		bpf_get_current_comm(s->comm, sizeof(s->comm));
	}
	ustack_read_regs(s, task);
	s->ts = bpf_ktime_get_ns();
	if (ctx == USTACK_CTX_ITER_NOCOPY) {
		/* another task's memory needs bpf_copy_from_user_task: not walked */
		s->py_walk = LP_PY_WALK_NONE;
		s->py_nr = 0;
	} else {
		ts = py_walk(s, scratch->py, task, info->tgid, scratch->pyframe, remote);
		/* a CPU sample of a Python thread: gil.bpf.h's held time */
		if (ctx == USTACK_CTX_SAMPLE && info->kind == LP_SAMPLE_CPU && cfg_gil && ts)
			gil_cpu_sample(info->tgid, s->tid, ts);
	}
	/* without a copy user space unwinds the leaf frame from the registers */
	len = ctx == USTACK_CTX_ITER_NOCOPY ? 0 : ustack_copy(s, s->regs[7], task, remote);
	barrier_var(len);
	len &= 2 * LP_MAX_STACK_COPY - 1;
	if (len > LP_MAX_STACK_COPY)
		return -1;
	s->stack_len = len;
	pylen = ustack_append_py(s, scratch, len);
	/*
	 * A slow syscall's stack (a value: its latency; off-CPU time alone
	 * waits like a sample) wakes an idle reader at once (0: the ring's
	 * own rule, a wakeup only when the reader has caught up): they are
	 * few, and the reader names Python frames from the live process, so
	 * it must not wait for a program that only waits to exit.
	 */
	if (bpf_ringbuf_output(&ustacks, s, LP_USTACK_HDR_SIZE + pylen,
			       ctx == USTACK_CTX_TRACE && info->value ? 0 : ustack_wakeup_flag())) {
		stat_inc(LP_STAT_USTACKS_LOST);
		return -1;
	}
	return 0;
}

/*
 * The CPU sampler's submit: the current task's user stack with @kind,
 * @value and @flags (enum lp_ustack_flag).
 */
static __always_inline int ustack_submit(__u32 kind, __u32 tgid, __u32 gen, __s32 kstack_id,
					 __u64 value, __u32 flags)
{
	struct ustack_info info = {
		.kind = kind,
		.tgid = tgid,
		.gen = gen,
		.kstack_id = kstack_id,
		.value = value,
		.nr = -1,
		.flags = flags,
	};

	return ustack_submit_task(&info, bpf_get_current_task_btf(), USTACK_CTX_SAMPLE);
}

#endif
