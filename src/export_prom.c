// SPDX-License-Identifier: GPL-2.0-only
/*
 * `export --format prometheus` (see export_prom.h). Every metric family is
 * written in one block (the format forbids a family twice), its series
 * sorted by pid, comm and syscall so the output is deterministic.
 */
#include "src/export_prom.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/gil.h"
#include "src/lib/hashmap.h"
#include "src/runmeta.h"
#include "src/sysstats.h"
#include "src/lib/util.h"

/* Buckets 0..30 have an upper bound; slot 31 is open-ended: only +Inf. */
#define PROM_BOUNDED_SLOTS (SYS_HIST_SLOTS - 1)

/* CPU and off-CPU totals of one (process, thread name). */
struct prom_task {
	int64_t pid;
	const char *comm;	/* interned in the profile */
	uint64_t samples, cpu_ns, blocked_ns, preempted_ns;
};

struct prom_tasks {
	struct prom_task *items;
	size_t nr, alloc;
	struct hashmap idx;	/* (comm, pid) -> index + 1 */
};

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(FILE *out, const char *key, const char *v, bool first)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", key);
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
	fputc('"', out);
}

void prom_write_labels(FILE *out, const struct prom_labels *l)
{
	size_t i;

	for (i = 0; i < l->nr && i < PROM_MAX_LABELS; i++)
		prom_label(out, l->keys[i], l->vals[i], !i);
}

void prom_write_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_family(FILE *out, const char *name, const char *type, const char *help)
{
	prom_write_family(out, name, type, help);
}

void prom_write_seconds(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / (uint64_t)NSEC_PER_SEC, ns % (uint64_t)NSEC_PER_SEC);
}

static const char *proc_comm(const struct profile *p, uint32_t pid)
{
	char key[64];
	const char *c;

	snprintf(key, sizeof(key), "proc.%" PRIu32 ".comm", pid);
	c = profile_get_meta(p, key);
	return c ? c : "";
}

static void sys_labels(const struct profile *p, const struct sys_stat *s, char *pid,
		       size_t size, struct prom_labels *l)
{
	snprintf(pid, size, "%" PRIu32, s->pid);
	*l = (struct prom_labels){ { "pid", "comm", "syscall" },
				   { pid, proc_comm(p, s->pid), s->name }, 3 };
}

/* The upper bound of slot @slot in seconds, exactly: 2^slot microseconds. */
static void prom_le(FILE *out, unsigned int slot)
{
	uint64_t us = 1ULL << slot;
	char frac[8];
	int n;

	n = snprintf(frac, sizeof(frac), "%06" PRIu64, us % 1000000);
	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = 0;
	fprintf(out, "%" PRIu64 "%s%s", us / 1000000, n ? "." : "", frac);
}

/*
 * Cumulative buckets from the log2 histogram. The kernel's buckets are
 * [low, high) and Prometheus' `le` is inclusive: a call of exactly 2^i us
 * counts in the next bucket, a difference below the clock's resolution.
 */
void prom_write_histogram(FILE *out, const char *name, const struct prom_labels *l,
			  const struct sys_stat *s)
{
	uint64_t cum = 0;
	unsigned int i;

	for (i = 0; i < PROM_BOUNDED_SLOTS; i++) {
		cum += s->hist[i];
		fprintf(out, "%s_bucket{", name);
		prom_write_labels(out, l);
		fputs(",le=\"", out);
		prom_le(out, i);
		fprintf(out, "\"} %" PRIu64 "\n", cum < s->count ? cum : s->count);
	}
	fprintf(out, "%s_bucket{", name);
	prom_write_labels(out, l);
	fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\n%s_sum{", s->count, name);
	prom_write_labels(out, l);
	fputs("} ", out);
	prom_write_seconds(out, s->total_ns);
	fprintf(out, "\n%s_count{", name);
	prom_write_labels(out, l);
	fprintf(out, "} %" PRIu64 "\n", s->count);
}

void prom_write_value(FILE *out, const char *name, const struct prom_labels *l, uint64_t v)
{
	fprintf(out, "%s{", name);
	prom_write_labels(out, l);
	fprintf(out, "} %" PRIu64 "\n", v);
}

static int cmp_sys(const void *a, const void *b)
{
	const struct sys_stat *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sys_counter(FILE *out, const struct profile *p, const struct sys_stats *st,
			const char *name, size_t field)
{
	struct prom_labels l;
	char pid[16];
	size_t i;

	for (i = 0; i < st->nr; i++) {
		sys_labels(p, &st->items[i], pid, sizeof(pid), &l);
		prom_write_value(out, name, &l,
				 *(const uint64_t *)((const char *)&st->items[i] + field));
	}
}

static int prom_syscalls(FILE *out, const struct profile *p)
{
	struct sys_stats st = { 0 };
	struct prom_labels l;
	char pid[16];
	size_t i;
	int err = sys_stats_load(p, &st);

	if (err || !st.nr)
		goto out;
	array_sort(st.items, st.nr, sizeof(*st.items), cmp_sys);
	prom_family(out, "latprof_syscall_duration_seconds", "histogram",
		    "Time inside each syscall, every call counted, in the kernel's log2 buckets.");
	for (i = 0; i < st.nr; i++) {
		sys_labels(p, &st.items[i], pid, sizeof(pid), &l);
		prom_write_histogram(out, "latprof_syscall_duration_seconds", &l, &st.items[i]);
	}
	prom_family(out, "latprof_syscall_errors_total", "counter",
		    "Syscalls that returned an error (-4095..-1).");
	sys_counter(out, p, &st, "latprof_syscall_errors_total",
		    offsetof(struct sys_stat, errors));
	prom_family(out, "latprof_syscalls_in_flight", "gauge",
		    "Syscalls still running when recording stopped.");
	sys_counter(out, p, &st, "latprof_syscalls_in_flight",
		    offsetof(struct sys_stat, in_flight));
out:
	free(st.items);
	return err;
}

static struct prom_task *prom_task_of(struct prom_tasks *t, const struct profile_sample *s)
{
	const struct profile_label *pid = profile_sample_label(s, PROFILE_LABEL_PID);
	const struct profile_label *comm = profile_sample_label(s, PROFILE_LABEL_COMM);
	const char *c = comm && comm->str ? comm->str : "";
	int64_t n = pid ? pid->num : -1;
	void *v = hashmap_get(&t->idx, c, (uint64_t)n, 0);

	if (v)
		return &t->items[HASHMAP_TO_NUM(v) - 1];
	if (array_grow(t, t->nr + 1) || hashmap_put(&t->idx, c, (uint64_t)n, 0,
						    HASHMAP_NUM(t->nr + 1)))
		return NULL;
	t->items[t->nr] = (struct prom_task){ .pid = n, .comm = c };
	return &t->items[t->nr++];
}

static int64_t col_value(const struct profile_sample *s, int col)
{
	return col >= 0 && s->values[col] > 0 ? s->values[col] : 0;
}

static int prom_tasks_load(const struct profile *p, struct prom_tasks *t)
{
	int samples = profile_type_index(p, PROFILE_TYPE_SAMPLES);
	int cpu = profile_type_index(p, PROFILE_TYPE_CPU);
	int off = profile_type_index(p, PROFILE_TYPE_OFFCPU);
	struct prom_task *k;
	const struct profile_label *state;
	size_t i;

	for (i = 0; i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];

		if (!col_value(s, samples) && !col_value(s, cpu) && !col_value(s, off))
			continue;
		k = prom_task_of(t, s);
		if (!k)
			return -ENOMEM;
		k->samples += col_value(s, samples);
		k->cpu_ns += col_value(s, cpu);
		state = profile_sample_label(s, PROFILE_LABEL_OFFCPU);
		if (state && state->str && !strcmp(state->str, PROFILE_OFFCPU_PREEMPTED))
			k->preempted_ns += col_value(s, off);
		else
			k->blocked_ns += col_value(s, off);
	}
	return 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct prom_task *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

static void task_labels(FILE *out, const struct prom_task *k)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%" PRId64, k->pid);
	prom_label(out, "pid", pid, true);
	prom_label(out, "comm", k->comm, false);
}

static void prom_cpu(FILE *out, const struct profile *p, const struct prom_tasks *t)
{
	size_t i;

	if (profile_type_index(p, PROFILE_TYPE_SAMPLES) >= 0) {
		prom_family(out, "latprof_cpu_samples_total", "counter",
			    "On-CPU samples taken, per process and thread name.");
		for (i = 0; i < t->nr; i++) {
			fputs("latprof_cpu_samples_total{", out);
			task_labels(out, &t->items[i]);
			fprintf(out, "} %" PRIu64 "\n", t->items[i].samples);
		}
	}
	if (profile_type_index(p, PROFILE_TYPE_CPU) < 0)
		return;
	prom_family(out, "latprof_cpu_seconds_total", "counter",
		    "On-CPU time estimated from the samples (samples x period).");
	for (i = 0; i < t->nr; i++) {
		fputs("latprof_cpu_seconds_total{", out);
		task_labels(out, &t->items[i]);
		fputs("} ", out);
		prom_write_seconds(out, t->items[i].cpu_ns);
		fputc('\n', out);
	}
}

static void prom_offcpu(FILE *out, const struct profile *p, const struct prom_tasks *t)
{
	size_t i;
	int j;

	if (profile_type_index(p, PROFILE_TYPE_OFFCPU) < 0)
		return;
	prom_family(out, "latprof_offcpu_seconds_total", "counter",
		    "Time off CPU, blocked or preempted, per process and thread name.");
	for (i = 0; i < t->nr; i++) {
		for (j = 0; j < 2; j++) {
			fputs("latprof_offcpu_seconds_total{", out);
			task_labels(out, &t->items[i]);
			prom_label(out, "state", j ? "preempted" : "blocked", false);
			fputs("} ", out);
			prom_write_seconds(out, j ? t->items[i].preempted_ns : t->items[i].blocked_ns);
			fputc('\n', out);
		}
	}
}

static int prom_tasks(FILE *out, const struct profile *p)
{
	struct prom_tasks t = { 0 };
	int err = prom_tasks_load(p, &t);

	if (!err) {
		if (t.nr)	/* qsort wants an array, even an empty one */
			array_sort(t.items, t.nr, sizeof(*t.items), cmp_task);
		prom_cpu(out, p, &t);
		prom_offcpu(out, p, &t);
	}
	free(t.items);
	hashmap_release(&t.idx);
	return err;
}

/* One series of @name per process of @g (sorted by pid), its threads' @held or wait time. */
static void prom_gil_family(FILE *out, const struct profile *p, const struct gil_threads *g,
			    const char *name, bool held)
{
	char pid[24];
	uint64_t ns;
	size_t i;

	for (i = 0; i < g->nr; i++) {
		ns = 0;
		for (; i < g->nr; i++) {
			ns += held ? g->items[i].held_ns : g->items[i].wait_ns;
			if (i + 1 == g->nr || g->items[i + 1].pid != g->items[i].pid)
				break;
		}
		snprintf(pid, sizeof(pid), "%" PRIu32, g->items[i].pid);
		fprintf(out, "%s{", name);
		prom_label(out, "pid", pid, true);
		prom_label(out, "comm", proc_comm(p, g->items[i].pid), false);
		fputs("} ", out);
		prom_write_seconds(out, ns);
		fputc('\n', out);
	}
}

/* The Python threads' GIL waits and held time per process (src/gil.h), when seen. */
static int prom_gil(FILE *out, const struct profile *p)
{
	struct gil_threads g = { 0 };
	int err = gil_load(p, &g);

	if (err) {
		gil_threads_release(&g);	/* what a failed load filled in */
		return err == -ENOENT ? 0 : err;
	}
	prom_family(out, "latprof_gil_wait_seconds_total", "counter",
		    "Time Python threads waited to take the GIL (futex waits on it), per process.");
	prom_gil_family(out, p, &g, "latprof_gil_wait_seconds_total", false);
	prom_family(out, "latprof_gil_held_seconds_total", "counter",
		    "CPU time Python threads held the GIL (samples x period), per process.");
	prom_gil_family(out, p, &g, "latprof_gil_held_seconds_total", true);
	gil_threads_release(&g);
	return 0;
}

static void prom_lost(FILE *out, const struct profile *p)
{
	size_t i;
	int n = 0;

	for (i = 0; i < p->meta.nr; i++) {
		const char *key = p->meta.items[i].key;

		if (strncmp(key, "lost.", 5))
			continue;
		if (!n++)
			prom_family(out, "latprof_lost_events_total", "counter",
				    "Events, samples or stacks the collectors lost, by reason.");
		fputs("latprof_lost_events_total{", out);
		prom_label(out, "reason", key + 5, true);
		fprintf(out, "} %" PRIu64 "\n", profile_get_meta_u64(p, key));
	}
}

static void prom_run(FILE *out, const struct profile *p)
{
	const char *freq = profile_get_meta(p, RUN_META_FREQ_HZ);

	prom_family(out, "latprof_recording_duration_seconds", "gauge",
		    "Length of the recording.");
	fputs("latprof_recording_duration_seconds ", out);
	prom_write_seconds(out, p->duration_ns > 0 ? p->duration_ns : 0);
	fputc('\n', out);
	if (freq) {
		prom_family(out, "latprof_sampling_frequency_hertz", "gauge",
			    "CPU sampling frequency.");
		fprintf(out, "latprof_sampling_frequency_hertz %" PRIu64 "\n",
			profile_get_meta_u64(p, RUN_META_FREQ_HZ));
	}
	prom_family(out, "latprof_build_info", "gauge",
		    "Always 1: the latprof version, kernel and collectors of the recording.");
	fputs("latprof_build_info{", out);
	prom_label(out, "version", profile_get_meta(p, RUN_META_VERSION), true);
	prom_label(out, "kernel", profile_get_meta(p, RUN_META_KERNEL), false);
	prom_label(out, "mode", profile_get_meta(p, RUN_META_MODE), false);
	fputs("} 1\n", out);
}

int export_prom(FILE *out, const struct profile *p)
{
	int err = prom_syscalls(out, p);

	if (!err)
		err = prom_tasks(out, p);
	if (!err)
		err = prom_gil(out, p);
	if (err)
		return err;
	prom_lost(out, p);
	prom_run(out, p);
	return ferror(out) ? -EIO : 0;
}
