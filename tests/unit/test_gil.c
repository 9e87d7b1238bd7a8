// SPDX-License-Identifier: GPL-2.0-only
/*
 * GIL waits: where a CPython keeps its GIL (symbolize/pygil.h, over a fake
 * memory laid out as 3.11 and 3.12 lay it out), the per-thread list in a
 * profile (src/gil.h: store, load, sums), and how the report shows it
 * (tests/golden/report_gil.txt, UPDATE=1 rewrites it).
 *
 * The golden's profile: pid 200 "app", 4 s; futex 400 calls of 3.0 s in
 * all, nanosleep 1 call of 1.0 s; threads 201 (500 waits, 1.5 s waiting,
 * held 1.2 s of 1.3 s sampled) and 202 (300 waits, 0.9 s, held 1.0 s of
 * 1.0 s); two 1 s timeline intervals with 1.4 and 1.0 s of gil. What it
 * must show: the breakdown's sync is futex less the waits, 3.0 - 2.4 =
 * 600ms, and gil 2.40s; under the syscall table "2.40s of it waiting"; the
 * GIL section with 201 first (it waited most), its %rec 1.5 / 4 = 37.5;
 * a GIL column in the timeline (1.40, 1.00).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/gil.h"
#include "src/profile.h"
#include "src/report.h"
#include "src/sysstats.h"
#include "src/timeline.h"
#include "symbolize/pygil.h"
#include "symbolize/pyoffsets.h"
#include "tests/unit/check.h"
#include "tests/unit/golden.h"

#define MS 1000000ULL
#define S 1000000000ULL

/* A process's memory: @len bytes at @base. */
struct fake_mem {
	uint64_t base;
	uint8_t bytes[4096];
};

static int read_fake(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct fake_mem *m = arg;

	if (addr < m->base || addr - m->base + len > sizeof(m->bytes))
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return 0;
}

static void put_u64(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	memcpy(m->bytes + (addr - m->base), &v, sizeof(v));
}

static void put_i32(struct fake_mem *m, uint64_t addr, int32_t v)
{
	memcpy(m->bytes + (addr - m->base), &v, sizeof(v));
}

static void check_find(void)
{
	static struct fake_mem m = { .base = 0x10000 };
	const uint64_t runtime = 0x10000, interp = 0x10800;
	struct py_offsets o;
	struct py_gil g;

	/* 3.11: the GIL inside _PyRuntime, no pointer to follow */
	CHECK(!pyoffsets_from_table(PY_VERSION_OF(3, 11, 2), true, &o));
	CHECK(o.runtime_gil > 0 && o.interp_gil == -1 && o.gil_size == 208);
	put_i32(&m, runtime + o.runtime_gil + o.gil_locked, -1);
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EAGAIN);	/* not made yet */
	put_i32(&m, runtime + o.runtime_gil + o.gil_locked, 1);
	/* a runtime being set up: all zero, locked too */
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EAGAIN);
	put_u64(&m, runtime + o.runtime_gil + o.gil_holder - 8, 5000ULL << 32);
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EINVAL);	/* no interval */
	put_u64(&m, runtime + o.runtime_gil + o.gil_holder - 8, 5000);
	CHECK(!py_gil_find(&o, runtime, read_fake, &m, &g));
	CHECK(g.addr == runtime + o.runtime_gil && g.size == 208 && g.locked == 16 &&
	      g.holder == 8);
	put_i32(&m, runtime + o.runtime_gil + o.gil_locked, 7);
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EINVAL);	/* not a GIL */

	/* 3.12: the newest interpreter's ceval.gil */
	memset(m.bytes, 0, sizeof(m.bytes));
	CHECK(!pyoffsets_from_table(PY_VERSION_OF(3, 12, 1), true, &o));
	CHECK(o.runtime_gil == -1 && o.interp_gil > 0);
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EAGAIN);	/* no interpreter */
	put_u64(&m, runtime + o.runtime_interp_head, interp);
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EAGAIN);	/* no GIL yet */
	put_u64(&m, interp + o.interp_gil, interp + 0x100);
	put_i32(&m, interp + 0x100 + o.gil_locked, 0);
	put_u64(&m, interp + 0x100 + o.gil_holder - 8, 5000);
	CHECK(!py_gil_find(&o, runtime, read_fake, &m, &g));
	CHECK(g.addr == interp + 0x100 && g.size == 208);
	put_u64(&m, interp + o.interp_gil, 0x90000);	/* unreadable */
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -EFAULT);

	/* a layout without the GIL's offsets */
	o.gil_size = -1;
	CHECK(py_gil_find(&o, runtime, read_fake, &m, &g) == -ENOENT);
}

static void check_list(void)
{
	struct profile *p = profile_new();
	struct gil_threads g = { 0 }, back = { 0 };
	const struct gil_thread a = { .pid = 7, .tid = 9, .waits = 3, .wait_ns = 5 * MS,
				      .cpu_ns = 20 * MS, .held_ns = 10 * MS };
	const struct gil_thread b = { .pid = 7, .tid = 8, .waits = 1, .wait_ns = 1 * MS };
	const struct gil_thread c = { .pid = 3, .tid = 3, .waits = 2, .wait_ns = 9 * MS };

	CHECK(p);
	if (!p)
		return;
	CHECK(gil_load(p, &back) == -ENOENT);
	CHECK(!gil_store(p, &g, 0) && !profile_get_meta(p, "gil.threads"));	/* nothing seen */
	CHECK(!gil_threads_add(&g, &a) && !gil_threads_add(&g, &b) && !gil_threads_add(&g, &c));
	CHECK(!gil_store(p, &g, 4));
	CHECK_STR(profile_get_meta(p, "gil.0"), "3,3,2,9000000,0,0;7,8,1,1000000,0,0;"
		  "7,9,3,5000000,20000000,10000000");
	CHECK(profile_get_meta_u64(p, "gil.dropped") == 4);
	/* a record that is not ours is skipped */
	CHECK(!profile_set_meta(p, "gil.1", "1,2,3;x,1,2,3,4,5;8,8,1,2,3,4"));
	CHECK(!gil_load(p, &back));
	CHECK(back.nr == 4 && back.items[3].pid == 8 && back.items[3].held_ns == 4);
	CHECK(gil_wait_ns(&back, 7) == 6 * MS && gil_wait_ns(&back, 0) == 15 * MS + 2);
	gil_sort_by_wait(&back);
	CHECK(back.items[0].tid == 3 && back.items[1].tid == 9 && back.items[3].tid == 8);
	gil_threads_release(&g);
	gil_threads_release(&back);
	profile_free(p);
}

/* The golden's profile: see the top of the file. */
static struct profile *golden_profile(void)
{
	struct profile *p = profile_new();
	struct sys_stat futex = { .pid = 200, .name = "futex", .count = 400, .total_ns = 3 * S,
				  .max_ns = 10 * MS };
	struct sys_stat sleep = { .pid = 200, .name = "nanosleep", .count = 1, .total_ns = S,
				  .max_ns = S };
	struct gil_threads g = { 0 };
	struct timeline tl;
	struct timeline_counters cur = { { 0 } };
	struct timeline_interval iv = { .rss_kb = 1024, .procs = 1 };

	if (!p)
		return NULL;
	p->duration_ns = 4 * S;
	futex.hist[14] = 400;
	futex.hist_ns[14] = 3 * S;
	sleep.hist[20] = 1;
	sleep.hist_ns[20] = S;
	CHECK(!sys_stat_store(p, &futex) && !sys_stat_store(p, &sleep));
	CHECK(!gil_threads_add(&g, &(struct gil_thread){ .pid = 200, .tid = 202, .waits = 300,
			       .wait_ns = 900 * MS, .cpu_ns = S, .held_ns = S }));
	CHECK(!gil_threads_add(&g, &(struct gil_thread){ .pid = 200, .tid = 201, .waits = 500,
			       .wait_ns = 1500 * MS, .cpu_ns = 1300 * MS, .held_ns = 1200 * MS }));
	CHECK(!gil_store(p, &g, 0));
	gil_threads_release(&g);
	timeline_init(&tl, S, 0);
	tl.has_cpu = tl.has_syscalls = true;
	cur.ns[TIMELINE_SERIES_CPU] = 900 * MS;
	cur.ns[TIMELINE_SERIES_SYNC] = 300 * MS;
	cur.ns[TIMELINE_SERIES_GIL] = 1400 * MS;
	CHECK(!timeline_add(&tl, S, &cur, &iv));
	cur.ns[TIMELINE_SERIES_CPU] += 1400 * MS;
	cur.ns[TIMELINE_SERIES_SYNC] += 300 * MS;
	cur.ns[TIMELINE_SERIES_GIL] += 1000 * MS;
	cur.ns[TIMELINE_SERIES_SLEEP] += S;
	CHECK(!timeline_add(&tl, 2 * S, &cur, &iv));
	CHECK(!timeline_store(&tl, p));
	timeline_release(&tl);
	return p;
}

static void check_report(void)
{
	const struct report_opts o = { .weight = "cpu", .top = 3 };
	struct profile *p = golden_profile(), *empty = profile_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(p && empty && out);
	if (!p || !empty || !out)
		return;
	CHECK(!report_time_breakdown(out, &o, p));
	CHECK(!report_syscalls(out, &o, p));
	CHECK(!report_gil(out, &o, p));
	CHECK(!report_timeline(out, &o, p));
	/* nothing at all without a GIL seen */
	CHECK(!report_gil(out, &o, empty));
	CHECK(!fclose(out));
	check_golden("report_gil.txt", buf);
	free(buf);
	profile_free(p);
	profile_free(empty);
}

int main(void)
{
	check_find();
	check_list();
	check_report();
	return check_exit();
}
