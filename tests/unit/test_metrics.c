// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/metrics: drained counts add up per (comm, syscall) across pids and
 * windows; names come from lifecycle events; exited processes are forgotten
 * one window after their exit; past max_series new names count as "other";
 * the histogram is cumulative with the kernel's log2 bounds; series idle for
 * the TTL are removed, come back from zero, and leave the others' counts and
 * room for new names.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/metrics.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

#define TTL_NS (10 * NSEC_PER_SEC)

static struct sys_stat stat_of(unsigned int pid, const char *name, unsigned int slot,
			       uint64_t n)
{
	struct sys_stat s = { .pid = pid, .count = n, .total_ns = n * 1000 };

	snprintf(s.name, sizeof(s.name), "%s", name);
	s.hist[slot] = n;
	s.hist_ns[slot] = n * 1000;
	return s;
}

static char *render(struct metrics *m)
{
	const char *names[] = { "events_lost" };
	uint64_t lost[] = { 3 };
	struct metrics_agent a = { .lost_names = names, .lost = lost, .nr_lost = 1,
				   .version = "0", .kernel = "k", .mode = "cpu,syscall",
				   .has_cpu = 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(metrics_write(m, &a, f) == 0);
	fclose(f);
	return buf;
}

/* Does /metrics have this line? */
static bool has_line(struct metrics *m, const char *line)
{
	char *out = render(m);
	bool found = strstr(out, line) != NULL;

	free(out);
	return found;
}

/* @n calls of @name, by @pid, under 2 µs. */
static void add_calls(struct metrics *m, unsigned int pid, const char *name, uint64_t n)
{
	struct sys_stat s = stat_of(pid, name, 1, n);

	CHECK(metrics_add_sys(m, &s) == 0);
}

/* The drain at @t_s seconds. */
static void drain_at(struct metrics *m, uint64_t t_s)
{
	CHECK(metrics_end_window(m, t_s * NSEC_PER_SEC) == 0);
}

static void test_counts_and_limit(void)
{
	struct metrics *m = metrics_new(3, 0);
	struct sys_stat s;
	char *out, comm[32];

	CHECK(m != NULL);
	/* two processes named app, one exec'ed from its parent's name */
	metrics_proc_event(m, 1, 4000001, "sh");
	metrics_proc_event(m, 2, 4000001, "app");
	metrics_proc_event(m, 1, 4000002, "app");
	s = stat_of(4000001, "read", 16, 5);	/* [32.768, 65.536) ms */
	CHECK(metrics_add_sys(m, &s) == 0);
	s = stat_of(4000002, "read", 16, 4);
	CHECK(metrics_add_sys(m, &s) == 0);
	s = stat_of(4000002, "read", 0, 10);
	CHECK(metrics_add_sys(m, &s) == 0);
	CHECK(metrics_add_cpu(m, 4000002, "app-worker", 7) == 0);
	CHECK(metrics_nr_series(m) == 1);
	out = render(m);
	CHECK(strstr(out, "latprof_syscall_duration_seconds_bucket{comm=\"app\",syscall=\"read\",le=\"0.000001\"} 10\n"));
	CHECK(strstr(out, "latprof_syscall_duration_seconds_bucket{comm=\"app\",syscall=\"read\",le=\"0.032768\"} 10\n"));
	CHECK(strstr(out, "latprof_syscall_duration_seconds_bucket{comm=\"app\",syscall=\"read\",le=\"0.065536\"} 19\n"));
	CHECK(strstr(out, "latprof_syscall_duration_seconds_count{comm=\"app\",syscall=\"read\"} 19\n"));
	CHECK(strstr(out, "latprof_cpu_samples_total{comm=\"app\"} 7\n"));
	CHECK(strstr(out, "latprof_lost_events_total{reason=\"events_lost\"} 3\n"));
	CHECK(strstr(out, "# TYPE latprof_syscall_duration_seconds histogram\n"));
	free(out);

	/* exit: kept through the window it exited in, gone after the next */
	CHECK(metrics_nr_procs(m) == 2);
	metrics_proc_event(m, 3, 4000001, NULL);
	drain_at(m, 1);
	CHECK(metrics_nr_procs(m) == 2);
	CHECK_STR(metrics_comm_of(m, 4000001, comm, sizeof(comm)), "app");
	drain_at(m, 2);
	CHECK(metrics_nr_procs(m) == 1);
	/* unknown and gone: no name */
	CHECK_STR(metrics_comm_of(m, 4000001, comm, sizeof(comm)), "");

	/* the limit: 3 series, then "other" */
	metrics_proc_event(m, 1, 4000003, "b");
	metrics_proc_event(m, 1, 4000004, "c");
	metrics_proc_event(m, 1, 4000005, "d");
	s = stat_of(4000003, "write", 1, 1);
	CHECK(metrics_add_sys(m, &s) == 0);
	s = stat_of(4000004, "write", 1, 1);
	CHECK(metrics_add_sys(m, &s) == 0);
	s = stat_of(4000005, "write", 1, 2);
	CHECK(metrics_add_sys(m, &s) == 0);
	s = stat_of(4000005, "close", 1, 2);
	CHECK(metrics_add_sys(m, &s) == 0);
	CHECK(metrics_nr_series(m) == 5);	/* 3 named, then other/write, other/close */
	out = render(m);
	CHECK(strstr(out, "latprof_syscall_duration_seconds_count{comm=\"other\",syscall=\"write\"} 2\n"));
	CHECK(strstr(out, "latprof_syscall_duration_seconds_count{comm=\"c\",syscall=\"write\"} 1\n"));
	CHECK(!strstr(out, "comm=\"d\""));
	free(out);
	metrics_free(m);
	metrics_free(NULL);
}

/*
 * A TTL of 10 s, idle series looked for every 2.5 s: "idle" and busy's close
 * stop at the first drain, busy's read counts every second. The idle series
 * come first, so busy's read moves when they go.
 */
static void test_expire_idle(void)
{
	struct metrics *m = metrics_new(100, TTL_NS);
	uint64_t t;

	CHECK(m != NULL);
	metrics_proc_event(m, 1, 4100001, "idle");
	metrics_proc_event(m, 1, 4100002, "busy");
	add_calls(m, 4100001, "write", 3);
	CHECK(metrics_add_cpu(m, 4100001, "", 5) == 0);
	add_calls(m, 4100002, "close", 1);
	add_calls(m, 4100002, "read", 1);
	CHECK(metrics_add_cpu(m, 4100002, "", 1) == 0);
	drain_at(m, 1000);	/* the first drain dates them all */
	for (t = 1001; t <= 1010; t++) {
		add_calls(m, 4100002, "read", 1);
		CHECK(metrics_add_cpu(m, 4100002, "", 1) == 0);
		drain_at(m, t);
	}
	/* looked at 1009, 9 s idle: kept */
	CHECK(metrics_nr_series(m) == 3 && metrics_nr_tasks(m) == 2);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"idle\",syscall=\"write\"} 3\n"));
	CHECK(has_line(m, "latprof_agent_series 5\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 0\n"));
	for (; t <= 1012; t++) {
		add_calls(m, 4100002, "read", 1);
		CHECK(metrics_add_cpu(m, 4100002, "", 1) == 0);
		drain_at(m, t);
	}
	/* looked at 1012, 12 s idle: gone; busy's counts untouched */
	CHECK(metrics_nr_series(m) == 1 && metrics_nr_tasks(m) == 1);
	CHECK(!has_line(m, "comm=\"idle\""));
	CHECK(!has_line(m, "syscall=\"close\""));
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"busy\",syscall=\"read\"} 13\n"));
	CHECK(has_line(m, "latprof_syscall_duration_seconds_bucket{comm=\"busy\",syscall=\"read\",le=\"0.000002\"} 13\n"));
	CHECK(has_line(m, "latprof_cpu_samples_total{comm=\"busy\"} 13\n"));
	CHECK(has_line(m, "latprof_agent_series 2\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 3\n"));
	CHECK(has_line(m, "# TYPE latprof_agent_series_expired_total counter\n"));

	/* the rebuilt index finds busy's read; idle comes back from zero */
	add_calls(m, 4100002, "read", 1);
	add_calls(m, 4100001, "write", 2);
	CHECK(metrics_add_cpu(m, 4100001, "", 4) == 0);
	CHECK(metrics_nr_series(m) == 2 && metrics_nr_tasks(m) == 2);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"busy\",syscall=\"read\"} 14\n"));
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"idle\",syscall=\"write\"} 2\n"));
	CHECK(has_line(m, "latprof_syscall_errors_total{comm=\"idle\",syscall=\"write\"} 0\n"));
	CHECK(has_line(m, "latprof_cpu_samples_total{comm=\"idle\"} 4\n"));
	metrics_free(m);
}

/* A TTL of 0: nothing goes, however long idle. */
static void test_ttl_zero(void)
{
	struct metrics *m = metrics_new(100, 0);

	CHECK(m != NULL);
	metrics_proc_event(m, 1, 4200001, "once");
	add_calls(m, 4200001, "openat", 7);
	CHECK(metrics_add_cpu(m, 4200001, "", 2) == 0);
	drain_at(m, 1000);
	drain_at(m, 1000000);
	drain_at(m, 1000000000);
	CHECK(metrics_nr_series(m) == 1 && metrics_nr_tasks(m) == 1);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"once\",syscall=\"openat\"} 7\n"));
	CHECK(has_line(m, "latprof_cpu_samples_total{comm=\"once\"} 2\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 0\n"));
	metrics_free(m);
}

/* Two series at most: "other" takes the third name until the first two expire. */
static void test_other_expires(void)
{
	struct metrics *m = metrics_new(2, TTL_NS);
	uint64_t t;

	CHECK(m != NULL);
	metrics_proc_event(m, 1, 4300001, "b");
	metrics_proc_event(m, 1, 4300002, "c");
	metrics_proc_event(m, 1, 4300003, "d");
	metrics_proc_event(m, 1, 4300004, "e");
	add_calls(m, 4300001, "write", 1);
	add_calls(m, 4300002, "write", 1);
	add_calls(m, 4300003, "write", 2);
	CHECK(metrics_add_cpu(m, 4300001, "", 1) == 0);
	CHECK(metrics_add_cpu(m, 4300002, "", 1) == 0);
	CHECK(metrics_add_cpu(m, 4300003, "", 2) == 0);
	CHECK(metrics_nr_series(m) == 3 && metrics_nr_tasks(m) == 3);
	drain_at(m, 1000);
	for (t = 1001; t <= 1012; t++) {
		add_calls(m, 4300003, "write", 1);
		CHECK(metrics_add_cpu(m, 4300003, "", 1) == 0);
		drain_at(m, t);
	}
	/* b and c went; "other" kept counting d */
	CHECK(metrics_nr_series(m) == 1 && metrics_nr_tasks(m) == 1);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"other\",syscall=\"write\"} 14\n"));
	CHECK(has_line(m, "latprof_cpu_samples_total{comm=\"other\"} 14\n"));
	CHECK(!has_line(m, "comm=\"b\""));
	/* room again: e gets its own series, d still counts as other */
	add_calls(m, 4300004, "write", 1);
	CHECK(metrics_add_cpu(m, 4300004, "", 1) == 0);
	add_calls(m, 4300003, "write", 1);
	CHECK(metrics_nr_series(m) == 2 && metrics_nr_tasks(m) == 2);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"e\",syscall=\"write\"} 1\n"));
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"other\",syscall=\"write\"} 15\n"));
	/* then "other" itself idles out, and d has a series of its own */
	for (; t <= 1026; t++) {
		add_calls(m, 4300004, "write", 1);
		CHECK(metrics_add_cpu(m, 4300004, "", 1) == 0);
		drain_at(m, t);
	}
	CHECK(!has_line(m, "comm=\"other\""));
	CHECK(has_line(m, "latprof_cpu_samples_total{comm=\"e\"} 15\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 6\n"));
	add_calls(m, 4300003, "write", 1);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"d\",syscall=\"write\"} 1\n"));
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"e\",syscall=\"write\"} 15\n"));
	metrics_free(m);
}

/*
 * Counts added between two drains further apart than the TTL (a stalled
 * agent, --series-ttl 1 with drains a second apart) are not expired by the
 * drain that takes them.
 */
static void test_drain_gap(void)
{
	struct metrics *m = metrics_new(100, 1 * NSEC_PER_SEC);
	uint64_t t;

	CHECK(m != NULL);
	metrics_proc_event(m, 1, 4500001, "gap");
	drain_at(m, 1000);
	for (t = 1001; t <= 1005; t++) {
		add_calls(m, 4500001, "read", 1);
		drain_at(m, t + 1);	/* 2 s later: twice the TTL */
		t++;
	}
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"gap\",syscall=\"read\"} 3\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 0\n"));
	drain_at(m, 1010);
	drain_at(m, 1011);
	CHECK(metrics_nr_series(m) == 0);
	metrics_free(m);
}

/* A burst of names, all idle at once: the tables empty, and fill again. */
static void test_expire_all(void)
{
	struct metrics *m = metrics_new(2000, TTL_NS);
	char comm[16];
	unsigned int i;

	CHECK(m != NULL);
	for (i = 0; i < 500; i++) {
		snprintf(comm, sizeof(comm), "job%u", i);
		metrics_proc_event(m, 1, 4400000 + i, comm);
		add_calls(m, 4400000 + i, "execve", 1);
		CHECK(metrics_add_cpu(m, 4400000 + i, "", 1) == 0);
	}
	drain_at(m, 1000);
	CHECK(metrics_nr_series(m) == 500 && metrics_nr_tasks(m) == 500);
	/* a drain long after the last: what the window before it held stays */
	drain_at(m, 1020);
	CHECK(metrics_nr_series(m) == 500 && metrics_nr_tasks(m) == 500);
	drain_at(m, 1023);	/* the next look, 2.5 s after */
	CHECK(metrics_nr_series(m) == 0 && metrics_nr_tasks(m) == 0);
	CHECK(has_line(m, "latprof_agent_series 0\n"));
	CHECK(has_line(m, "latprof_agent_series_expired_total 1000\n"));
	add_calls(m, 4400007, "execve", 1);
	CHECK(has_line(m, "latprof_syscall_duration_seconds_count{comm=\"job7\",syscall=\"execve\"} 1\n"));
	metrics_free(m);
}

int main(void)
{
	test_counts_and_limit();
	test_expire_idle();
	test_ttl_zero();
	test_other_expires();
	test_expire_all();
	test_drain_gap();
	return check_exit();
}
