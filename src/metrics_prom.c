// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's /metrics page: the counters of metrics.c written in the Prometheus
 * text format with export_prom's writers, each family in one block, its
 * series sorted by comm and syscall, then what the agent says about itself
 * (losses, its CPU and memory, the series it holds and expired, the profile
 * requests, its build).
 */
#include "src/metrics_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/export_prom.h"
#include "src/lib/util.h"

static int cmp_sys(const void *a, const void *b)
{
	const struct metrics_sys *x = *(const struct metrics_sys *const *)a;
	const struct metrics_sys *y = *(const struct metrics_sys *const *)b;
	int c = strcmp(x->comm, y->comm);

	return c ? c : strcmp(x->st.name, y->st.name);
}

static int cmp_task(const void *a, const void *b)
{
	const struct metrics_task *x = *(const struct metrics_task *const *)a;
	const struct metrics_task *y = *(const struct metrics_task *const *)b;

	return strcmp(x->comm, y->comm);
}

static void sys_labels(const struct metrics_sys *s, struct prom_labels *l)
{
	*l = (struct prom_labels){ { "comm", "syscall" }, { s->comm, s->st.name }, 2 };
}

static void write_sys(const struct metrics_sys *const *v, size_t nr, FILE *out)
{
	struct prom_labels l;
	size_t i;

	if (!nr)
		return;
	prom_write_family(out, "latprof_syscall_duration_seconds", "histogram",
			  "Time inside each syscall, every call counted, per process name, in the kernel's log2 buckets.");
	for (i = 0; i < nr; i++) {
		sys_labels(v[i], &l);
		prom_write_histogram(out, "latprof_syscall_duration_seconds", &l, &v[i]->st);
	}
	prom_write_family(out, "latprof_syscall_errors_total", "counter",
			  "Syscalls that returned an error (-4095..-1), per process name.");
	for (i = 0; i < nr; i++) {
		sys_labels(v[i], &l);
		prom_write_value(out, "latprof_syscall_errors_total", &l, v[i]->st.errors);
	}
}

/* Event-loop stalls, for the names that had one (src/stalls.h). */
static void write_stalls(const struct metrics_task *const *v, size_t nr, FILE *out)
{
	struct prom_labels l = { { "comm" }, { NULL }, 1 };
	size_t i, n = 0;

	for (i = 0; i < nr; i++)
		n += v[i]->stall.count > 0;
	if (!n)
		return;
	prom_write_family(out, "latprof_loop_stall_seconds", "histogram",
			  "Event-loop stalls: a thread that waits in epoll or poll ran this long between two waits (at least --stall-min), per process name.");
	for (i = 0; i < nr; i++) {
		if (!v[i]->stall.count)
			continue;
		l.vals[0] = v[i]->comm;
		prom_write_histogram(out, "latprof_loop_stall_seconds", &l, &v[i]->stall);
	}
}

static void write_tasks(const struct metrics_task *const *v, size_t nr,
			const struct metrics_agent *a, FILE *out)
{
	struct prom_labels l = { { "comm", "state" }, { NULL, NULL }, 1 };
	size_t i;
	int j;

	if (a->has_cpu) {
		prom_write_family(out, "latprof_cpu_samples_total", "counter",
				  "On-CPU samples taken, per process name.");
		for (i = 0; i < nr; i++) {
			l.vals[0] = v[i]->comm;
			prom_write_value(out, "latprof_cpu_samples_total", &l, v[i]->samples);
		}
	}
	write_stalls(v, nr, out);
	if (!a->has_offcpu)
		return;
	prom_write_family(out, "latprof_offcpu_seconds_total", "counter",
			  "Time off CPU, blocked or preempted, per process name.");
	l.nr = 2;
	for (i = 0; i < nr; i++) {
		for (j = 0; j < 2; j++) {
			l.vals[0] = v[i]->comm;
			l.vals[1] = j ? "preempted" : "blocked";
			fputs("latprof_offcpu_seconds_total{", out);
			prom_write_labels(out, &l);
			fputs("} ", out);
			prom_write_seconds(out, j ? v[i]->preempted_ns : v[i]->blocked_ns);
			fputc('\n', out);
		}
	}
}

static void write_gauge(FILE *out, const char *name, const char *type, const char *help,
			uint64_t v)
{
	prom_write_family(out, name, type, help);
	fprintf(out, "%s %" PRIu64 "\n", name, v);
}

/* A family of one series without labels, a duration in seconds. */
static void write_seconds(FILE *out, const char *name, const char *type, const char *help,
			  uint64_t ns)
{
	prom_write_family(out, name, type, help);
	fprintf(out, "%s ", name);
	prom_write_seconds(out, ns);
	fputc('\n', out);
}

/* A counter family with one series per trigger rule. */
static void write_per_rule(FILE *out, const char *name, const char *help,
			   const struct metrics_agent *a, const uint64_t *values)
{
	struct prom_labels l = { { "rule" }, { NULL }, 1 };
	size_t i;

	prom_write_family(out, name, "counter", help);
	for (i = 0; i < a->nr_triggers; i++) {
		l.vals[0] = a->trigger_names[i];
		prom_write_value(out, name, &l, values[i]);
	}
}

/* serve's history and triggers (--history, --trigger). */
static void write_history(const struct metrics_agent *a, FILE *out)
{
	if (a->has_history) {
		write_gauge(out, "latprof_history_memory_bytes", "gauge",
			    "Bytes of the history's windows in memory (--history-max-mb caps it).",
			    a->history_bytes);
		write_gauge(out, "latprof_history_windows", "gauge",
			    "History windows in memory.", a->history_windows);
		write_gauge(out, "latprof_history_spilled_bytes", "gauge",
			    "Bytes of the history's windows in --history-dir.",
			    a->history_spilled_bytes);
		write_gauge(out, "latprof_history_windows_dropped_total", "counter",
			    "History windows dropped: older than --history, or past the caps.",
			    a->history_dropped);
		write_gauge(out, "latprof_history_requests_total", "counter",
			    "Profiles cut out of the history.", a->history_requests);
	}
	if (!a->nr_triggers)
		return;
	write_per_rule(out, "latprof_trigger_firings_total",
		       "Times a trigger rule fired and saved a profile.", a, a->trigger_firings);
	write_per_rule(out, "latprof_trigger_suppressed_total",
		       "Times a trigger rule held but its rate limit saved nothing.", a,
		       a->trigger_suppressed);
}

static void write_agent(const struct metrics *m, const struct metrics_agent *a, FILE *out)
{
	struct prom_labels l = { { "reason" }, { NULL }, 1 };
	size_t i;

	prom_write_family(out, "latprof_lost_events_total", "counter",
			  "Events, samples or stacks the collectors lost, by reason.");
	for (i = 0; i < a->nr_lost; i++) {
		l.vals[0] = a->lost_names[i];
		prom_write_value(out, "latprof_lost_events_total", &l, a->lost[i]);
	}
	write_seconds(out, "latprof_agent_cpu_seconds_total", "counter",
		      "CPU time of the latprof agent itself, user and system.", a->cpu_ns);
	write_gauge(out, "latprof_agent_resident_memory_bytes", "gauge",
		    "Resident set size of the latprof agent.", a->rss_bytes);
	write_gauge(out, "latprof_agent_bpf_map_memory_bytes", "gauge",
		    "Memory of the BPF maps the agent holds (memlock in fdinfo).", a->bpf_map_bytes);
	write_seconds(out, "latprof_agent_uptime_seconds", "gauge",
		      "Time since the agent attached its collectors.", a->uptime_ns);
	write_gauge(out, "latprof_agent_tracked_processes", "gauge",
		    "Processes in the agent's pid to name table.", a->procs_tracked);
	write_gauge(out, "latprof_agent_series", "gauge",
		    "Series the agent holds now: one per process name and syscall, and one per process name.",
		    m->series.sys.nr + m->series.tasks.nr);
	write_gauge(out, "latprof_agent_series_expired_total", "counter",
		    "Series removed after --series-ttl without a new count.", m->expired);
	write_gauge(out, "latprof_profile_sessions", "gauge",
		    "Profile requests being recorded now.", a->profiles_active);
	write_gauge(out, "latprof_profile_requests_total", "counter",
		    "Profile requests recorded.", a->profiles_total);
	write_gauge(out, "latprof_profile_requests_rejected_total", "counter",
		    "Profile requests refused because --max-sessions were running.",
		    a->profiles_rejected);
	if (a->has_cpu)
		write_gauge(out, "latprof_sampling_frequency_hertz", "gauge",
			    "CPU sampling frequency.", a->freq_hz);
	l = (struct prom_labels){ { "version", "kernel", "mode" },
				  { a->version, a->kernel, a->mode }, 3 };
	prom_write_family(out, "latprof_build_info", "gauge",
			  "Always 1: the latprof version, kernel and collectors of the agent.");
	prom_write_value(out, "latprof_build_info", &l, 1);
}

int metrics_write(const struct metrics *m, const struct metrics_agent *a, FILE *out)
{
	const struct metrics_series *s = &m->series;
	const struct metrics_sys **sys = calloc(s->sys.nr + 1, sizeof(*sys));
	const struct metrics_task **tasks = calloc(s->tasks.nr + 1, sizeof(*tasks));
	size_t i;
	int err = 0;

	if (!sys || !tasks) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->sys.nr; i++)
		sys[i] = &s->sys.items[i];
	for (i = 0; i < s->tasks.nr; i++)
		tasks[i] = &s->tasks.items[i];
	if (s->sys.nr)
		array_sort(sys, s->sys.nr, sizeof(*sys), cmp_sys);
	if (s->tasks.nr)
		array_sort(tasks, s->tasks.nr, sizeof(*tasks), cmp_task);
	write_sys(sys, s->sys.nr, out);
	write_tasks(tasks, s->tasks.nr, a, out);
	write_agent(m, a, out);
	write_history(a, out);
	if (ferror(out))
		err = -EIO;
out:
	free(sys);
	free(tasks);
	return err;
}
