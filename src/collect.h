/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collector: the BPF programs and maps of one session (session.h runs
 * it), and the only module that sees the skeleton (its files are
 * src/collect/, one job each, listed in its private header). Lifecycle:
 * collect_open (open, configure, load, seed targets) -> collect_attach ->
 * collect_poll in a loop -> collect_detach -> collect_build_profile (or,
 * for serve, collect_drain while it runs) -> collect_free.
 *
 * It snapshots each target's memory map (via the symbolizer) the moment the
 * kernel reports a new process or an exec, so processes that exit before the
 * end of the recording still symbolize.
 */
#ifndef LATPROF_COLLECT_H
#define LATPROF_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/collectopts.h"
#include "src/profile.h"
#include "src/proctree.h"
#include "src/sysstats.h"
#include "src/timeline.h"
#include "symbolize/symbolize.h"

/* A target's lifecycle event (enum lp_event_type) with its current comm. */
typedef void (*collect_proc_fn)(void *arg, int type, pid_t pid, const char *comm);
/* An event loop's stall of @dur_ns in process @pid, thread name @comm. */
typedef void (*collect_stall_fn)(void *arg, pid_t pid, const char *comm, uint64_t dur_ns);

struct collect_opts {
	/*
	 * The command line's collector options (collectopts.h) as the session
	 * adjusted them for its kind: what they say reaches the collector
	 * without a copy of its own, so a new option is added in collectopts
	 * and used here. Their lists are the caller's: read only while opening.
	 */
	struct collector_opts cli;
	/* the session's sizing (session.c) */
	uint32_t max_stacks;		/* distinct stacks kept, at most */
	uint32_t max_samples;		/* distinct sample keys (cpu, timed) */
	uint32_t max_sys_stats;		/* distinct (process, syscall) pairs */
	uint32_t max_procs;		/* traced processes */
	uint32_t ustack_ring_bytes;	/* ring buffer for copied stacks */
	/*
	 * Kernel memory for the per-CPU syscall stats of the first processes
	 * (an array: no hash on every call); 0: every process in the hash.
	 */
	size_t sys_fast_bytes;
	bool verbose;			/* libbpf warnings and debug output */
	/*
	 * serve: lifecycle events go to proc_fn as well, and stalls to
	 * stall_fn (with proc_arg) instead of being kept.
	 */
	collect_proc_fn proc_fn;
	collect_stall_fn stall_fn;
	void *proc_arg;
	/*
	 * serve's metrics-only session: lifecycle events go to proc_fn
	 * only, no process is snapshotted (no symbolizer state grows)
	 */
	bool proc_events_only;
	/*
	 * serve: collect_drain takes the statistics (the array's too, whose
	 * blocks it hands back), exited processes' included
	 */
	bool sys_fast_drain;
	/*
	 * serve's shared session: CPU samples and off-CPU time counted per
	 * (process, thread name) in the kernel for collect_drain, which then
	 * leaves the samples by stack and the stacks to collect_cut_profile
	 */
	bool task_counts;
	bool no_waits;			/* no wait rule (serve's series have no waits) */
};

/* What collect_drain hands over; any callback may be NULL. */
struct collect_drain_ops {
	/* (tgid, syscall) statistics since the last drain; s->pid is tgid */
	void (*sys)(void *arg, const struct sys_stat *s);
	/* CPU samples of a thread name of tgid */
	void (*cpu)(void *arg, uint32_t tgid, const char *comm, uint64_t samples);
	/* off-CPU time of a thread name of tgid (outside slow syscalls too) */
	void (*offcpu)(void *arg, uint32_t tgid, const char *comm, uint64_t blocked_ns,
		       uint64_t preempted_ns);
	void *arg;
};

struct collect_stats {
	uint64_t stat[LP_STAT_NR];	/* summed over CPUs */
	uint64_t procs_seen;		/* processes snapshotted */
	uint64_t images_ended;		/* images kept of processes gone (or exec'd) */
	uint64_t snapshot_failed;	/* processes gone before their maps were read */
};

struct collect;

/*
 * Open and load the BPF programs and seed the target map. Returns the session
 * or NULL with *err = -errno; *why then says which step failed.
 */
struct collect *collect_open(const struct collect_opts *o, struct symbolizer *sym, int *err,
			     const char **why);

/* Make @pid a target. 0 or -errno. */
int collect_add_pid(struct collect *c, pid_t pid);

/*
 * Make @pid, a command latprof forked and holds until attached, a target.
 * What it does before its exec (waiting for the release) is latprof's, not
 * the command's, and is left out of the profile. @file is what it will
 * exec (argv[0], looked up in PATH like execvp). 0 or -errno.
 */
int collect_add_command(struct collect *c, pid_t pid, const char *file);

/*
 * The processes traced now (the command, the -p pids and their children
 * that live) appended to @out (the caller frees its items). 0 or -errno.
 */
int collect_targets(struct collect *c, struct pid_list *out);

/* Attach all programs and start sampling on every online CPU. 0 or -errno. */
int collect_attach(struct collect *c);

/* Handle lifecycle events for up to @timeout_ms. 0 or -errno (EINTR is 0). */
int collect_poll(struct collect *c, int timeout_ms);

/*
 * Stop sampling (perf events and programs detach), then report what is
 * still in flight (open syscalls, threads off CPU) with its time so far.
 * Idempotent.
 */
void collect_detach(struct collect *c);

/*
 * How much of the rings collect_detach reads: @all, every record left (the
 * targets ended on their own: nothing cut the recording short), else for
 * COLLECT_STOP_READ_MS (a deadline or a signal), the rest counted unread.
 */
void collect_stop_read_all(struct collect *c, bool all);

/* Did CO-RE relocate against the cached minimized kernel BTF (btfcache.h)? */
bool collect_btf_cached(const struct collect *c);

/* Are the syscall hooks the tp_btf builds (syshooks.h), not raw_tp? */
bool collect_sys_typed(const struct collect *c);

/* Loss and progress counters. Cannot fail. */
void collect_get_stats(struct collect *c, struct collect_stats *st);

/*
 * The loss counters only (st->stat; the rest zero), read from the kernel:
 * safe on another thread than the one polling the session. Cannot fail.
 */
void collect_get_losses(struct collect *c, struct collect_stats *st);

/*
 * Drain the kernel's aggregation into @p: symbolized samples with pid/comm
 * (and syscall, category, offcpu) labels; value columns "samples" and "cpu"
 * (cpu mode), "syscalls" and "latency" (syscall mode), "offcpu" (offcpu
 * mode); mappings with build-ids; per-syscall statistics, requests
 * (src/requests.h), files and peers (src/iotrack.h) and the loss counters as
 * metadata. 0 or -errno.
 */
int collect_build_profile(struct collect *c, struct profile *p);

/* Whether the samples of process @tgid go into a look (collect_peek_profile). */
typedef bool (*collect_keep_fn)(void *arg, uint32_t tgid);

/*
 * A look at the aggregation while the session runs (latprof top): the
 * samples and syscall statistics so far, symbolized into @p like
 * collect_build_profile's, with the loss counters; nothing is taken out of
 * the maps, and none of the end's metadata (requests, processes, the
 * timeline) is added. Only the samples of the processes @keep keeps (NULL:
 * all): a live view leaves out those that ended long ago, whose samples no
 * longer change. With @sys, the per-(process, syscall) statistics are
 * appended there instead of to @p's metadata (no text to write and parse
 * again at every look). Costs what symbolizing the samples costs: each
 * address is resolved once and cached. 0 or -errno.
 */
int collect_peek_profile(struct collect *c, struct profile *p, collect_keep_fn keep, void *arg,
			 struct sys_stats *sys);

/*
 * Forget the unwound samples of the processes @keep does not keep (a live
 * view without -o never looks at an ended process's samples again): what a
 * long session holds then follows the processes alive, not all there were.
 * Returns how many distinct stacks went. Cannot fail.
 */
size_t collect_forget(struct collect *c, collect_keep_fn keep, void *arg);

/*
 * For serve's history: the samples collected since the previous cut (or
 * the attach) into @p, symbolized, with the columns, labels, mappings and
 * loss counters of collect_build_profile, but not the per-syscall
 * statistics, requests, files, stalls or GIL waits of a whole recording;
 * with --requests, the count and p99 of the requests that ended since the
 * last cut (window.requests, window.requests_p99_ns).
 * The in-kernel samples, the stacks map and the unwound stacks are emptied,
 * so the next cut holds what happened after this one, and requests and
 * stalls kept so far are dropped, so a session cut forever stays in its
 * memory. The session keeps running. 0 or -errno.
 */
int collect_cut_profile(struct collect *c, struct profile *p);

/*
 * The cumulative counters of the timeline so far: CPU time from the CPU
 * samples of every target (samples x period; 0 without --mode cpu), syscall
 * time by category and open calls from the in-kernel per-(process, syscall)
 * statistics (0 without --mode syscall; a syscall counts when it ends).
 * Cheap enough for once a second: reads a few per-CPU maps. 0 or -errno.
 */
int collect_counters(struct collect *c, struct timeline_counters *out);

/*
 * The process tree so far (times absolute, CLOCK_MONOTONIC): fork, exec and
 * exit of every target as the events arrive in collect_poll. Borrowed; the
 * caller may add memory samples and store it.
 */
struct proc_tree *collect_procs(struct collect *c);

/* Bounds of the process tree (proctree.h). */
#define COLLECT_MAX_PROCS 4096
#define COLLECT_MAX_MEM_SAMPLES 262144

/*
 * Ring buffer records are read for at most this long past a poll's wait, and
 * for this long after the stop; the rest of a backlog is counted, not read.
 */
#define COLLECT_POLL_BUDGET_MS 50
#define COLLECT_STOP_READ_MS 500

/*
 * Exited processes whose proc.PID.* unwinding counters are their own; later
 * ones add to their name's (src/sysexited.h pseudo pids).
 */
#define COLLECT_UNWIND_KEPT 256

/* (process, descriptor) conversations bpf/waits.bpf.h keeps (docs/syscalls.md) */
#define COLLECT_CONVS 16384

/* Event-loop stalls a recording keeps (src/stalls.h); later ones are counted */
#define COLLECT_MAX_STALLS 100000

/*
 * (process, thread name) pairs of task_counts (serve's drain takes them
 * every second; a new pair past it counts in lost.samples_dropped_map_full)
 */
#define COLLECT_TASK_COUNTS 16384

/* Python threads whose GIL waits are kept (struct lp_gil_thread each) */
#define COLLECT_GIL_THREADS 16384

/*
 * For a long-running session: read and delete every entry of the in-kernel
 * aggregation (syscall statistics, CPU and timed samples), handing each to
 * @ops, and empty the stack map, so the maps never fill and what is handed
 * over is exactly what happened since the previous drain (an update racing
 * with the deletion of its entry can be lost). Stacks are not symbolized.
 * With task_counts, the CPU and off-CPU counts come from their own map and
 * the samples by stack and the stacks are left for collect_cut_profile;
 * this drain then touches only what no other call does, so it may run on
 * another thread than the one polling and cutting the session (not two
 * drains at once). 0 or -errno.
 */
int collect_drain(struct collect *c, const struct collect_drain_ops *ops);

/* The name of loss counter @stat (enum lp_stat), as in "lost.NAME" metadata. */
const char *collect_stat_name(int stat);

/* NULL is a no-op; detaches first. */
void collect_free(struct collect *c);

#endif
