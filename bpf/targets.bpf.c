// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every collector shares, defined once (common.bpf.h declares it):
 * which processes are traced (procs) and their threads' state (task_slots),
 * stack ids and the time charged to them, lifecycle events for user space
 * (events), loss counters (stats) and the configuration more than one
 * program file reads. The programs here follow targets' lifecycle:
 * children of targets become targets at fork; an exec bumps the process's
 * generation so its new image is symbolized with new maps.
 */
#include "targets.bpf.h"
#include "task.bpf.h"

const volatile __u32 cfg_all = 0;
const volatile __u32 cfg_nr_comms = 0;
const volatile __u32 cfg_self_tgid = 0;
const volatile char cfg_comms[LP_MAX_COMMS][LP_COMM_LEN] = {};
const volatile __u32 cfg_sys_fast_slots = 0;
const volatile __u32 cfg_bpf_loop = 0;
const volatile __u32 cfg_offcpu = 0;
const volatile __u64 cfg_offcpu_min_ns = 1000000;
const volatile __u64 cfg_stall_min_ns = 0;
const volatile __u32 cfg_sys_filter_on = 0;
const volatile __u8 cfg_sys_filter[LP_MAX_SYSCALL_NR] = {};
__u64 lp_target_bits[LP_TARGET_WORDS] = {};
__u32 lp_proc_stamps = 0;	/* the last struct lp_proc.stamp given */
__u64 lp_regs_cache[LP_REGS_CACHE_SLOTS] = {};
__u64 lp_regs_offset = 0;

struct procs_map procs SEC(".maps");
struct task_slots_map task_slots SEC(".maps");
struct fast_slots_map fast_slots SEC(".maps");
struct stacks_map stacks SEC(".maps");
struct stack_scratch_map stack_scratch SEC(".maps");
__u32 stack_next_id = 0;
const volatile __u32 cfg_max_stacks = 16384;
struct stats_map stats SEC(".maps");
struct events_map events SEC(".maps");
struct timed_samples_map timed_samples SEC(".maps");
struct task_counts_map task_counts SEC(".maps");
const volatile __u32 cfg_task_counts = 0;

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 tgid = BPF_CORE_READ(child, tgid);

	regs_cache_forget(child);
	if (tgid == ptgid)	/* a new thread, not a new process */
		return 0;
	if (!cfg_all && !bpf_map_lookup_elem(&procs, &ptgid))
		return 0;
	proc_add(tgid, ptgid);
	return 0;
}

/* A lifecycle event with room for the process tree's fields, or NULL (counted). */
static __always_inline struct lp_proc_event *proc_event_reserve(__u32 type, __u32 tgid,
								 __u32 gen)
{
	struct lp_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(LP_STAT_EVENTS_LOST);
		return NULL;
	}
	e->e.type = type;
	e->e.pid = tgid;
	e->e.ppid = 0;
	e->e.gen = gen;
	e->e.time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->e.comm, sizeof(e->e.comm));
	e->exit_code = 0;
	e->args_len = 0;
	e->rss_pages = 0;
	return e;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct lp_task_slot *slot_s;
	struct lp_proc_event *e;
	__u64 start, end, len;
	__u32 slot;

	if (!proc)
		return 0;
	if (old_pid != BPF_CORE_READ(p, pid))
		task_slot_rekey(p, old_pid, tgid);
	proc->gen++;
	/* the new image's conversations: those left open (no CLOEXEC) start over */
	proc->pending = 0;
	proc->clients = 0;
	proc->serves = 0;
	proc->stamp = __sync_fetch_and_add(&lp_proc_stamps, 1) + 1;
	/* the one thread left (de_thread ended the others) goes on with it */
	slot_s = task_slot_probe(BPF_CORE_READ(p, pid), BPF_CORE_READ(p, start_time),
				 TASK_PROBE_OWNED, &slot);
	if (slot_s) {
		slot_s->t.stamp = proc->stamp;
		slot_s->t.plain_fds = 0;	/* of the image before */
		slot_s->t.loop_ready = 0;	/* its event loop, if any, is gone */
	}
	e = proc_event_reserve(LP_EVENT_EXEC, tgid, proc->gen);
	if (!e)
		return 0;
	/* the new image's argv, already on its stack: no race with the program */
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > LP_ARGS_LEN)
		len = LP_ARGS_LEN;
	if (len && !bpf_probe_read_user(e->args, len & (2 * LP_ARGS_LEN - 1), (void *)start))
		e->args_len = len;
	stat_inc(LP_STAT_EVENTS);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * mm_struct before 6.2, whose rss_stat was one struct of atomic counters;
 * 6.2 made it an array of per-CPU counters (commit f1a7941243c1, "mm:
 * convert mm's rss stats into percpu_counter"). CO-RE picks the layout.
 */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
};

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
};

/*
 * Resident pages of @mm: file + anon + shmem, as get_mm_rss() counts them.
 * The per-CPU counters' central value lags by at most a batch per CPU (before
 * 6.2, by the up to 64 events each thread caches).
 */
static __always_inline __u64 mm_rss_pages(struct mm_struct *mm)
{
	struct mm_struct___pre62 *old = (void *)mm;
	__s64 file, anon, shmem;

	if (!mm)
		return 0;
	if (bpf_core_field_exists(old->rss_stat.count)) {
		file = BPF_CORE_READ(old, rss_stat.count[MM_FILEPAGES].counter);
		anon = BPF_CORE_READ(old, rss_stat.count[MM_ANONPAGES].counter);
		shmem = BPF_CORE_READ(old, rss_stat.count[MM_SHMEMPAGES].counter);
	} else {
		file = BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count);
		anon = BPF_CORE_READ(mm, rss_stat[MM_ANONPAGES].count);
		shmem = BPF_CORE_READ(mm, rss_stat[MM_SHMEMPAGES].count);
	}
	return file + anon + shmem > 0 ? file + anon + shmem : 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct *p)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lp_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct lp_proc_event *e;

	if (!proc)
		return 0;
	task_slot_release(p);
	/* signal->live drops to 0 before this tracepoint when the group dies */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	e = proc_event_reserve(LP_EVENT_EXIT, tgid, proc->gen);
	if (e) {
		e->exit_code = BPF_CORE_READ(p, exit_code);
		/* the mm is still attached where the tracepoint sits since it
		 * gained group_dead (before exit_mm); before that it reads 0 */
		e->rss_pages = mm_rss_pages(BPF_CORE_READ(p, mm));
		__builtin_memcpy(e->sys_used, proc->sys_used, sizeof(e->sys_used));
		stat_inc(LP_STAT_EVENTS);
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
