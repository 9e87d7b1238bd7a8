// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sections of `latprof report` (report.h) and the whole report, written
 * into memory with colour off and compared with tests/golden/report_*.txt
 * (UPDATE=1 rewrites them); then each section's output when the profile has
 * none of its data, which must be nothing at all.
 *
 * The input (profile_full) is a 2 s recording of every collector, stored the
 * way src/collect/build.c, the sampler and the session store it: pid 100 "app"
 * (main > handle > compute, main > wait_io) and its child 101 "worker";
 * 100 CPU samples at 100 Hz; top 3, 2 stacks, 2 slowest requests. What
 * the goldens must show, and why:
 * - time breakdown: CPU 600 + 300 + 100 ms = 1.00s; syscalls by category
 *   from the syscall.* counters: file 25 ms (read, pid 100) + 5 ms (read,
 *   pid 101) + 3 us (close) = 30ms, sync 60ms, sleep 100ms; off CPU outside
 *   syscalls: blocked 200ms, preempted 40ms (the futex sample's 60 ms off
 *   CPU is inside a syscall and not counted). Of 1430.003 ms: 69.9%, 2.1%,
 *   4.2%, 7.0%, 14.0%, 2.8%.
 * - syscalls, largest total first, read's two processes merged into one
 *   row: nanosleep 100ms; futex 2 calls of 30ms; read 15 calls, 1 error,
 *   30ms, avg 2.0ms, p50 1.0ms (rank 7.5 is in pid 101's 1 ms bucket),
 *   p95 = p99 = 6.2ms (mean of the 4 calls of 24.991 ms), max 8.0ms; close
 *   is the "1 more"; 21 calls, 1 error, 1 in flight.
 * - slow call sites: nanosleep 100ms, futex 60ms (2 calls, max 30ms; its
 *   stack runs through libc's pthread_cond_wait and
 *   __futex_abstimed_wait_common, which the site leaves out: main;wait_io),
 *   read from handle 25ms (4 calls, max 8.0ms); the 4th (worker's read,
 *   2.03 ms) is cut: the top 3 hold 184.991 of 187.021 ms = 98.9%. Then,
 *   apart, the idle waits: the worker's epoll_wait, 1.50s in 3 calls (max
 *   900ms), larger than any on-path site and still listed after them.
 * - processes: app 0.000-1.900 s, exit 0, peak RSS 20M, PSS 15M; worker
 *   indented under it, 0.200-1.500 s, SIGKILL, 2.0M, PSS never read "-";
 *   sh still running at 2.000 s, no memory "-".
 * - timeline: four 0.5 s rows; seconds per second = ms in the interval /
 *   500: CPU 0.50 0.50 0.60 0.40, file 0.02 x3, net 0.01, sync 0.12,
 *   sleep 0.20, other 0.04; opens 3 2 0 0; RSS 10.0 22.0 22.0 1.0 MB.
 * - requests of 10, 40 (shared) and 20 ms: p50 20ms, p95 = p99 = max 40ms,
 *   min 10ms, mean 23ms; per request CPU 22/3 = 7.3ms (31.4% of 70 ms),
 *   network 1.0ms 4.3%, file 7.3ms 31.4%, sync and sleep 1.7ms 7.1%,
 *   unaccounted 13/3 = 4.3ms 18.6%; slowest: +0.100s 40ms marked "*",
 *   +0.500s 20ms; 1 dropped, 2 unanswered.
 * - io: /var/log/app.log 2.0ms before /etc/app.conf (2 opens by 2
 *   processes: 8192 bytes read, 80us, 4 ops); 10.0.0.2:5432 5.0ms, then
 *   192.168.1.7 (clients) with 2 connections, 370 bytes in, 8000 out.
 * - the whole report: those sections in order between the header (2026-01-01
 *   00:00:00 in UTC, 100 cpu = 1.000 s on CPU, 3 processes) and top functions
 *   compute 60%, handle 60 + 30 + 10 = 100% total, vfs_read_[k] 10%; stacks
 *   #1 compute 60, #2 handle 30; unwinding of 100 and 101 (102 never
 *   sampled: left out); lost only kstack_missing 2, so "partial".
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "src/iotrack.h"
#include "src/profile.h"
#include "src/proctree.h"
#include "src/report.h"
#include "src/requests.h"
#include "src/stacks.h"
#include "src/lib/strtab.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/timeline.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"
#include "tests/unit/golden.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define BASE_NS (5 * SEC)	/* CLOCK_MONOTONIC at the recording's start */

/* The value columns as record --mode cpu,syscall,offcpu makes them. */
enum { COL_SAMPLES, COL_CPU, COL_SYSCALLS, COL_LATENCY, COL_OFFCPU, COL_NR };

typedef int (*section_fn)(FILE *out, const struct report_opts *o, const struct profile *p);

/* Functions of the fake program and kernel, and the location of each. */
struct fns {
	uint64_t main, handle, compute, wait_io, worker_loop, vfs_read;
	uint64_t cond_wait, futex_wait;	/* in libc.so.6 */
};

static uint64_t loc_of(struct profile *p, uint64_t mapping, uint64_t address, const char *name)
{
	struct profile_line line = { .function_id = profile_function_id(p, name, name, "", 0) };

	CHECK(line.function_id);
	return profile_add_location(p, mapping, address, &line, 1);
}

static void add_locations(struct profile *p, struct fns *f)
{
	struct profile_mapping app = { .start = 0x400000, .limit = 0x500000, .file = "/usr/bin/app",
				       .build_id = "", .has_functions = true };
	struct profile_mapping kernel = { .start = 0xffffffff81000000,
					  .limit = 0xffffffff82000000,
					  .file = PROFILE_KERNEL_MAPPING, .build_id = "",
					  .has_functions = true };
	struct profile_mapping libc = { .start = 0x7f0000000000, .limit = 0x7f0000200000,
					.file = "/usr/lib/x86_64-linux-gnu/libc.so.6", .build_id = "",
					.has_functions = true };
	uint64_t a = profile_add_mapping(p, &app), k = profile_add_mapping(p, &kernel);
	uint64_t c = profile_add_mapping(p, &libc);

	CHECK(a && k && c);
	f->main = loc_of(p, a, 0x401000, "main");
	f->handle = loc_of(p, a, 0x402000, "handle");
	f->compute = loc_of(p, a, 0x403000, "compute");
	f->wait_io = loc_of(p, a, 0x404000, "wait_io");
	f->worker_loop = loc_of(p, a, 0x405000, "worker_loop");
	f->vfs_read = loc_of(p, k, 0xffffffff81100000, "vfs_read");
	f->cond_wait = loc_of(p, c, 0x7f0000091000, "pthread_cond_wait");
	f->futex_wait = loc_of(p, c, 0x7f0000090000, "__futex_abstimed_wait_common");
}

/* One sample: @locs leaf first (0-terminated), @syscall NULL for none, @offcpu state or NULL. */
static void add_sample(struct profile *p, const uint64_t *locs, uint32_t pid, const char *comm,
		       const char *syscall, const char *category, int64_t max_ns,
		       const char *offcpu, const int64_t *values)
{
	struct profile_label l[7] = {
		{ .key = "pid", .num = pid },
		{ .key = "comm", .str = comm },
	};
	size_t n = 0, nl = 2;

	while (locs[n])
		n++;
	if (syscall) {
		l[nl++] = (struct profile_label){ .key = "syscall", .str = syscall };
		l[nl++] = (struct profile_label){ .key = "category", .str = category };
		/* as src/collect/build.c labels them when the hooks decide a wait idle */
		l[nl++] = (struct profile_label){
			.key = SYSCALL_WAIT_LABEL,
			.str = syscall_is_wait(syscall_number(syscall)) ? SYSCALL_WAIT_IDLE :
			       SYSCALL_WAIT_PATH
		};
	}
	if (max_ns)
		l[nl++] = (struct profile_label){ .key = "max_ns", .num = max_ns,
						  .num_unit = "nanoseconds" };
	if (offcpu)
		l[nl++] = (struct profile_label){ .key = "offcpu", .str = offcpu };
	CHECK(profile_add_sample(p, locs, n, values, l, nl) == 0);
}

static void add_samples(struct profile *p, const struct fns *f)
{
	const uint64_t compute[] = { f->compute, f->handle, f->main, 0 };
	const uint64_t handle[] = { f->handle, f->main, 0 };
	const uint64_t read_k[] = { f->vfs_read, f->handle, f->main, 0 };
	const uint64_t wait_io[] = { f->wait_io, f->main, 0 };
	const uint64_t cond_wait[] = { f->futex_wait, f->cond_wait, f->wait_io, f->main, 0 };
	const uint64_t worker[] = { f->worker_loop, f->main, 0 };

	/* CPU: 100 samples at 100 Hz */
	add_sample(p, compute, 100, "app", NULL, NULL, 0, NULL, (int64_t[COL_NR]){ 60, 600 * MS });
	add_sample(p, handle, 100, "app", NULL, NULL, 0, NULL, (int64_t[COL_NR]){ 30, 300 * MS });
	add_sample(p, read_k, 100, "app", NULL, NULL, 0, NULL, (int64_t[COL_NR]){ 10, 100 * MS });
	/* slow syscalls (>= 1 ms); the futex wait was off CPU as well */
	add_sample(p, read_k, 100, "app", "read", "file", 8 * MS, NULL,
		   (int64_t[COL_NR]){ 0, 0, 4, 24991000 });
	add_sample(p, cond_wait, 100, "app", "futex", "sync", 30 * MS, "blocked",
		   (int64_t[COL_NR]){ 0, 0, 2, 60 * MS, 60 * MS });
	add_sample(p, wait_io, 100, "app", "nanosleep", "sleep", 100 * MS, NULL,
		   (int64_t[COL_NR]){ 0, 0, 1, 100 * MS });
	add_sample(p, worker, 101, "worker", "read", "file", 1020000, NULL,
		   (int64_t[COL_NR]){ 0, 0, 2, 2030000 });
	/* the worker's event loop waiting for work: an idle wait, listed apart */
	add_sample(p, worker, 101, "worker", "epoll_wait", "sync", 900 * MS, NULL,
		   (int64_t[COL_NR]){ 0, 0, 3, 1500 * MS });
	/* off CPU outside syscalls */
	add_sample(p, wait_io, 100, "app", NULL, NULL, 0, "blocked",
		   (int64_t[COL_NR]){ 0, 0, 0, 0, 200 * MS });
	add_sample(p, compute, 100, "app", NULL, NULL, 0, "preempted",
		   (int64_t[COL_NR]){ 0, 0, 0, 0, 40 * MS });
}

/* A syscall's counters with its calls in at most two histogram slots. */
static void add_sys(struct profile *p, uint32_t pid, const char *name, uint64_t errors,
		    uint64_t max_ns, uint64_t in_flight, const uint64_t slots[2][3])
{
	struct sys_stat s = { .pid = pid, .errors = errors, .max_ns = max_ns,
			      .in_flight = in_flight };
	int i;

	snprintf(s.name, sizeof(s.name), "%s", name);
	for (i = 0; i < 2 && slots[i][1]; i++) {
		s.hist[slots[i][0]] = slots[i][1];
		s.hist_ns[slots[i][0]] = slots[i][2];
		s.count += slots[i][1];
		s.total_ns += slots[i][2];
	}
	CHECK(sys_stat_store(p, &s) == 0);
}

static void add_sys_stats(struct profile *p)
{
	/* {slot, calls, summed ns}; slot i holds [2^(i-1), 2^i) us */
	add_sys(p, 100, "read", 1, 8 * MS, 0, (const uint64_t[2][3]){ { 1, 6, 9000 },
								      { 13, 4, 24991000 } });
	add_sys(p, 100, "futex", 0, 30 * MS, 1, (const uint64_t[2][3]){ { 15, 2, 60 * MS } });
	add_sys(p, 100, "nanosleep", 0, 100 * MS, 0,
		(const uint64_t[2][3]){ { 17, 1, 100 * MS } });
	add_sys(p, 100, "close", 0, 1200, 0, (const uint64_t[2][3]){ { 1, 3, 3000 } });
	add_sys(p, 101, "read", 0, 1020000, 0, (const uint64_t[2][3]){ { 10, 5, 5 * MS } });
}

static void add_procs(struct profile *p)
{
	static const char args[] = "./app\0--serve";
	struct proc_tree t;
	struct proc_info *app, *worker, *sh;

	proc_tree_init(&t, 0, 0);
	app = proc_tree_start(&t, 100, 1, BASE_NS, "app");
	CHECK(app && proc_info_set_cmdline(app, args, sizeof(args)) == 0);
	CHECK(proc_tree_add_memory(&t, app, BASE_NS + SEC / 2, 10240, 8192) == 0);
	CHECK(proc_tree_add_memory(&t, app, BASE_NS + SEC, 20480, 15360) == 0);
	worker = proc_tree_start(&t, 101, 100, BASE_NS + 200 * MS, "worker");
	CHECK(worker && proc_tree_add_memory(&t, worker, BASE_NS + SEC, 2048, -1) == 0);
	sh = proc_tree_start(&t, 102, 100, BASE_NS + SEC, "sh");
	CHECK(sh != NULL);
	/* exits as the kernel reports them: a wait status */
	if (worker) {
		worker->ended = worker->has_status = true;
		worker->end_ns = BASE_NS + 1500 * MS;
		worker->status = 9;	/* SIGKILL */
	}
	if (app) {
		app->ended = app->has_status = true;
		app->end_ns = BASE_NS + 1900 * MS;
		app->status = 0;	/* exit 0 */
	}
	CHECK(proc_tree_store(&t, p, BASE_NS) == 0);
	proc_tree_release(&t);
}

/* One interval ending at @end_ms (from the start), with @ms of each series in it. */
static void add_interval(struct timeline *tl, struct timeline_counters *cur, uint64_t end_ms,
			 const uint64_t ms[TIMELINE_SERIES_NR], uint64_t opens, uint64_t rss_kb,
			 uint32_t procs)
{
	struct timeline_interval iv = { .rss_kb = rss_kb, .procs = procs };
	int s;

	for (s = 0; s < TIMELINE_SERIES_NR; s++)
		cur->ns[s] += ms[s] * MS;
	cur->opens += opens;
	CHECK(timeline_add(tl, end_ms * MS, cur, &iv) == 0);
}

static void add_timeline(struct profile *p)
{
	/* ms of CPU, file, network, sync, gil, sleep, other in each interval */
	static const uint64_t ms[4][TIMELINE_SERIES_NR] = {
		{ 250, 10, 0, 0, 0, 0, 0 },
		{ 250, 10, 0, 60, 0, 0, 0 },
		{ 300, 10, 5, 0, 0, 100, 0 },
		{ 200, 0, 0, 0, 0, 0, 20 },
	};
	struct timeline_counters cur = { { 0 } };
	struct timeline tl;

	timeline_init(&tl, 500 * MS, 0);
	tl.start_ns = BASE_NS;
	tl.has_cpu = tl.has_syscalls = true;
	add_interval(&tl, &cur, 500, ms[0], 3, 10240, 1);
	add_interval(&tl, &cur, 1000, ms[1], 2, 22528, 2);
	add_interval(&tl, &cur, 1500, ms[2], 0, 22528, 3);
	add_interval(&tl, &cur, 2000, ms[3], 0, 1024, 1);
	CHECK(timeline_store(&tl, p) == 0);
	timeline_release(&tl);
}

static void add_requests(struct profile *p)
{
	struct request items[] = {
		{ .pid = 100, .tid = 100, .fd = 5, .start_ns = BASE_NS + 200 * MS,
		  .duration_ns = 10 * MS, .bytes_in = 100, .bytes_out = 2000, .cpu_ns = 4 * MS,
		  .cat_ns = { [REQUEST_CAT_NETWORK] = 1 * MS, [REQUEST_CAT_FILE] = 2 * MS } },
		{ .pid = 100, .tid = 100, .fd = 6, .flags = REQUEST_SHARED,
		  .start_ns = BASE_NS + 300 * MS, .duration_ns = 40 * MS, .bytes_in = 150,
		  .bytes_out = 5000, .cpu_ns = 10 * MS,
		  .cat_ns = { [REQUEST_CAT_FILE] = 20 * MS, [REQUEST_CAT_SYNC] = 5 * MS } },
		{ .pid = 101, .tid = 103, .fd = 7, .start_ns = BASE_NS + 700 * MS,
		  .duration_ns = 20 * MS, .bytes_in = 120, .bytes_out = 1000, .cpu_ns = 8 * MS,
		  .cat_ns = { [REQUEST_CAT_NETWORK] = 2 * MS, [REQUEST_CAT_SLEEP] = 5 * MS } },
	};
	struct requests r = { .items = items, .nr = ARRAY_SIZE(items) };

	CHECK(requests_store(p, &r, 1, 2) == 0);
}

static void add_io(struct profile *p)
{
	const uint8_t server[4] = { 10, 0, 0, 2 }, client[4] = { 192, 168, 1, 7 };
	struct iotrack t;

	/* absolute paths only: nothing is read from /proc */
	CHECK(iotrack_init(&t, "/nonexistent") == 0);
	CHECK(iotrack_open(&t, 100, 3, -100, 1, "/etc/app.conf") == 0);
	iotrack_io(&t, 1, 4096, 0, 50000, 2);
	CHECK(iotrack_open(&t, 100, 4, -100, 2, "/var/log/app.log") == 0);
	iotrack_io(&t, 2, 0, 8192, 2 * MS, 4);
	CHECK(iotrack_open(&t, 101, 3, -100, 3, "/etc/app.conf") == 0);
	iotrack_io(&t, 3, 4096, 0, 30000, 2);
	CHECK(iotrack_peer(&t, 100, false, 4, AF_INET, server, 5432) == 0);
	iotrack_io(&t, 4, 1000, 500, 5 * MS, 10);
	CHECK(iotrack_peer(&t, 100, true, 5, AF_INET, client, 40000) == 0);
	iotrack_io(&t, 5, 200, 4000, 600000, 3);
	CHECK(iotrack_peer(&t, 100, true, 6, AF_INET, client, 40002) == 0);
	iotrack_io(&t, 6, 170, 4000, 400000, 3);
	CHECK(iotrack_store(&t, p) == 0);
	iotrack_release(&t);
}

/* What the session and the collector write about the run. */
static void add_meta(struct profile *p)
{
	static const char *const meta[] = {
		"version", "0.1.0", "command_line", "latprof record --requests -- ./app --serve",
		"kernel", "6.1.0-test", "freq_hz", "100", "unwind", "dwarf",
		"mode", "cpu,syscall,offcpu", "min_duration_us", "1000", "min_block_us", "1000",
		"track", "requests,files,net", "exit_status", "0", "count.samples", "100",
		"count.processes", "3", "lost.samples", "0", "lost.kstack_missing", "2",
		"proc.100.unwind", "dwarf", "proc.100.comm", "app",
		"proc.100.stacks_complete", "90", "proc.100.truncated_copy", "0",
		"proc.101.unwind", "dwarf", "proc.101.comm", "worker",
		"proc.101.stacks_complete", "40", "proc.101.truncated_copy", "1",
		"proc.101.truncated_depth", "2", "proc.101.truncated_bad_read", "3",
		"proc.102.unwind", "dwarf", "proc.102.comm", "sh", NULL
	};
	size_t i;

	for (i = 0; meta[i]; i += 2)
		CHECK(profile_set_meta(p, meta[i], meta[i + 1]) == 0);
}

/* A recording of everything: report.h's every section has something to say. */
static struct profile *profile_full(void)
{
	struct profile *p = profile_new();
	struct fns f;

	CHECK(p != NULL);
	if (!p)
		return NULL;
	CHECK(profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") == COL_SAMPLES);
	CHECK(profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") == COL_CPU);
	CHECK(profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count") == COL_SYSCALLS);
	CHECK(profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds") == COL_LATENCY);
	CHECK(profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds") == COL_OFFCPU);
	p->period_type.type = profile_str(p, PROFILE_TYPE_CPU);
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->default_type = p->period_type.type;
	p->period = 10 * MS;
	p->time_ns = 1767225600 * SEC;	/* 2026-01-01 00:00:00 UTC */
	p->duration_ns = 2 * SEC;
	add_locations(p, &f);
	add_samples(p, &f);
	add_sys_stats(p);
	add_meta(p);
	add_procs(p);
	add_timeline(p);
	add_requests(p);
	add_io(p);
	return p;
}

/*
 * One CPU sample and nothing else: what `record --mode cpu` of a short
 * process makes; @slow_columns: the columns of --mode syscall too, empty.
 */
static struct profile *profile_cpu_only(bool slow_columns)
{
	struct profile *p = profile_new();
	struct fns f;

	CHECK(p != NULL);
	if (!p)
		return NULL;
	CHECK(profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") == COL_SAMPLES);
	CHECK(profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") == COL_CPU);
	if (slow_columns) {
		CHECK(profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count") == COL_SYSCALLS);
		CHECK(profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds") == COL_LATENCY);
	}
	p->period = 10 * MS;
	add_locations(p, &f);
	add_sample(p, (const uint64_t[]){ f.compute, f.main, 0 }, 100, "app", NULL, NULL, 0,
		   NULL, (int64_t[COL_NR]){ 1, 10 * MS });
	return p;
}

/* What @fn writes for @p, as an owned string ("" when nothing). */
static char *render(section_fn fn, const struct report_opts *o, const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(out != NULL);
	if (!out)
		return NULL;
	CHECK(fn(out, o, p) == 0);
	CHECK(fclose(out) == 0);
	return buf;
}

#define CHECK_SECTION(golden, fn, o, p)                                  \
	do {                                                             \
		char *got_ = render(fn, o, p);                           \
		if (got_)                                                \
			check_golden(golden, got_);                      \
		free(got_);                                              \
	} while (0)

#define CHECK_RENDERS(fn, o, p, want)                                    \
	do {                                                             \
		char *got_ = render(fn, o, p);                           \
		CHECK_STR(got_, want);                                   \
		free(got_);                                              \
	} while (0)

static void check_sections(const struct profile *p)
{
	const struct report_opts o = { .weight = "cpu", .weight_unit = "count", .top = 3,
				       .stacks = 2, .slowest = 2 };

	CHECK_SECTION("report_time_breakdown.txt", report_time_breakdown, &o, p);
	CHECK_SECTION("report_syscalls.txt", report_syscalls, &o, p);
	CHECK_SECTION("report_slow_sites.txt", report_slow_sites, &o, p);
	CHECK_SECTION("report_processes.txt", report_processes, &o, p);
	CHECK_SECTION("report_timeline.txt", report_timeline, &o, p);
	CHECK_SECTION("report_requests.txt", report_requests, &o, p);
	CHECK_SECTION("report_io.txt", report_io, &o, p);
}

/* The whole report; colour on makes the same text with bold headings. */
static void check_profile(const struct profile *p)
{
	struct report_opts o = { .top = 3, .stacks = 2, .slowest = 2 };
	char *buf = NULL, *plain = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(out && report_profile(out, &o, p, "test.pb.gz") == 0);
	CHECK(out && fclose(out) == 0);
	CHECK_STR(o.weight, "cpu");
	CHECK_STR(o.weight_unit, "count");
	if (buf)
		check_golden("report_profile.txt", buf);
	plain = buf;
	buf = NULL;
	o = (struct report_opts){ .top = 3, .stacks = 2, .slowest = 2, .color = true };
	out = open_memstream(&buf, &len);
	CHECK(out && report_profile(out, &o, p, "test.pb.gz") == 0);
	CHECK(out && fclose(out) == 0);
	CHECK(buf && strstr(buf, "\033[1mlatprof report: test.pb.gz\033[0m\n"));
	CHECK(buf && strstr(buf, "\n\033[1mTime breakdown\033[0m (all target threads, summed)\n"));
	CHECK(buf && strstr(buf, "\n\033[1mTop functions by self cpu\033[0m\n"));
	CHECK(buf && plain && strlen(buf) > strlen(plain));
	free(plain);
	free(buf);
}

/* Each section writes nothing at all without its data. */
static void check_empty(void)
{
	const struct report_opts o = { .weight = "cpu", .weight_unit = "count", .top = 3,
				       .stacks = 2, .slowest = 2 };
	struct profile *p = profile_cpu_only(false);

	if (!p)
		return;
	CHECK_RENDERS(report_time_breakdown, &o, p, "");
	CHECK_RENDERS(report_syscalls, &o, p, "");
	CHECK_RENDERS(report_slow_sites, &o, p, "");
	CHECK_RENDERS(report_processes, &o, p, "");
	CHECK_RENDERS(report_timeline, &o, p, "");
	CHECK_RENDERS(report_requests, &o, p, "");
	CHECK_RENDERS(report_io, &o, p, "");
	profile_free(p);

	/* asked for but nothing seen: the heading and a "none" line, never silence */
	p = profile_cpu_only(true);
	if (!p)
		return;
	CHECK(profile_set_meta(p, "min_duration_us", "500") == 0);
	CHECK(profile_set_meta(p, "track", "files,net") == 0);
	CHECK_RENDERS(report_slow_sites, &o, p,
		      "\nSlow call sites (syscalls >= 500 us, innermost frames)\n"
		      "  none: no syscall reached the threshold\n");
	CHECK_RENDERS(report_io, &o, p,
		      "\nFiles (opened by path; bytes in bytes, time in syscalls on them)\n"
		      "      time    opens       read    written     ops  path\n"
		      "  none\n"
		      "\nNetwork (peers of connect and accept)\n"
		      "      time    conns       read    written     ops  peer\n"
		      "  none\n");
	/* only the count of requests: none kept */
	CHECK(profile_set_meta(p, "requests.count", "0") == 0);
	CHECK_RENDERS(report_requests, &o, p,
		      "\nRequests (on accepted connections, first request byte read to last "
		      "response byte written)\n"
		      "  0 requests, 0 more not kept (--max-requests), 0 unanswered at stop\n");
	profile_free(p);
}

/* A slow epoll_wait of the worker's loop whose hooks decided @wait. */
static void add_loop_wait(struct profile *p, const struct fns *f, const char *wait,
			  int64_t calls, int64_t ns)
{
	const uint64_t loc[] = { f->worker_loop, f->main };
	const struct profile_label l[] = {
		{ .key = "pid", .num = 101 }, { .key = "comm", .str = "worker" },
		{ .key = "syscall", .str = "epoll_wait" }, { .key = "category", .str = "sync" },
		{ .key = SYSCALL_WAIT_LABEL, .str = wait },
	};

	CHECK(profile_add_sample(p, loc, 2, (int64_t[COL_NR]){ 0, 0, calls, ns }, l, 5) == 0);
}

/*
 * One event loop's waits, the same stack, decided three ways: each group is
 * its own site, on the path first, undecided next, idle apart; with no wait
 * on the path, the report does not claim every wait was idle.
 */
static void check_wait_groups(void)
{
	const struct report_opts o = { .weight = "cpu", .weight_unit = "count", .top = 3,
				       .stacks = 2, .slowest = 2 };
	struct profile *p = profile_cpu_only(true);
	struct fns f;
	char *got;

	if (!p)
		return;
	CHECK(profile_set_meta(p, "min_duration_us", "1000") == 0);
	add_locations(p, &f);
	add_loop_wait(p, &f, SYSCALL_WAIT_READY, 1, 50 * MS);
	add_loop_wait(p, &f, SYSCALL_WAIT_IDLE, 3, 900 * MS);
	got = render(report_slow_sites, &o, p);
	CHECK(got && strstr(got, "none decided on the path of work"));
	CHECK(got && !strstr(got, "every slow syscall was an idle wait"));
	free(got);
	add_loop_wait(p, &f, SYSCALL_WAIT_PATH, 2, 200 * MS);
	CHECK_RENDERS(report_slow_sites, &o, p,
		      "\nSlow call sites (syscalls >= 1000 us, innermost frames)\n"
		      "    total   calls    max  site\n"
		      "    200ms       2    0ns  syscall:epoll_wait\n"
		      "                          main;worker_loop\n"
		      "  readiness waits, not decided (nothing to tell them by: pipes, a reply\n"
		      "  streaming in, begun before the recording; docs/syscalls.md): 50ms in 1 "
		      "calls\n"
		      "     50ms       1    0ns  syscall:epoll_wait\n"
		      "                          main;worker_loop\n"
		      "  idle waits, apart (a thread parked until work arrives: nothing pending on\n"
		      "  its connections, or accept; docs/syscalls.md): 900ms in 3 calls\n"
		      "    900ms       3    0ns  syscall:epoll_wait\n"
		      "                          main;worker_loop\n");
	profile_free(p);
}

/*
 * asyncio's awaits (src/awaits.h): tasks req-1 (300 ms) and req-2 (100 ms)
 * on one chain, handler > call_backend > _wait_for_data, one chain of
 * their own under asyncio's numbered names (serve > sleep, 200 ms): the
 * Awaits section groups the two requests (2 names, 66.7%), with the loop's
 * epoll_wait of 250 ms (its syscall statistics) beside them; the slow call
 * sites put the two heaviest chains under that wait. Without the await
 * column, the section is empty and the sites have no such line.
 */
/* A profile with the event loop's wait of 250 ms, and an await column if @with_await. */
static struct profile *awaits_profile(bool with_await, struct fns *f)
{
	struct profile *p = profile_new();

	CHECK(p && profile_add_type(p, "samples", "count") == 0 &&
	      profile_add_type(p, "cpu", "nanoseconds") == 1 &&
	      profile_add_type(p, "syscalls", "count") == 2 &&
	      profile_add_type(p, "latency", "nanoseconds") == 3);
	if (!p)
		return NULL;
	/* every column before the first sample, as the collector adds them */
	if (with_await)
		CHECK(profile_add_type(p, PROFILE_TYPE_AWAIT, "nanoseconds") == 4);
	CHECK(profile_set_meta(p, "min_duration_us", "1000") == 0);
	add_locations(p, f);
	add_loop_wait(p, f, SYSCALL_WAIT_PATH, 5, 250 * MS);
	return p;
}

static void check_awaits(void)
{
	const struct report_opts o = { .weight = "cpu", .weight_unit = "count", .top = 3,
				       .stacks = 2, .slowest = 2 };
	struct profile *p = awaits_profile(false, &(struct fns){ 0 });
	uint64_t a, loc[8];
	const char *names[] = { "[task req-1]", "[task req-2]", "[task Task-*]", "handler",
				"call_backend", "_wait_for_data", "serve", "sleep" };
	struct profile_mapping py = { .file = PROFILE_PYTHON_MAPPING, .build_id = "",
				      .has_functions = true };
	struct fns f;
	size_t i;

	if (!p)
		return;
	CHECK_RENDERS(report_awaits, &o, p, "");
	CHECK_RENDERS(report_slow_sites, &o, p,
		      "\nSlow call sites (syscalls >= 1000 us, innermost frames)\n"
		      "    total   calls    max  site\n"
		      "    250ms       5    0ns  syscall:epoll_wait\n"
		      "                          main;worker_loop\n");
	profile_free(p);
	p = awaits_profile(true, &f);
	if (!p)
		return;
	a = profile_add_mapping(p, &py);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		loc[i] = loc_of(p, a, i + 1, names[i]);
	add_sample(p, (const uint64_t[]){ loc[5], loc[4], loc[3], loc[0], 0 }, 101, "worker", NULL,
		   NULL, 0, NULL, (int64_t[5]){ 0, 0, 0, 0, 300 * MS });
	add_sample(p, (const uint64_t[]){ loc[5], loc[4], loc[3], loc[1], 0 }, 101, "worker", NULL,
		   NULL, 0, NULL, (int64_t[5]){ 0, 0, 0, 0, 100 * MS });
	add_sample(p, (const uint64_t[]){ loc[7], loc[6], loc[2], 0 }, 101, "worker", NULL,
		   NULL, 0, NULL, (int64_t[5]){ 0, 0, 0, 0, 200 * MS });
	CHECK(profile_set_meta(p, "proc.101.awaits", "asyncio") == 0);
	add_sys(p, 101, "epoll_wait", 0, 100 * MS, 0, (const uint64_t[2][3]){ { 17, 5, 250 * MS } });
	CHECK_RENDERS(report_awaits, &o, p,
		      "\nAwaits (asyncio tasks suspended, summed over tasks; CPython 3.14+)\n"
		      "  600ms awaited by tasks; their event loops waited 250ms in "
		      "epoll/poll/select\n"
		      "  meanwhile (the loop's wait is every task's at once; --weight await)\n"
		      "     share    time  names  chain (outer coroutine > ... > innermost "
		      "awaiting)\n"
		      "     66.7%   400ms      2  handler > call_backend > _wait_for_data\n"
		      "     33.3%   200ms      1  serve > sleep\n");
	CHECK_RENDERS(report_slow_sites, &o, p,
		      "\nSlow call sites (syscalls >= 1000 us, innermost frames)\n"
		      "    total   calls    max  site\n"
		      "    250ms       5    0ns  syscall:epoll_wait\n"
		      "                          main;worker_loop\n"
		      "                          ^ awaited meanwhile: 66.7% handler > call_backend "
		      "> _wait_for_data\n"
		      "                             33.3% serve > sleep\n");
	profile_free(p);
}

/*
 * STACKS_FLAG_PROGRAM_ONLY: the C library's frames go, the program's stay;
 * a stack with no frame outside the system libraries keeps them all (a site
 * is never empty); kernel frames are not touched.
 */
static void check_program_only(void)
{
	struct profile *p = profile_new();
	struct strtab *names = strtab_new();
	struct stack_names st = { 0 };
	struct fns f = { 0 };
	size_t i;

	CHECK(p && names && profile_add_type(p, "samples", "count") == 0);
	if (!p || !names)
		goto out;
	add_locations(p, &f);
	{
		const uint64_t mixed[] = { f.vfs_read, f.futex_wait, f.cond_wait, f.wait_io, f.main };
		const uint64_t only[] = { f.futex_wait, f.cond_wait };
		const char *want_mixed[] = { "main", "wait_io", "vfs_read_[k]" };
		const char *want_only[] = { "pthread_cond_wait", "__futex_abstimed_wait_common" };
		int64_t one = 1;

		CHECK(profile_add_sample(p, mixed, 5, &one, NULL, 0) == 0);
		CHECK(profile_add_sample(p, only, 2, &one, NULL, 0) == 0);
		CHECK(stack_names_of(p, &p->samples.items[0], STACKS_FLAG_NO_COMM |
				     STACKS_FLAG_PROGRAM_ONLY, names, &st) == 0);
		CHECK(st.nr == 3);
		for (i = 0; i < st.nr && i < 3; i++)
			CHECK(!strcmp(st.items[i], want_mixed[i]));
		CHECK(stack_names_of(p, &p->samples.items[1], STACKS_FLAG_NO_COMM |
				     STACKS_FLAG_PROGRAM_ONLY, names, &st) == 0);
		CHECK(st.nr == 2);
		for (i = 0; i < st.nr && i < 2; i++)
			CHECK(!strcmp(st.items[i], want_only[i]));
	}
out:
	free(st.items);
	strtab_free(names);
	profile_free(p);
}

int main(void)
{
	struct profile *p;

	/* the header shows the recording's start in local time */
	setenv("TZ", "UTC", 1);
	tzset();
	p = profile_full();
	if (p) {
		check_sections(p);
		check_profile(p);
	}
	profile_free(p);
	check_empty();
	check_wait_groups();
	check_awaits();
	check_program_only();
	return check_exit();
}
