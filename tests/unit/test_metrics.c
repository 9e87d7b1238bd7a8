// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/metrics: drained counts add up per (comm, syscall) across pids and
 * windows; names come from lifecycle events; exited processes are forgotten
 * one window after their exit; past max_series new names count as "other";
 * the histogram is cumulative with the kernel's log2 bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "src/metrics.h"
#include "tests/unit/check.h"

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

int main(void)
{
	struct metrics *m = metrics_new(3);
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
	CHECK(metrics_end_window(m) == 0);
	CHECK(metrics_nr_procs(m) == 2);
	CHECK_STR(metrics_comm_of(m, 4000001, comm, sizeof(comm)), "app");
	CHECK(metrics_end_window(m) == 0);
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
	return check_exit();
}
