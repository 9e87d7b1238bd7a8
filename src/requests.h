/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Requests found by `record --requests`: from the kernel's raw records
 * (start/end snapshots of cumulative thread and process times) to each
 * request's latency and breakdown, their storage in profile metadata, and
 * latency quantiles. Leaf logic: no BPF, no I/O, never prints.
 *
 * Breakdown: a request read and answered by one thread that does not also
 * accept connections is charged that thread's own time between the two
 * (exact for thread-per-request servers). Otherwise (an event loop that
 * accepts and reads on one thread, or a response written by another thread)
 * the process's time is split: between consecutive request boundaries of the
 * process, its time is shared equally among the requests open then
 * (proportional; flagged REQUEST_SHARED). Either way a breakdown never sums
 * past the request's latency: it is scaled down to it, and what is left is
 * "unaccounted" (runnable, page faults, time in untracked threads).
 *
 * Metadata: "requests.count", "requests.dropped", "requests.unanswered" and
 * chunks "requests.K" (K = 0, 1, ...) of up to METARECORDS_PER_CHUNK records
 * "pid,tid,fd,flags,start_ns,duration_ns,bytes_in,bytes_out,cpu_ns,
 * network_ns,file_ns,sync_ns,sleep_ns,other_ns" separated by ';'
 * (docs/formats.md).
 */
#ifndef LATPROF_REQUESTS_H
#define LATPROF_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

enum request_cat {
	REQUEST_CAT_NETWORK,
	REQUEST_CAT_FILE,
	REQUEST_CAT_SYNC,
	REQUEST_CAT_SLEEP,
	REQUEST_CAT_OTHER,
	REQUEST_CAT_NR,
};

#define REQUEST_SHARED 1u	/* breakdown proportional (shared event loop) */

/*
 * Cumulative times, as the kernel keeps them per thread and per process:
 * CPU (user + kernel), tick-sampled user and system time, and wall time in
 * syscalls by category. A request's CPU in its breakdown is its user CPU
 * only, since its syscalls' kernel CPU is already in their category: the
 * CPU difference split by the user/system tick ratio (as the kernel's
 * cputime_adjust does), or, when no tick fell in the request, the CPU
 * difference less the syscall time.
 */
struct request_times {
	uint64_t cpu_ns;
	uint64_t utime_ns, stime_ns;
	uint64_t cat_ns[REQUEST_CAT_NR];
};

#define REQUEST_TIMES_NR (3 + REQUEST_CAT_NR)	/* uint64_t fields of request_times */

/* A request as the kernel reported it. */
struct request_raw {
	uint32_t pid, fd, read_tid, write_tid;
	uint32_t flags;				/* REQUEST_SHARED */
	uint64_t start_ns, end_ns;		/* CLOCK_MONOTONIC */
	uint64_t bytes_in, bytes_out;
	struct request_times t_start, t_end;	/* read_tid's, write_tid's */
	struct request_times p_start, p_end;	/* the process's */
};

/* A request with its breakdown: user CPU, syscall wall time by category. */
struct request {
	uint32_t pid, tid, fd, flags;
	uint64_t start_ns, duration_ns;
	uint64_t bytes_in, bytes_out;
	uint64_t cpu_ns;
	uint64_t cat_ns[REQUEST_CAT_NR];
};

struct requests {
	struct request *items;
	size_t nr, alloc;
};

/* "network", "file", "sync", "sleep", "other". */
const char *request_cat_name(enum request_cat c);

/*
 * Turn @nr raw records into requests appended to @out, with breakdowns as
 * the header describes (shared requests of a process are split against each
 * other, so pass all of them at once). 0 or -ENOMEM.
 */
int requests_compute(const struct request_raw *raw, size_t nr, struct requests *out);

/* CPU + syscall time of @r, at most its duration. Cannot fail. */
uint64_t request_accounted_ns(const struct request *r);

/*
 * The @q quantile (0 < q <= 1) of @nr durations sorted ascending, by nearest
 * rank (the smallest value with at least q x nr values at or below it);
 * 0 when @nr is 0.
 */
uint64_t requests_quantile_ns(const uint64_t *sorted, size_t nr, double q);

/*
 * Store @r (in start order: sort it first) and the counters in @p's metadata.
 * 0 or -ENOMEM.
 */
int requests_store(struct profile *p, const struct requests *r, uint64_t dropped,
		   uint64_t unanswered);

/*
 * Read the requests stored in @p into @out (appended; free out->items).
 * Malformed records are skipped. 0 or -ENOMEM.
 */
int requests_load(const struct profile *p, struct requests *out);

/* What the report and the JSON export say about a set of requests. */
struct requests_summary {
	size_t count, shared;
	uint64_t p50_ns, p95_ns, p99_ns, min_ns, max_ns, mean_ns;
	uint64_t total_ns;			/* summed latency */
	uint64_t cpu_ns;			/* summed over the requests */
	uint64_t cat_ns[REQUEST_CAT_NR];
	uint64_t unaccounted_ns;
};

/* Summarize @r (order unchanged). 0 or -ENOMEM. */
int requests_summarize(const struct requests *r, struct requests_summary *s);

/* Sort @r by start time. Cannot fail. */
void requests_sort_by_start(struct requests *r);

#endif
