// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU collector: a perf_event cpu-clock program on every online CPU. Each
 * sample of a target is counted in the kernel by {tgid, gen, comm, user stack
 * id, kernel stack id}; only the aggregate crosses to user space.
 */
#include "gil.bpf.h"
#include "stacks.bpf.h"
#include "stalls.bpf.h"
#include "targets.bpf.h"
#include "task.bpf.h"
#include "ustack.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* resized by user space before load */
	__type(key, struct lp_sample_key);
	__type(value, __u64);
} cpu_samples SEC(".maps");

/* Index of cs in the uapi struct pt_regs of x86-64 (8-byte slots), the ctx's layout. */
#define UAPI_PT_REGS_CS 17

/*
 * x86: the privilege level of the interrupted code is in the low bits of CS.
 * Read at its uapi offset, not as ctx->regs.cs: vmlinux.h's pt_regs is the
 * kernel's, whose cs became a 2-byte union member in 6.9 ("x86/ptrace:
 * Cleanup the definition of the pt_regs structure", for FRED), and CO-RE
 * then refuses the 8-byte load the context requires on a kernel where cs is
 * still 8 bytes (6.1: "unexpected mem size"). The uapi layout never changed.
 */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
	__u64 cs = ((const volatile __u64 *)ctx)[UAPI_PT_REGS_CS];

	return (cs & 3) != 0;
}

/*
 * LP_USTACK_IN_STALL when the current thread is inside an event-loop stall,
 * and not in a timed syscall: that one is charged its whole time at its exit.
 */
static __always_inline __u32 cpu_stall_flag(void)
{
	struct lp_task *t = task_state_find(bpf_get_current_task_btf());

	if (!t || (t->sys_start && sys_traced(t->sys_nr)))
		return 0;
	return stall_in(t, bpf_ktime_get_ns()) ? LP_USTACK_IN_STALL : 0;
}

/* What gil.bpf.h declares: the sampler's GIL holder check. */
__noinline int gil_cpu_sample(__u32 tgid, __u32 tid, __u64 ts)
{
	struct lp_py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct lp_gil_thread *g;
	__u64 holder = 0;
	__s32 locked = 0;

	if (!pp || !pp->gil)
		return 0;
	g = gil_thread(tgid, tid);
	if (!g)
		return 0;
	__sync_fetch_and_add(&g->samples, 1);
	if (!bpf_probe_read_user(&locked, sizeof(locked), (void *)(pp->gil + pp->gil_locked)) &&
	    locked == 1 &&
	    !bpf_probe_read_user(&holder, sizeof(holder), (void *)(pp->gil + pp->gil_holder)) &&
	    holder == ts)
		__sync_fetch_and_add(&g->held, 1);
	return 0;
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lp_sample_key key = {};
	struct lp_proc *proc;
	__u64 one = 1, *count;
	long err = 1;	/* stays 1 when the key was there */
	bool kthread;

	proc = current_target(tgid);
	if (!proc)
		return 0;
	stat_inc(LP_STAT_SAMPLES);
	key.tgid = tgid;
	key.gen = proc->gen;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	task_count_add(tgid, key.comm, 1, 0, 0);
	/* a sample taken in user mode has no kernel stack: not a loss */
	key.kstack_id = in_user_mode(ctx) ? -ENOENT : stack_get(ctx, 0, true);
	/* kernel threads have no user stack: not a loss */
	kthread = bpf_get_current_task_btf()->flags & PF_KTHREAD;
	if (kthread) {
		key.ustack_id = -EFAULT;
	} else if (cfg_unwind_dwarf) {
		/* counted in user space once unwound; a loss is counted inside */
		if (key.kstack_id != -ENOENT)
			count_stack_error(key.kstack_id, LP_STAT_KSTACK_FULL,
					    LP_STAT_KSTACK_EFAULT, LP_STAT_KSTACK_OTHER);
		ustack_submit(LP_SAMPLE_CPU, tgid, key.gen, key.kstack_id, 1,
			      cfg_stall_min_ns ? cpu_stall_flag() : 0);
		return 0;
	} else {
		key.ustack_id = stack_get(ctx, BPF_F_USER_STACK, true);
	}
	if (!kthread)
		count_stack_error(key.ustack_id, LP_STAT_USTACK_FULL, LP_STAT_USTACK_EFAULT,
			    LP_STAT_USTACK_OTHER);
	if (key.kstack_id != -ENOENT)
		count_stack_error(key.kstack_id, LP_STAT_KSTACK_FULL, LP_STAT_KSTACK_EFAULT,
				    LP_STAT_KSTACK_OTHER);

	/* new keys go in with their count: serve's drain may take them at once */
	count = map_lookup_or_init(&cpu_samples, &key, &one, &err);
	if (!err)
		return 0;
	if (count)
		__sync_fetch_and_add(count, 1);
	else	/* the map is full */
		stat_inc(LP_STAT_SAMPLES_DROPPED);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
