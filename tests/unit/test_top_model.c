// SPDX-License-Identifier: GPL-2.0-only
/*
 * latprof top's views from looks made by hand (src/top_model.h): each look
 * is a profile of everything so far, as collect_peek_profile makes them.
 * Three looks of two processes: app (pid 100) computes in compute() and
 * handle() and reads slowly; worker (pid 101) runs in worker_loop() and
 * stops after the second look. Checks the last interval (the newer look
 * minus the older), since the start (added up look by look: a process that
 * did nothing keeps its part without being counted again, and so does one
 * a look left out), the syscalls' interval percentiles, the processes' activity, the filter and the zoom
 * (both counting since the start again), the sort and the text lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/profile.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/top_model.h"
#include "src/top_text.h"
#include "tests/unit/check.h"

#define MS 1000000LL
#define PERIOD (10 * MS)	/* 100 Hz */

enum { COL_SAMPLES, COL_CPU, COL_SYSCALLS, COL_LATENCY, COL_NR };

/* What each look holds so far. */
struct so_far {
	int64_t compute, handle, worker;	/* CPU samples */
	int64_t reads, read_ns, read_max;	/* slow reads of handle */
	uint64_t sys_reads;			/* every read, 1-2 ms each */
};

static uint64_t loc_of(struct profile *p, uint64_t mapping, uint64_t address, const char *name)
{
	struct profile_line line = { .function_id = profile_function_id(p, name, name, "", 0) };

	CHECK(line.function_id);
	return profile_add_location(p, mapping, address, &line, 1);
}

static void sample(struct profile *p, const uint64_t *locs, size_t n, uint32_t pid,
		   const char *comm, const int64_t *values, int64_t max_ns)
{
	struct profile_label l[6] = {
		{ .key = PROFILE_LABEL_PID, .num = pid },
		{ .key = PROFILE_LABEL_COMM, .str = comm },
	};
	char hist[64];
	size_t nl = 2;

	if (max_ns) {
		/* the reads take 10 ms each: log2 slot 14, [8.2, 16.4) ms */
		snprintf(hist, sizeof(hist), "14:%lld:%lld", (long long)values[COL_SYSCALLS],
			 (long long)values[COL_LATENCY]);
		l[nl++] = (struct profile_label){ .key = PROFILE_LABEL_SYSCALL, .str = "read" };
		l[nl++] = (struct profile_label){ .key = SYSCALL_WAIT_LABEL, .str = SYSCALL_WAIT_PATH };
		l[nl++] = (struct profile_label){ .key = PROFILE_LABEL_MAX_NS, .num = max_ns,
						  .num_unit = "nanoseconds" };
		l[nl++] = (struct profile_label){ .key = PROFILE_LABEL_LATENCY_HIST, .str = hist };
	}
	CHECK(profile_add_sample(p, locs, n, values, l, nl) == 0);
}

static struct profile *look(const struct so_far *s)
{
	struct profile *p = profile_new();
	struct profile_mapping app = { .start = 0x400000, .limit = 0x500000, .file = "/usr/bin/app",
				       .build_id = "", .has_functions = true };
	struct sys_stat st = { .pid = 100, .name = "read" };
	uint64_t m, main_, compute, handle, worker;

	CHECK(p);
	CHECK(profile_add_type(p, PROFILE_TYPE_SAMPLES, "count") == COL_SAMPLES);
	CHECK(profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds") == COL_CPU);
	CHECK(profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count") == COL_SYSCALLS);
	CHECK(profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds") == COL_LATENCY);
	p->period = PERIOD;
	m = profile_add_mapping(p, &app);
	main_ = loc_of(p, m, 0x401000, "main");
	compute = loc_of(p, m, 0x402000, "compute");
	handle = loc_of(p, m, 0x403000, "handle");
	worker = loc_of(p, m, 0x404000, "worker_loop");
	sample(p, (uint64_t[]){ compute, handle, main_ }, 3, 100, "app",
	       (int64_t[COL_NR]){ s->compute, s->compute * PERIOD }, 0);
	sample(p, (uint64_t[]){ handle, main_ }, 2, 100, "app",
	       (int64_t[COL_NR]){ s->handle, s->handle * PERIOD }, 0);
	if (s->worker)
		sample(p, (uint64_t[]){ worker, main_ }, 2, 101, "worker",
		       (int64_t[COL_NR]){ s->worker, s->worker * PERIOD }, 0);
	if (s->reads)
		sample(p, (uint64_t[]){ handle, main_ }, 2, 100, "app",
		       (int64_t[COL_NR]){ 0, 0, s->reads, s->read_ns }, s->read_max);
	/* every read in the 1-2 ms bucket, 1.5 ms each */
	st.count = st.hist[11] = s->sys_reads;
	st.total_ns = st.hist_ns[11] = s->sys_reads * 1500000;
	st.max_ns = 1900000;
	CHECK(sys_stat_store(p, &st) == 0);
	return p;
}

static const struct top_func *func(const struct top_model *m, const char *name)
{
	for (size_t i = 0; i < m->funcs.nr; i++)
		if (!strcmp(m->funcs.items[i].name, name))
			return &m->funcs.items[i];
	return NULL;
}

static const struct top_func *in(const struct top_func *rows, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static const struct top_proc *proc(const struct top_model *m, uint64_t pid)
{
	for (size_t i = 0; i < m->procs.nr; i++)
		if (m->procs.items[i].pid == pid)
			return &m->procs.items[i];
	return NULL;
}

/* Function @name's interval and since-start own time, in samples. */
static void check_func(const struct top_model *m, const char *name, int64_t self, int64_t total,
		       int64_t self_all, int64_t total_all)
{
	const struct top_func *f = func(m, name);

	CHECK(f);
	if (!f)
		return;
	CHECK(f->self == (uint64_t)(self * PERIOD));
	CHECK(f->total == (uint64_t)(total * PERIOD));
	CHECK(f->self_all == (uint64_t)(self_all * PERIOD));
	CHECK(f->total_all == (uint64_t)(total_all * PERIOD));
}

int main(void)
{
	struct so_far s1 = { 10, 5, 4, 2, 20 * MS, 12 * MS, 10 };
	struct so_far s2 = { 30, 5, 6, 5, 50 * MS, 12 * MS, 25 };
	struct so_far s3 = { 50, 15, 6, 5, 50 * MS, 12 * MS, 25 };
	struct top_model m;
	char line[512];
	char *buf = NULL;
	size_t size = 0;
	FILE *out;

	CHECK(top_model_init(&m, 0) == 0);

	/* the first look: the interval is everything so far */
	top_model_push(&m, look(&s1), NULL, 1000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 10, 10, 10, 10);
	check_func(&m, "handle", 5, 15, 5, 15);
	check_func(&m, "worker_loop", 4, 4, 4, 4);
	CHECK(m.hdr.cpu_ns == 19 * PERIOD && m.hdr.samples == 19);
	CHECK(m.sites.nr == 1 && m.sites.items[0].calls == 2 && m.sites.items[0].ns == 20 * MS);

	/* the second: the newer look minus the older */
	top_model_push(&m, look(&s2), NULL, 2000 * MS);
	CHECK(m.hdr.interval_ns == 1000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 20, 20, 30, 30);
	check_func(&m, "handle", 0, 20, 5, 35);
	check_func(&m, "worker_loop", 2, 2, 6, 6);
	check_func(&m, "main", 0, 22, 0, 41);
	CHECK(m.hdr.cpu_ns == 22 * PERIOD);
	CHECK(m.sites.nr == 1);
	CHECK(m.sites.items[0].calls == 3 && m.sites.items[0].ns == 30 * MS);
	CHECK(m.sites.items[0].calls_all == 5 && m.sites.items[0].ns_all == 50 * MS);
	CHECK(m.sites.items[0].max_ns == 12 * MS && m.sites.items[0].wait == HOT_WAIT_PATH);
	/* the interval's 3 reads of 10 ms: the mean of their bucket */
	CHECK(m.sites.items[0].p99_ns == 10 * MS);
	CHECK(!strncmp(hot_site_text(m.sites.items[0].name), "syscall:read\t", 13));
	CHECK(m.sys.nr == 1 && m.sys.items[0].calls == 15 && m.sys.items[0].calls_all == 25);
	CHECK(m.sys.items[0].p50_ns == 1500000 && m.sys.items[0].p99_ns == 1500000);
	CHECK(proc(&m, 100) && proc(&m, 100)->active && proc(&m, 101) && proc(&m, 101)->active);

	/* the third: the worker did nothing, its part since the start stays */
	top_model_push(&m, look(&s3), NULL, 3000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 20, 20, 50, 50);
	check_func(&m, "handle", 10, 30, 15, 65);
	check_func(&m, "worker_loop", 0, 0, 6, 6);
	CHECK(m.sites.nr == 1 && m.sites.items[0].calls == 0 && m.sites.items[0].calls_all == 5);
	CHECK(m.sites.items[0].p99_ns == 0);
	CHECK(m.sys.nr == 1 && m.sys.items[0].calls == 0 && m.sys.items[0].p99_ns == 0);
	CHECK(proc(&m, 100)->active && !proc(&m, 101)->active);
	CHECK(proc(&m, 100)->cpu_ns == 30 * PERIOD && proc(&m, 101)->cpu_ns == 0);

	/* computed again without a new look: nothing is added twice */
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 20, 20, 50, 50);
	CHECK(m.sites.items[0].calls_all == 5);

	/* sorted by the interval's own time, then by what ran in it */
	top_model_sort(&m, TOP_VIEW_FUNCS, TOP_SORT_NOW);
	CHECK_STR(m.funcs.items[0].name, "compute");
	CHECK_STR(m.funcs.items[1].name, "handle");
	CHECK_STR(m.funcs.items[2].name, "main");
	top_model_sort(&m, TOP_VIEW_FUNCS, TOP_SORT_ALL);
	CHECK_STR(m.funcs.items[0].name, "main");
	top_model_sort(&m, TOP_VIEW_FUNCS, TOP_SORT_NAME);
	CHECK_STR(m.funcs.items[0].name, "compute");

	/* one process: since the start is counted again, of it alone */
	m.filter.pid = 101;
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "worker_loop", 0, 0, 6, 6);
	CHECK(!func(&m, "compute"));
	CHECK(m.sites.nr == 0 && m.hdr.cpu_ns == 0);
	m.filter.pid = 0;
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 20, 20, 50, 50);

	/* the zoom: handle's callers and callees */
	for (size_t i = 0; i < m.funcs.nr; i++)
		if (!strcmp(m.funcs.items[i].name, "handle"))
			m.zoom = m.funcs.items[i].name;
	CHECK(m.zoom);
	CHECK(top_model_compute(&m) == 0);
	CHECK(in(m.callers.items, m.callers.nr, "main") &&
	      in(m.callers.items, m.callers.nr, "main")->total == 30 * PERIOD &&
	      in(m.callers.items, m.callers.nr, "main")->total_all == 65 * PERIOD);
	CHECK(in(m.callees.items, m.callees.nr, "compute") &&
	      in(m.callees.items, m.callees.nr, "compute")->total == 20 * PERIOD);
	CHECK(in(m.callees.items, m.callees.nr, "(self)") &&
	      in(m.callees.items, m.callees.nr, "(self)")->total_all == 15 * PERIOD);

	/* the lines */
	top_model_sort(&m, TOP_VIEW_FUNCS, TOP_SORT_NOW);
	top_text_func(&m, func(&m, "compute"), line, sizeof(line));
	CHECK(strstr(line, "66.7") && strstr(line, "200ms") && strstr(line, "compute"));
	top_text_sys(&m, &m.sys.items[0], line, sizeof(line));
	CHECK(strstr(line, "read") && strstr(line, "1.9ms"));
	out = open_memstream(&buf, &size);
	CHECK(out);
	if (out) {
		m.zoom = NULL;
		CHECK(top_model_compute(&m) == 0);
		top_text_print(out, &m, 10);
		fclose(out);
		CHECK(buf && !strncmp(buf, "latprof top - ", 14));
		CHECK(buf && strstr(buf, "Functions by own CPU") && strstr(buf, "Slow call sites") &&
		      strstr(buf, "Syscalls (per second"));
		/* rows of what ran: the worker did not */
		CHECK(buf && strstr(buf, " compute\n") && !strstr(buf, "worker_loop"));
	}
	/* a fourth look leaves the worker out (it ended long ago): it keeps its part */
	s3 = (struct so_far){ 60, 15, 0, 5, 50 * MS, 12 * MS, 25 };
	top_model_push(&m, look(&s3), NULL, 4000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "worker_loop", 0, 0, 6, 6);
	check_func(&m, "compute", 10, 10, 60, 60);
	check_func(&m, "main", 0, 10, 0, 81);
	CHECK(!proc(&m, 101) && proc(&m, 100)->cpu_ns == 10 * PERIOD);
	top_model_push(&m, look(&s3), NULL, 5000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 0, 0, 60, 60);
	check_func(&m, "worker_loop", 0, 0, 6, 6);
	/*
	 * a name that shrinks (a look symbolizes again: a frame met under a
	 * better name leaves the old one's row) counts nothing, not 2^64 - n
	 */
	s3.compute = 40;
	top_model_push(&m, look(&s3), NULL, 6000 * MS);
	CHECK(top_model_compute(&m) == 0);
	check_func(&m, "compute", 0, 0, 60, 60);
	CHECK(m.sys.nr == 1 && m.sys.items[0].calls == 0);

	free(buf);
	top_model_release(&m);
	return check_exit();
}
