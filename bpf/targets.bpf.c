// SPDX-License-Identifier: GPL-2.0-only
/*
 * Target bookkeeping shared by every collector: which processes are traced
 * (procs), their lifecycle events for user space (events), loss counters
 * (stats) and the run configuration. Children of targets become targets at
 * fork; an exec bumps the process's generation so its new image is
 * symbolized with new maps.
 */
#include "common.bpf.h"

const volatile __u32 cfg_all = 0;
const volatile __u32 cfg_nr_comms = 0;
const volatile __u32 cfg_self_tgid = 0;
const volatile char cfg_comms[LP_MAX_COMMS][LP_COMM_LEN] = {};
const volatile __u32 cfg_sys_fast_slots = 0;

struct procs_map procs SEC(".maps");
struct fast_slots_map fast_slots SEC(".maps");
struct stacks_map stacks SEC(".maps");
struct stats_map stats SEC(".maps");
struct events_map events SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 tgid = BPF_CORE_READ(child, tgid);

	if (tgid == ptgid)	/* a new thread, not a new process */
		return 0;
	if (!cfg_all && !bpf_map_lookup_elem(&procs, &ptgid))
		return 0;
	proc_add(tgid, ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc)
		return 0;
	proc->gen++;
	event_send(LP_EVENT_EXEC, tgid, 0, proc->gen);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct *p)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc)
		return 0;
	/* signal->live drops to 0 before this tracepoint when the group dies */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	event_send(LP_EVENT_EXIT, tgid, 0, proc->gen);
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
