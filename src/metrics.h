/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cumulative counters behind `latprof serve`'s /metrics: what each drain
 * of the kernel's maps handed over, added up per process name (comm) and
 * syscall since the agent started, and written in the Prometheus text format
 * with export_prom's writers.
 *
 * Series are per comm, not per pid: pids churn without end, names do not,
 * so the number of series stays bounded. Past max_series names (or (name,
 * syscall) pairs) new ones are counted under comm="other". A series nothing
 * was added to for a TTL is removed (expired), "other" too, so names that
 * come and go do not hold memory for the agent's life: one that comes back
 * starts from zero, a counter reset to Prometheus. The pid -> comm table is
 * fed by the collector's lifecycle events and forgets an exited process at
 * the end of the window that drained its last counts.
 *
 * Knows nothing about BPF or HTTP; not thread-safe (serve holds a lock).
 */
#ifndef LATPROF_METRICS_H
#define LATPROF_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "src/sysstats.h"

/* The comm of series past the limit. */
#define METRICS_OTHER "other"

/* What the agent says about itself on each scrape. */
struct metrics_agent {
	const char *const *lost_names;	/* loss counter names, cumulative values */
	const uint64_t *lost;
	size_t nr_lost;
	uint64_t cpu_ns;		/* the agent's user + system CPU time */
	uint64_t rss_bytes;
	uint64_t bpf_map_bytes;		/* memlock of every BPF map the agent holds */
	uint64_t uptime_ns;
	uint64_t profiles_active;	/* profile sessions running now */
	uint64_t profiles_total;	/* profile requests served */
	uint64_t profiles_rejected;	/* refused with 429 */
	uint64_t procs_tracked;		/* entries of the pid -> comm table */
	int has_history;		/* serve --history: write its families */
	uint64_t history_bytes, history_windows;	/* in memory */
	uint64_t history_spilled_bytes, history_dropped;
	uint64_t history_requests;	/* profiles cut out of the history */
	/* the triggers' rules (serve_trigger.h) and how often each fired */
	const char *const *trigger_names;
	const uint64_t *trigger_firings, *trigger_suppressed;
	size_t nr_triggers;
	unsigned int freq_hz;
	const char *mode;		/* "cpu,syscall" */
	const char *version;
	const char *kernel;
	int has_cpu, has_offcpu;	/* those collectors run: write their families */
};

struct metrics;

/*
 * An empty table allowing @max_series names and pairs, whose series expire
 * @ttl_ns after their last addition (0: never), or NULL (ENOMEM).
 */
struct metrics *metrics_new(size_t max_series, uint64_t ttl_ns);

/* NULL is a no-op. */
void metrics_free(struct metrics *m);

/*
 * Process @pid was created, exec'ed (@comm is then its new name) or exited
 * (@type: enum lp_event_type, 1 new, 2 exec, 3 exit). Cannot fail: a table
 * that cannot grow falls back to /proc/PID/comm.
 */
void metrics_proc_event(struct metrics *m, int type, pid_t pid, const char *comm);

/* The comm of @pid: from the events, else /proc/PID/comm, else "". */
const char *metrics_comm_of(struct metrics *m, pid_t pid, char *buf, size_t size);

/* Add the statistics of (s->pid, s->name) drained from the kernel. 0 or -ENOMEM. */
int metrics_add_sys(struct metrics *m, const struct sys_stat *s);

/* Add CPU samples of @pid (thread name @comm when the pid is unknown). 0 or -ENOMEM. */
int metrics_add_cpu(struct metrics *m, pid_t pid, const char *comm, uint64_t samples);

/* Add off-CPU time of @pid. 0 or -ENOMEM. */
int metrics_add_offcpu(struct metrics *m, pid_t pid, const char *comm, uint64_t blocked_ns,
		       uint64_t preempted_ns);

/* One event-loop stall of @ns in @pid, thread name @comm. 0 or -ENOMEM. */
int metrics_add_stall(struct metrics *m, pid_t pid, const char *comm, uint64_t ns);

/*
 * A drain is complete, at @now_ns (a monotonic clock): forget the processes
 * that had exited before it began, and expire the idle series. The add
 * functions date a series with the last drain's time (the first drain's for
 * those added before it), and a series is idle once the drain before this
 * one is ttl_ns past that, so what this window added is never expired
 * whatever the gap between drains; idle series are looked for every
 * min(ttl_ns / 4, 10 s). 0, or -ENOMEM when the pid table was emptied (it
 * refills from /proc); a failed expiry keeps the series until a later drain
 * succeeds. Every table stays usable.
 */
int metrics_end_window(struct metrics *m, uint64_t now_ns);

/* Entries of the pid -> comm table. Cannot fail. */
size_t metrics_nr_procs(const struct metrics *m);

/*
 * The cumulative statistics of @syscall (by name) of the processes named
 * @comm (NULL: every name) summed into @out; how many series were summed.
 * A series that expired starts again from zero. Cannot fail.
 */
size_t metrics_sys_sum(const struct metrics *m, const char *syscall, const char *comm,
		       struct sys_stat *out);

/* Number of (comm, syscall) series. Cannot fail. */
size_t metrics_nr_series(const struct metrics *m);

/* Number of per-comm series (CPU samples, off-CPU time). Cannot fail. */
size_t metrics_nr_tasks(const struct metrics *m);

/*
 * Write every family (Prometheus text format 0.0.4), series sorted by comm
 * and syscall, with the number of series held and expired. 0, -ENOMEM or
 * -EIO.
 */
int metrics_write(const struct metrics *m, const struct metrics_agent *a, FILE *out);

#endif
