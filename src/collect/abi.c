// SPDX-License-Identifier: GPL-2.0-only
/*
 * The contract between the BPF programs and user space: the layouts of
 * bpf/latprof.h's records and map entries checked at compile time against
 * what user space reads, and the names under which the kernel's counters
 * (enum lp_stat) and the unwinding outcomes appear in metadata.
 */
#include "src/collect/priv.h"

_Static_assert(sizeof(struct lp_sample_key) == 32, "lp_sample_key layout");
_Static_assert(sizeof(struct lp_timed_key) == 40, "lp_timed_key layout");
_Static_assert(sizeof(struct lp_timed_value) == 40, "lp_timed_value layout");
/* a stacks map element in one 1 KiB allocation (latprof.h) */
_Static_assert(sizeof(struct lp_stack) == 960, "lp_stack layout");
_Static_assert(sizeof(struct lp_sys_key) == 8, "lp_sys_key layout");
_Static_assert(sizeof(struct lp_sys_stat) % 8 == 0, "lp_sys_stat layout");
_Static_assert(offsetof(struct lp_ustack_sample, stack) == LP_USTACK_HDR_SIZE, "ustack header");
_Static_assert(LP_HIST_SLOTS == SYS_HIST_SLOTS, "histogram slots");
_Static_assert(sizeof(struct lp_event) == 40, "lp_event layout");
_Static_assert(sizeof(struct lp_proc) == 24 + 8 * LP_SYS_USED_WORDS, "lp_proc layout");
_Static_assert((int)LP_WAIT_PATH == (int)SYSCALL_WAIT_DECIDED_PATH &&
	       (int)LP_WAIT_IDLE == (int)SYSCALL_WAIT_DECIDED_IDLE &&
	       (int)LP_WAIT_READY == (int)SYSCALL_WAIT_UNDECIDABLE, "lp_wait");
_Static_assert(sizeof(struct lp_proc_event) == 56 + LP_ARGS_LEN + 8 * LP_SYS_USED_WORDS,
	       "lp_proc_event layout");
_Static_assert(PROC_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(PROC_IMAGE_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(sizeof(struct lp_task) == 224, "lp_task layout");
_Static_assert(sizeof(struct lp_times) == sizeof(struct request_times), "lp_times layout");
_Static_assert((int)LP_REQ_CAT_NR == (int)REQUEST_CAT_NR, "request categories");
_Static_assert(LP_REQ_SHARED == REQUEST_SHARED, "request flags");
_Static_assert(sizeof(struct lp_conn) == 304, "lp_conn layout");
_Static_assert(sizeof(struct lp_req_event) == 320, "lp_req_event layout");
_Static_assert(sizeof(struct lp_open_event) == 32 + LP_PATH_LEN, "lp_open_event layout");
_Static_assert(sizeof(struct lp_peer_event) == 48, "lp_peer_event layout");
_Static_assert(sizeof(struct lp_fd_event) == 64, "lp_fd_event layout");
_Static_assert(sizeof(struct lp_py_proc) == 128, "lp_py_proc layout");
_Static_assert(sizeof(struct lp_gil_key) == 8, "lp_gil_key layout");
_Static_assert(sizeof(struct lp_gil_thread) == 32, "lp_gil_thread layout");

const char *const collect_stat_names[LP_STAT_NR] = {
	[LP_STAT_SAMPLES] = "samples",
	[LP_STAT_USTACK_FULL] = "ustack_map_full",
	[LP_STAT_USTACK_EFAULT] = "ustack_fault",
	[LP_STAT_USTACK_OTHER] = "ustack_error",
	[LP_STAT_KSTACK_FULL] = "kstack_map_full",
	[LP_STAT_KSTACK_EFAULT] = "kstack_fault",
	[LP_STAT_KSTACK_OTHER] = "kstack_error",
	[LP_STAT_SAMPLES_DROPPED] = "samples_dropped_map_full",
	[LP_STAT_PROCS_DROPPED] = "procs_dropped_map_full",
	[LP_STAT_EVENTS] = "events",
	[LP_STAT_EVENTS_LOST] = "events_lost",
	[LP_STAT_USTACKS_LOST] = "ustacks_lost",
	[LP_STAT_SYS_STATS_DROPPED] = "syscall_stats_unattributed_map_full",
	[LP_STAT_SYS_STATS_NOMEM] = "syscall_stats_unattributed_no_memory",
	[LP_STAT_TIMED_DROPPED] = "timed_dropped_map_full",
	[LP_STAT_TASK_STATE_FAILED] = "syscalls_untimed_no_task_slot",
	[LP_STAT_TRACK_LOST] = "track_events_lost",
	[LP_STAT_CONNS_DROPPED] = "descriptors_untracked_map_full",
	[LP_STAT_OFFCPU_UNMATCHED] = "offcpu_unmatched",
	[LP_STAT_PROC_TIMES_DROPPED] = "process_times_dropped_map_full",
	[LP_STAT_GIL_DROPPED] = "gil_threads_dropped_map_full",
};

const char *const collect_unwind_names[SYM_UNWIND_NR] = {
	[SYM_UNWIND_COMPLETE] = "stacks_complete",
	[SYM_UNWIND_TRUNCATED_COPY] = "truncated_copy",
	[SYM_UNWIND_TRUNCATED_DEPTH] = "truncated_depth",
	[SYM_UNWIND_NO_UNWIND_INFO] = "truncated_no_unwind_info",
	[SYM_UNWIND_BAD_READ] = "truncated_bad_read",
};

const char *collect_stat_name(int stat)
{
	return stat >= 0 && stat < LP_STAT_NR && collect_stat_names[stat] ? collect_stat_names[stat] : "unknown";
}
