// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process, memory and timeline sections of `latprof report`: the tree
 * of traced processes with lifetimes, exit status and peak memory (and the
 * ended ones a full table folded, by name), and the per-interval activity
 * squeezed into at most TIMELINE_ROWS rows. The full data is in `export
 * --format json` and `latprof timeline`.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "src/proctree.h"
#include "src/report_fmt.h"
#include "src/timeline.h"
#include "src/lib/util.h"

#define PROC_ROWS 40		/* processes listed */
#define FOLDED_ROWS 10		/* folded names listed */
#define MAX_INDENT 8		/* tree levels shown by indentation */
#define TIMELINE_ROWS 24

/* "exit 3", "SIGKILL", "-" (still running or unknown). */
static void status_str(const struct proc_info *pi, char *buf, size_t size)
{
	if (!pi->ended || !pi->has_status)
		snprintf(buf, size, "%s", pi->ended ? "?" : "running");
	else if (WIFSIGNALED(pi->status))
		snprintf(buf, size, "SIG%s", sigabbrev_np(WTERMSIG(pi->status)) ?
			 sigabbrev_np(WTERMSIG(pi->status)) : "?");
	else
		snprintf(buf, size, "exit %d", WEXITSTATUS(pi->status));
}

static void kb_str(uint64_t kb, char *buf, size_t size)
{
	if (!kb)
		snprintf(buf, size, "-");
	else if (kb >= 10 * 1024 * 1024)
		snprintf(buf, size, "%.1fG", kb / 1048576.0);
	else if (kb >= 10 * 1024)
		snprintf(buf, size, "%.0fM", kb / 1024.0);
	else
		snprintf(buf, size, "%.1fM", kb / 1024.0);
}

static void print_proc(FILE *out, const struct proc_info *pi, unsigned int depth,
		       uint64_t end_ns)
{
	char st[24], rss[16], pss[16], life[16];

	status_str(pi, st, sizeof(st));
	kb_str(pi->peak_rss_kb, rss, sizeof(rss));
	kb_str(pi->peak_pss_kb, pss, sizeof(pss));
	report_fmt_ns(life, sizeof(life), (pi->ended ? pi->end_ns : end_ns) - pi->start_ns);
	fprintf(out, "  %8.3f %8.3f %7s %-8s %6s %6s %7" PRIu32 " %*s%.*s\n", pi->start_ns / 1e9,
		pi->ended ? pi->end_ns / 1e9 : end_ns / 1e9, life, st, rss, pss, pi->pid,
		2 * (depth < MAX_INDENT ? depth : MAX_INDENT), "", 60,
		pi->cmdline && *pi->cmdline ? pi->cmdline : pi->comm);
}

/* Print process @i and its descendants, depth first in start order; counts rows. */
static void print_subtree(FILE *out, const struct proc_tree *t, const long *parent, size_t i,
			  unsigned int depth, uint64_t end_ns, size_t *rows)
{
	size_t j;

	if ((*rows)++ < PROC_ROWS)
		print_proc(out, &t->procs.items[i], depth, end_ns);
	for (j = i + 1; j < t->procs.nr; j++)
		if (parent[j] == (long)i)
			print_subtree(out, t, parent, j, depth + 1, end_ns, rows);
}

/* Busiest first; equal counts by name, so the report is deterministic. */
static int cmp_folded_desc(const void *a, const void *b)
{
	const struct proc_folded *x = *(const struct proc_folded *const *)a;
	const struct proc_folded *y = *(const struct proc_folded *const *)b;

	if (x->processes != y->processes)
		return x->processes < y->processes ? 1 : -1;
	return strcmp(x->comm, y->comm);
}

static void print_folded_row(FILE *out, const struct proc_folded *f)
{
	char mean[16], max[16], rss[16];

	report_fmt_ns(mean, sizeof(mean), f->processes ? f->life_ns / f->processes : 0);
	report_fmt_ns(max, sizeof(max), f->max_life_ns);
	kb_str(f->peak_rss_kb, rss, sizeof(rss));
	fprintf(out, "  %9" PRIu64 " %9s %8s %6s %6" PRIu64 " %s\n", f->processes, mean, max, rss,
		f->failed, f->comm[0] ? f->comm : "[other]");
}

/* The ended processes a full table folded into their names, busiest first. */
static int print_folded(FILE *out, const struct proc_tree *t)
{
	const struct proc_folded **order;
	uint64_t total = 0;
	size_t i;

	if (!t->folded.nr)
		return 0;
	order = calloc(t->folded.nr, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < t->folded.nr; i++) {
		order[i] = &t->folded.items[i];
		total += order[i]->processes;
	}
	array_sort(order, t->folded.nr, sizeof(*order), cmp_folded_desc);
	fprintf(out, "  folded when the table was full (ended ones, shortest lives first): %" PRIu64
		" processes under %zu name%s\n", total, t->folded.nr, t->folded.nr == 1 ? "" : "s");
	fprintf(out, "  %9s %9s %8s %6s %6s %s\n", "PROCESSES", "MEAN LIFE", "MAX LIFE", "RSS",
		"FAILED", "NAME");
	for (i = 0; i < t->folded.nr && i < FOLDED_ROWS; i++)
		print_folded_row(out, order[i]);
	if (t->folded.nr > FOLDED_ROWS)
		fprintf(out, "  ... and %zu more names (all of them: export --format json)\n",
			t->folded.nr - FOLDED_ROWS);
	free(order);
	return 0;
}

int report_processes(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct proc_tree t;
	long *parent = NULL;
	size_t i, rows = 0;
	int err;

	proc_tree_init(&t, 0, 0);
	err = proc_tree_load(&t, p);
	if (err || !t.procs.nr)
		goto out;
	parent = calloc(t.procs.nr, sizeof(*parent));
	if (!parent) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t.procs.nr; i++)
		parent[i] = proc_tree_parent(&t, i);
	report_fmt_heading(out, o->color, "Processes",
			   "(%zu; seconds from the start; peak resident memory)", t.procs.nr);
	fprintf(out, "  %8s %8s %7s %-8s %6s %6s %7s %s\n", "START", "END", "LIFE", "STATUS", "RSS",
		"PSS", "PID", "COMMAND (children indented)");
	for (i = 0; i < t.procs.nr; i++)
		if (parent[i] < 0)
			print_subtree(out, &t, parent, i, 0, p->duration_ns, &rows);
	if (rows > PROC_ROWS)
		fprintf(out, "  ... %zu more (all of them: export --format json)\n",
			rows - PROC_ROWS);
	err = print_folded(out, &t);
	if (t.procs_dropped)
		fprintf(out, "  %" PRIu64 " more processes not tracked (table full of live ones)\n",
			t.procs_dropped);
out:
	free(parent);
	proc_tree_release(&t);
	return err;
}

/*
 * Rows of @g intervals each, summed; memory and processes at each row's end.
 * The gil column only when @gil.
 */
static void print_timeline_rows(FILE *out, const struct timeline *tl, size_t g, bool gil)
{
	size_t i, j, k;

	for (i = 0; i < tl->items.nr; i += g) {
		struct timeline_interval sum = { .start_ns = tl->items.items[i].start_ns };
		double per_s[TIMELINE_SERIES_NR];

		for (j = i; j < i + g && j < tl->items.nr; j++) {
			const struct timeline_interval *v = &tl->items.items[j];

			for (k = 0; k < TIMELINE_SERIES_NR; k++)
				sum.ns[k] += v->ns[k];
			sum.opens += v->opens;
			sum.duration_ns += v->duration_ns;
			sum.rss_kb = v->rss_kb;
			sum.procs = v->procs;
		}
		fprintf(out, "  %8.2f", sum.start_ns / 1e9);
		for (k = 0; k < TIMELINE_SERIES_NR; k++) {
			per_s[k] = sum.duration_ns ? (double)sum.ns[k] / sum.duration_ns : 0;
			if (k != TIMELINE_SERIES_GIL || gil)
				fprintf(out, " %5.2f", per_s[k]);
		}
		fprintf(out, " %6" PRIu64 " %8.1f %5" PRIu32 "\n", sum.opens, sum.rss_kb / 1024.0,
			sum.procs);
	}
}

int report_timeline(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct timeline tl;
	bool gil;
	size_t g;
	int err;

	timeline_init(&tl, 0, 0);
	err = timeline_load(&tl, p);
	if (err || !tl.items.nr)
		goto out;
	g = (tl.items.nr + TIMELINE_ROWS - 1) / TIMELINE_ROWS;
	report_fmt_heading(out, o->color, "Timeline",
			   "(per %.2f s; time in seconds per second, all targets%s)",
			   g * tl.interval_ns / 1e9,
			   tl.has_cpu ? "" : "; no CPU column without --mode cpu");
	gil = timeline_has(&tl, TIMELINE_SERIES_GIL);
	fprintf(out, "  %8s %5s %5s %5s %5s%s %5s %5s %6s %8s %5s\n", "START", "CPU", "FILE", "NET",
		"SYNC", gil ? "   GIL" : "", "SLEEP", "OTHER", "OPENS", "RSS MB", "PROCS");
	print_timeline_rows(out, &tl, g, gil);
out:
	timeline_release(&tl);
	return err;
}
