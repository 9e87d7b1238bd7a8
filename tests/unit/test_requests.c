// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/requests: a thread-per-request request gets its thread's own time; the
 * requests of a shared event loop split the process's time among those open
 * at once; breakdowns never exceed the latency; quantiles are nearest-rank;
 * requests survive the trip through metadata and a pprof file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/pprof.h"
#include "src/requests.h"
#include "tests/unit/check.h"

#define MS 1000000ULL

static struct request_times times(uint64_t cpu, uint64_t ut, uint64_t st, uint64_t net,
				  uint64_t sleep)
{
	struct request_times t = { .cpu_ns = cpu, .utime_ns = ut, .stime_ns = st };

	t.cat_ns[REQUEST_CAT_NETWORK] = net;
	t.cat_ns[REQUEST_CAT_SLEEP] = sleep;
	return t;
}

/* One thread: 20 ms CPU of which ticks say 3/4 user; 5 ms of sleep. */
static void test_exact(void)
{
	struct request_raw raw = {
		.pid = 1, .fd = 4, .read_tid = 7, .write_tid = 7,
		.start_ns = 100 * MS, .end_ns = 130 * MS,
		.t_start = times(50 * MS, 10 * MS, 10 * MS, 1 * MS, 0),
		.t_end = times(70 * MS, 22 * MS, 14 * MS, 2 * MS, 5 * MS),
	};
	struct requests r = { 0 };

	CHECK(requests_compute(&raw, 1, &r) == 0);
	CHECK(r.nr == 1);
	CHECK(r.items[0].duration_ns == 30 * MS);
	CHECK(r.items[0].cpu_ns == 15 * MS);
	CHECK(r.items[0].cat_ns[REQUEST_CAT_SLEEP] == 5 * MS);
	CHECK(r.items[0].cat_ns[REQUEST_CAT_NETWORK] == 1 * MS);
	CHECK(!(r.items[0].flags & REQUEST_SHARED));
	CHECK(request_accounted_ns(&r.items[0]) == 21 * MS);
	free(r.items);
}

/* No tick in the request: user CPU is the CPU less the syscall time. */
static void test_exact_no_ticks(void)
{
	struct request_raw raw = {
		.read_tid = 7, .write_tid = 7, .start_ns = 0, .end_ns = 4 * MS,
		.t_start = times(0, 0, 0, 0, 0),
		.t_end = times(3 * MS, 0, 0, 2 * MS, 0),
	};
	struct requests r = { 0 };

	CHECK(requests_compute(&raw, 1, &r) == 0);
	CHECK(r.items[0].cpu_ns == 1 * MS);
	free(r.items);
}

/*
 * A preempted spin: ticks say 2 of 15 were system, but it made 0.1 ms of
 * syscalls, so at most that much of its CPU was the kernel's.
 */
static void test_kernel_share_capped(void)
{
	struct request_raw raw = {
		.read_tid = 7, .write_tid = 7, .start_ns = 0, .end_ns = 30 * MS,
		.t_start = times(0, 0, 0, 0, 0),
		.t_end = times(20 * MS, 13 * MS, 2 * MS, MS / 10, 0),
	};
	struct requests r = { 0 };

	CHECK(requests_compute(&raw, 1, &r) == 0);
	CHECK(r.items[0].cpu_ns == 20 * MS - MS / 10);
	free(r.items);
}

/* A breakdown summing past the latency is scaled down to it. */
static void test_clip(void)
{
	struct request_raw raw = {
		.read_tid = 7, .write_tid = 7, .start_ns = 0, .end_ns = 10 * MS,
		.t_start = times(0, 0, 0, 0, 0),
		.t_end = times(10 * MS, 1, 0, 0, 10 * MS),
	};
	struct requests r = { 0 };

	CHECK(requests_compute(&raw, 1, &r) == 0);
	CHECK(r.items[0].cpu_ns + r.items[0].cat_ns[REQUEST_CAT_SLEEP] <= 10 * MS);
	CHECK(r.items[0].cpu_ns >= 5 * MS - 1 && r.items[0].cpu_ns <= 5 * MS);
	free(r.items);
}

/*
 * Event loop: A open [0, 20], B open [10, 30] ms. The process's CPU is
 * 10 ms in each 10 ms segment (all user): A gets 10 + 5, B 5 + 10.
 */
static void test_shared(void)
{
	struct request_raw raw[2] = {
		{ .pid = 1, .fd = 4, .read_tid = 1, .write_tid = 1, .flags = REQUEST_SHARED,
		  .start_ns = 0, .end_ns = 20 * MS,
		  .p_start = times(0, 0, 0, 0, 0), .p_end = times(20 * MS, 20 * MS, 0, 0, 0) },
		{ .pid = 1, .fd = 5, .read_tid = 1, .write_tid = 1, .flags = REQUEST_SHARED,
		  .start_ns = 10 * MS, .end_ns = 30 * MS,
		  .p_start = times(10 * MS, 10 * MS, 0, 0, 0),
		  .p_end = times(30 * MS, 30 * MS, 0, 0, 0) },
	};
	struct requests r = { 0 };

	CHECK(requests_compute(raw, 2, &r) == 0);
	CHECK(r.nr == 2);
	CHECK(r.items[0].flags & REQUEST_SHARED);
	CHECK(r.items[0].cpu_ns == 15 * MS);
	CHECK(r.items[1].cpu_ns == 15 * MS);
	free(r.items);
}

/* A response written by another thread than the reader is shared too. */
static void test_other_writer(void)
{
	struct request_raw raw = {
		.pid = 1, .read_tid = 1, .write_tid = 2, .start_ns = 0, .end_ns = 10 * MS,
		.p_start = times(0, 0, 0, 0, 0), .p_end = times(8 * MS, 8, 0, 0, 0),
		.t_end = times(100 * MS, 100, 0, 0, 0),
	};
	struct requests r = { 0 };

	CHECK(requests_compute(&raw, 1, &r) == 0);
	CHECK(r.items[0].flags & REQUEST_SHARED);
	CHECK(r.items[0].cpu_ns == 8 * MS);
	free(r.items);
}

static void test_quantiles(void)
{
	uint64_t v[100];
	int i;

	for (i = 0; i < 100; i++)
		v[i] = i + 1;
	CHECK(requests_quantile_ns(v, 100, 0.50) == 50);
	CHECK(requests_quantile_ns(v, 100, 0.95) == 95);
	CHECK(requests_quantile_ns(v, 100, 0.99) == 99);
	CHECK(requests_quantile_ns(v, 100, 1.0) == 100);
	CHECK(requests_quantile_ns(v, 1, 0.99) == 1);
	CHECK(requests_quantile_ns(v, 3, 0.50) == 2);
	CHECK(requests_quantile_ns(v, 0, 0.50) == 0);
}

/* 1200 requests: three chunks; a malformed record is skipped. */
static void test_roundtrip(void)
{
	char path[] = "/tmp/latprof-test-requests-XXXXXX";
	struct requests in = { 0 }, out = { 0 };
	struct requests_summary s;
	struct profile *p = profile_new(), *q = NULL;
	const char *why = NULL;
	size_t i;
	int fd;

	CHECK(p != NULL);
	in.nr = in.alloc = 1200;
	in.items = calloc(in.nr, sizeof(*in.items));
	for (i = 0; i < in.nr; i++) {
		in.items[i] = (struct request){ .pid = 10, .tid = 11, .fd = 4,
						.start_ns = 1000 + i, .duration_ns = i + 1,
						.bytes_in = 40, .bytes_out = 57, .cpu_ns = i / 2 };
		in.items[i].cat_ns[REQUEST_CAT_OTHER] = 1;
	}
	in.items[7].flags = REQUEST_SHARED;
	CHECK(requests_store(p, &in, 3, 2) == 0);
	CHECK(profile_set_meta(p, "requests.9", "1,2,3;not,a,record") == 0);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	unlink(path);
	CHECK(pprof_write_file(p, path) == 0);
	CHECK(pprof_read_file(path, &q, &why) == 0);
	unlink(path);
	CHECK(q != NULL);
	CHECK(q && requests_load(q, &out) == 0);
	CHECK(out.nr == 1200);
	CHECK(out.nr == 1200 && !memcmp(out.items, in.items, 1200 * sizeof(*in.items)));
	CHECK(q && profile_get_meta_u64(q, "requests.dropped") == 3);
	CHECK(q && profile_get_meta_u64(q, "requests.unanswered") == 2);
	CHECK(requests_summarize(&out, &s) == 0);
	CHECK(s.count == 1200 && s.shared == 1 && s.max_ns == 1200 && s.p50_ns == 600);
	free(in.items);
	free(out.items);
	profile_free(p);
	profile_free(q);
}

int main(void)
{
	test_exact();
	test_exact_no_ticks();
	test_kernel_share_capped();
	test_clip();
	test_shared();
	test_other_writer();
	test_quantiles();
	test_roundtrip();
	return check_exit();
}
