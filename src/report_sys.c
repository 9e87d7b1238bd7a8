// SPDX-License-Identifier: GPL-2.0-only
/*
 * The syscall and off-CPU sections of `latprof report`: where the target's
 * time went (CPU, each syscall category, off CPU elsewhere), the syscall
 * table with percentiles from the kernel's histograms, and the call sites
 * of the slow syscalls.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/gil.h"
#include "src/hotspots.h"
#include "src/lib/hashmap.h"
#include "src/report_fmt.h"
#include "src/runmeta.h"
#include "src/stacks.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/lib/util.h"

#define SITE_WIDTH HOT_SITE_WIDTH
#define SITE_LINES 3	/* lines for them, when a Python site needs more than one */

static enum syscall_category category_of(const char *name)
{
	int nr = syscall_number(name);

	return nr >= 0 ? syscall_category(nr) : SYSCALL_CATEGORY_OTHER;
}

static void breakdown_line(FILE *out, const char *what, uint64_t ns, uint64_t total)
{
	char t[16];

	report_fmt_ns(t, sizeof(t), ns);
	fprintf(out, "  %-34s %8s %6.1f%%\n", what, t, report_fmt_pct(ns, total));
}

/* Off-CPU time outside any syscall, by state. */
static void offcpu_outside(const struct profile *p, uint64_t *blocked, uint64_t *preempted)
{
	int col = profile_type_index(p, PROFILE_TYPE_OFFCPU);
	size_t i;

	*blocked = *preempted = 0;
	for (i = 0; col >= 0 && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		const struct profile_label *state = profile_sample_label(s, PROFILE_LABEL_OFFCPU);

		if (s->values[col] <= 0 || profile_sample_label(s, PROFILE_LABEL_SYSCALL))
			continue;
		if (state && state->str && !strcmp(state->str, PROFILE_OFFCPU_PREEMPTED))
			*preempted += s->values[col];
		else
			*blocked += s->values[col];
	}
}

/*
 * Move the Python threads' GIL waits (src/gil.h), futex time that @cat
 * counts under sync, to gil. 0 or -ENOMEM.
 */
static int breakdown_gil(const struct profile *p, uint64_t *cat)
{
	struct gil_threads g = { 0 };
	uint64_t ns;
	int err = gil_load(p, &g);

	if (err == -ENOENT)
		return 0;
	ns = gil_wait_ns(&g, 0);
	if (ns > cat[SYSCALL_CATEGORY_SYNC])
		ns = cat[SYSCALL_CATEGORY_SYNC];
	cat[SYSCALL_CATEGORY_SYNC] -= ns;
	cat[SYSCALL_CATEGORY_GIL] += ns;
	gil_threads_release(&g);
	return err;
}

int report_time_breakdown(FILE *out, const struct report_opts *o, const struct profile *p)
{
	uint64_t cat[SYSCALL_CATEGORY_NR] = { 0 }, cpu = 0, sys = 0, blocked, preempted, total;
	int col = profile_type_index(p, PROFILE_TYPE_CPU);
	struct sys_stats st = { 0 };
	char what[64];
	size_t i;
	int err = sys_stats_load(p, &st);

	if (err)
		return err;
	for (i = 0; col >= 0 && i < p->samples.nr; i++)
		if (p->samples.items[i].values[col] > 0)
			cpu += p->samples.items[i].values[col];
	for (i = 0; i < st.nr; i++) {
		cat[category_of(st.items[i].name)] += st.items[i].total_ns;
		sys += st.items[i].total_ns;
	}
	offcpu_outside(p, &blocked, &preempted);
	total = cpu + sys + blocked + preempted;
	free(st.items);
	err = breakdown_gil(p, cat);
	if (err)
		return err;
	if (!st.nr && profile_type_index(p, PROFILE_TYPE_OFFCPU) < 0)
		return 0;	/* CPU alone: the rest of the report is about it */
	report_fmt_heading(out, o->color, "Time breakdown", "(all target threads, summed)");
	if (col >= 0)
		breakdown_line(out, "on CPU (sampled)", cpu, total);
	for (i = 0; i < SYSCALL_CATEGORY_NR; i++) {
		if (!cat[i])
			continue;
		snprintf(what, sizeof(what), "in syscalls: %s", syscall_category_name(i));
		breakdown_line(out, what, cat[i], total);
	}
	if (profile_type_index(p, PROFILE_TYPE_OFFCPU) >= 0) {
		breakdown_line(out, "off CPU outside syscalls: blocked", blocked, total);
		breakdown_line(out, "off CPU outside syscalls: preempted", preempted, total);
	}
	if (col >= 0 && st.nr)
		fprintf(out,
			"  (syscall time includes the kernel CPU time that sampling also sees)\n");
	return 0;
}

static int cmp_total(const void *a, const void *b)
{
	const struct sys_stat *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Merge per-process statistics into one row per syscall. */
static int merge_by_name(struct sys_stats *in, struct sys_stats *out)
{
	struct hashmap idx = { 0 };
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < in->nr; i++) {
		const struct sys_stat *s = &in->items[i];
		uint64_t k = HASHMAP_TO_NUM(hashmap_get(&idx, NULL, syscall_number(s->name), 0));

		/* unnamed syscalls have no number: each keeps its own row */
		if (k && syscall_number(s->name) >= 0) {
			sys_stat_merge(&out->items[k - 1], s);
			continue;
		}
		if (array_grow(out, out->nr + 1)) {
			err = -ENOMEM;
			break;
		}
		j = out->nr++;
		out->items[j] = *s;
		out->items[j].pid = 0;
		if (syscall_number(s->name) >= 0)
			err = hashmap_put(&idx, NULL, syscall_number(s->name), 0,
					  HASHMAP_NUM(j + 1));
	}
	hashmap_release(&idx);
	return err;
}

/* Under the table: how much of futex's time was GIL waits (class "gil" elsewhere). */
static int syscalls_gil_note(FILE *out, const struct profile *p)
{
	struct gil_threads g = { 0 };
	char t[16];
	int err = gil_load(p, &g);

	if (err == -ENOENT)
		return 0;
	if (!err && gil_wait_ns(&g, 0)) {
		report_fmt_ns(t, sizeof(t), gil_wait_ns(&g, 0));
		fprintf(out, "  (futex: %s of it waiting for a Python GIL, class gil in the"
			" breakdown)\n", t);
	}
	gil_threads_release(&g);
	return err;
}

int report_syscalls(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct sys_stats st = { 0 }, rows = { 0 };
	uint64_t calls = 0, errors = 0, in_flight = 0;
	char t[6][16];
	size_t i;
	int err = sys_stats_load(p, &st);

	if (!err)
		err = merge_by_name(&st, &rows);
	if (err || !rows.nr)
		goto out;
	array_sort(rows.items, rows.nr, sizeof(*rows.items), cmp_total);
	report_fmt_heading(out, o->color, "Syscalls",
			   "(every call; percentiles: mean of their log2 bucket)");
	fprintf(out, "  %-15s %-7s %8s %6s %5s %5s %5s %5s %5s %5s\n", "syscall", "class", "count",
		"errs", "total", "avg", "p50", "p95", "p99", "max");
	for (i = 0; i < rows.nr; i++) {
		const struct sys_stat *s = &rows.items[i];

		calls += s->count;
		errors += s->errors;
		in_flight += s->in_flight;
		if (i >= o->top)
			continue;
		report_fmt_ns(t[0], sizeof(t[0]), s->total_ns);
		report_fmt_ns(t[1], sizeof(t[1]), s->count ? s->total_ns / s->count : 0);
		report_fmt_ns(t[2], sizeof(t[2]), sys_stat_quantile_ns(s, 0.50));
		report_fmt_ns(t[3], sizeof(t[3]), sys_stat_quantile_ns(s, 0.95));
		report_fmt_ns(t[4], sizeof(t[4]), sys_stat_quantile_ns(s, 0.99));
		report_fmt_ns(t[5], sizeof(t[5]), s->max_ns);
		fprintf(out, "  %-15.15s %-7.7s %8" PRIu64 " %6" PRIu64
			" %5s %5s %5s %5s %5s %5s\n", s->name,
			syscall_category_name(category_of(s->name)), s->count, s->errors, t[0],
			t[1], t[2], t[3], t[4], t[5]);
	}
	if (rows.nr > o->top)
		fprintf(out, "  ... %zu more syscalls\n", rows.nr - o->top);
	fprintf(out, "  %" PRIu64 " calls, %" PRIu64 " errors, %" PRIu64 " in flight at stop\n",
		calls, errors, in_flight);
	err = syscalls_gil_note(out, p);
out:
	free(st.items);
	free(rows.items);
	return err;
}

/*
 * The frames of a site, indented under its syscall, in lines of at most
 * SITE_WIDTH broken after a ';' (a Python site may be longer than one: its
 * innermost Python function and the C function it called are always named);
 * a frame longer than a line goes on in the next. At most SITE_LINES lines.
 */
static void print_site_frames(FILE *out, const char *frames)
{
	size_t len = strlen(frames), n, lines = 0;
	const char *semi;

	do {
		n = len;
		if (n > SITE_WIDTH) {
			/* the last ';' that fits, kept at the end of the line */
			for (semi = frames + SITE_WIDTH - 1; semi > frames && *semi != ';'; semi--)
				;
			n = semi > frames ? (size_t)(semi - frames) + 1 : SITE_WIDTH;
		}
		fprintf(out, "  %24s%.*s\n", "", (int)n, frames);
		frames += n;
		len -= n;
	} while (len && ++lines < SITE_LINES);
}

/* Is @site ("syscall:NAME\t...") an event loop's wait, epoll's? */
static bool loop_wait_site(const char *site)
{
	return !strncmp(site, "syscall:epoll_wait\t", 19) ||
	       !strncmp(site, "syscall:epoll_pwait", 19);
}

/*
 * Print the sites [@from, @to) of @t, at most @top, with *@note (NULL: none)
 * under the first event loop's wait (then *@note is NULL); returns their
 * total time.
 */
static uint64_t print_sites(FILE *out, const struct hot_sites *t, size_t from, size_t to,
			    unsigned int top, const char **note)
{
	uint64_t total = 0, top_total = 0;
	char tot[16], max[16];
	size_t i, len;

	for (i = from; i < to; i++)
		total += t->items[i].total_ns;
	for (i = from; i < to && i - from < top; i++) {
		const char *name = hot_site_text(t->items[i].name);

		top_total += t->items[i].total_ns;
		report_fmt_ns(tot, sizeof(tot), t->items[i].total_ns);
		report_fmt_ns(max, sizeof(max), t->items[i].max_ns);
		len = strcspn(name, "\t");
		fprintf(out, "  %7s %7" PRIu64 " %6s  %.*s\n", tot, t->items[i].calls, max,
			(int)len, name);
		print_site_frames(out, name[len] ? name + len + 1 : "");
		if (*note && loop_wait_site(name)) {
			fputs(*note, out);
			*note = NULL;
		}
	}
	if (to - from > top)
		fprintf(out, "  ... %zu more sites, %.1f%% of the slow time in the top %u\n",
			to - from - top, report_fmt_pct(top_total, total), top);
	return total;
}

/* Sites [@from, @to) of @t under a line "@what; docs/syscalls.md): TOTAL in N calls". */
static void print_wait_group(FILE *out, const struct report_opts *o, const struct hot_sites *t,
			     size_t from, size_t to, const char *what, const char **note)
{
	uint64_t ns = 0, calls = 0;
	char tot[16];
	size_t i;

	if (from >= to)
		return;
	for (i = from; i < to; i++) {
		ns += t->items[i].total_ns;
		calls += t->items[i].calls;
	}
	report_fmt_ns(tot, sizeof(tot), ns);
	fprintf(out, "  %s; docs/syscalls.md): %s in %" PRIu64 " calls\n", what, tot, calls);
	print_sites(out, t, from, to, o->top, note);
}

int report_slow_sites(FILE *out, const struct report_opts *o, const struct profile *p)
{
	int lat = profile_type_index(p, PROFILE_TYPE_LATENCY);
	int calls = profile_type_index(p, PROFILE_TYPE_SYSCALLS);
	struct strtab *names;
	struct hot_sites t = { 0 };
	struct hot_filter f = { .stack_flags = o->stack_flags };
	size_t i, from[HOT_WAITS + 1] = { 0 };
	char *note = NULL;
	const char *left;
	int err;

	if (lat < 0)
		return 0;
	/* what an asyncio loop's tasks awaited while it waited */
	err = report_await_note(o, p, &note);
	if (err)
		return err;
	names = strtab_new();
	if (!names) {
		free(note);
		return -ENOMEM;
	}
	err = hot_sites_collect(p, lat, calls, &f, names, &t);
	if (err)
		goto out;
	report_fmt_heading(out, o->color, "Slow call sites",
			   "(syscalls >= %s us, innermost frames)",
			   profile_get_meta(p, RUN_META_MIN_DURATION_US) ?
			   profile_get_meta(p, RUN_META_MIN_DURATION_US) : "?");
	hot_sites_sort(&t);
	for (i = 0; i < t.nr; i++)
		from[t.items[i].wait + 1] = i + 1;
	for (i = 1; i <= HOT_WAITS; i++)	/* groups with no site start where the last ended */
		if (from[i] < from[i - 1])
			from[i] = from[i - 1];
	if (!t.nr)
		fprintf(out, "  none: no syscall reached the threshold\n");
	else if (!from[HOT_WAIT_IDLE])
		fprintf(out, "  none on the path of work: every slow syscall was an idle wait\n");
	else if (!from[HOT_WAIT_READY])
		fprintf(out, "  none decided on the path of work: see the waits below\n");
	else
		fprintf(out, "  %7s %7s %6s  %s\n", "total", "calls", "max", "site");
	left = note;
	print_sites(out, &t, 0, from[HOT_WAIT_READY], o->top, &left);
	print_wait_group(out, o, &t, from[HOT_WAIT_READY], from[HOT_WAIT_IDLE],
			 "readiness waits, not decided (nothing to tell them by: pipes, a "
			 "reply\n  streaming in, begun before the recording", &left);
	print_wait_group(out, o, &t, from[HOT_WAIT_IDLE], t.nr,
			 "idle waits, apart (a thread parked until work arrives: nothing "
			 "pending on\n  its connections, or accept", &left);
out:
	free(note);
	hot_sites_release(&t);
	strtab_free(names);
	return err;
}
