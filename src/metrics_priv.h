/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the metrics module (metrics.h), shared by its two files and nothing
 * else: metrics.c (the counters: the series tables and the pid -> comm
 * table, filled by each drain, rebuilt to expire) and metrics_prom.c (their
 * Prometheus text, written on each scrape). The layout of the tables.
 */
#ifndef LATPROF_METRICS_PRIV_H
#define LATPROF_METRICS_PRIV_H

#include "src/metrics.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/lib/hashmap.h"
#include "src/lib/strtab.h"
#include "src/sysstats.h"

#define METRICS_COMM_LEN 16

struct metrics_sys {
	const char *comm;	/* interned */
	uint64_t updated_ns;	/* the last drain before its last addition */
	struct sys_stat st;	/* st.name: the syscall; st.pid unused */
};

struct metrics_task {
	const char *comm;	/* interned */
	uint64_t updated_ns;
	uint64_t samples, blocked_ns, preempted_ns;
	struct sys_stat stall;	/* event-loop stalls (st.name unused) */
};

struct metrics_proc {
	pid_t pid;
	uint64_t exited_in;	/* 1 + the window it exited in, 0 while alive */
	char comm[METRICS_COMM_LEN + 1];
};

/* The series and the names they use: what an expiry replaces as a whole. */
struct metrics_series {
	struct strtab *names;
	struct { struct metrics_sys *items; size_t nr, alloc; } sys;
	struct hashmap sys_idx;		/* (comm, syscall name) -> index + 1 */
	struct { struct metrics_task *items; size_t nr, alloc; } tasks;
	struct hashmap task_idx;	/* comm -> index + 1 */
};

struct metrics {
	struct metrics_series series;
	size_t max_series;
	uint64_t ttl_ns;		/* 0: series never expire */
	uint64_t now_ns;		/* of the last drain: dates what is added */
	uint64_t swept_ns;		/* of the last look for idle series */
	uint64_t expired;		/* series removed so far */
	bool dated;			/* a drain happened: now_ns is a time */
	uint64_t window;
	struct { struct metrics_proc *items; size_t nr, alloc; } procs;
	struct hashmap proc_idx;	/* pid -> index + 1 */
};

#endif
