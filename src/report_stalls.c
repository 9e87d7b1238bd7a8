// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event-loop stalls section of `latprof report` (src/stalls.h): how
 * many, their durations, the threads they stopped, and the stacks the
 * stall time went to (the profile's "stall" column). Printed only for a
 * recording that looked for stalls; "none" is an answer too.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "src/report_fmt.h"
#include "src/runmeta.h"
#include "src/stalls.h"
#include "src/weight.h"
#include "src/lib/util.h"

#define REPORT_STALL_THREADS 10	/* threads listed */
#define REPORT_STALL_STACKS 3	/* stacks the time went to */
#define REPORT_STALL_CALLERS 2	/* frames shown above each stack's leaf */

struct stall_thread {
	uint32_t pid, tid;
	size_t count;
	uint64_t total_ns, max_ns;
};

static int cmp_thread_total(const void *a, const void *b)
{
	const struct stall_thread *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The stalls grouped by thread, most stalled first, into *@out (*@nr of them). */
static int by_thread(const struct stalls *s, struct stall_thread **out, size_t *nr)
{
	struct stall_thread *t = calloc(s->nr ? s->nr : 1, sizeof(*t));
	size_t i, j, n = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		const struct stall *st = &s->items[i];

		for (j = 0; j < n && (t[j].pid != st->pid || t[j].tid != st->tid); j++)
			;
		if (j == n)
			t[n++] = (struct stall_thread){ .pid = st->pid, .tid = st->tid };
		t[j].count++;
		t[j].total_ns += st->duration_ns;
		if (st->duration_ns > t[j].max_ns)
			t[j].max_ns = st->duration_ns;
	}
	array_sort(t, n, sizeof(*t), cmp_thread_total);
	*out = t;
	*nr = n;
	return 0;
}

/*
 * A few callers of @st's leaf, then the innermost frame that names its
 * source file if none of those did: a Python function under a native
 * sleep, the coroutine that called it.
 */
static void print_callers(FILE *out, const struct flame_stack *st)
{
	bool named = false;
	size_t j, shown = 0;

	if (!st->nr_frames)
		return;
	for (j = st->nr_frames - 1; j-- > 1;) {
		bool file = strchr(st->frames[j], '(') != NULL;

		if (shown < REPORT_STALL_CALLERS || (file && !named)) {
			fprintf(out, " <- %s%s", shown == REPORT_STALL_CALLERS ? "... <- " : "",
				st->frames[j]);
			named |= file;
			if (shown++ >= REPORT_STALL_CALLERS)
				break;
		}
	}
}

/* The stacks the stall column weighs most: leaf, then a few callers. */
static int print_where(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct profile_weight w;
	const struct flame_stack **order;
	struct flame *f;
	size_t i, n;
	char t[16];
	int err;

	const char *unwind = profile_get_meta(p, RUN_META_UNWIND);

	if (unwind && !strcmp(unwind, "fp")) {
		fprintf(out, "  (not weighed: --unwind fp aggregates in the kernel, without times)\n");
		return 0;
	}
	if (profile_type_index(p, PROFILE_TYPE_STALL) < 0 ||
	    profile_weight_get(p, PROFILE_TYPE_STALL, &w))
		return 0;
	err = report_sorted_stacks(o, p, &w, &f, &order, &n);
	if (err)
		return err;
	fprintf(out, "  where the time went (--weight stall; stacks of the samples and slow\n"
		"  syscalls taken once a stall was past the threshold):\n");
	for (i = 0; i < n && i < REPORT_STALL_STACKS; i++) {
		report_fmt_ns(t, sizeof(t), order[i]->weight);
		fprintf(out, "  %6.1f%% %6s  %s", report_fmt_pct(order[i]->weight, flame_total(f)),
			t, order[i]->nr_frames ? order[i]->frames[order[i]->nr_frames - 1] : "?");
		print_callers(out, order[i]);
		fputc('\n', out);
	}
	free(order);
	flame_free(f);
	return 0;
}

int report_stalls(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct stalls s = { 0 };
	struct stalls_summary sum;
	struct stall_thread *t = NULL;
	char q[5][16];
	uint64_t min_ns;
	size_t i, nt = 0;
	int err = stalls_load(p, &s, &min_ns);

	if (err == -ENOENT)
		return 0;
	if (!err)
		err = stalls_summarize(&s, &sum);
	if (!err)
		err = by_thread(&s, &t, &nt);
	if (err)
		goto out;
	report_fmt_ns(q[0], sizeof(q[0]), min_ns);
	report_fmt_heading(out, o->color, "Event-loop stalls",
			   "(a thread that waits in epoll or poll ran >= %s between two)",
			   q[0]);
	if (!sum.count) {
		fprintf(out, "  none\n");
		goto out;
	}
	report_fmt_ns(q[1], sizeof(q[1]), sum.total_ns);
	report_fmt_ns(q[2], sizeof(q[2]), sum.p50_ns);
	report_fmt_ns(q[3], sizeof(q[3]), sum.p99_ns);
	report_fmt_ns(q[4], sizeof(q[4]), sum.max_ns);
	fprintf(out, "  %zu stalls, %s in all: p50 %s  p99 %s  max %s", sum.count, q[1], q[2], q[3],
		q[4]);
	if (sum.in_flight)
		fprintf(out, "  (%zu still running at the stop, counted up to it)", sum.in_flight);
	if (profile_get_meta_u64(p, "stalls.dropped"))
		fprintf(out, "  (%" PRIu64 " more not kept)", profile_get_meta_u64(p, "stalls.dropped"));
	fprintf(out, "\n      pid      tid  stalls   total     max\n");
	for (i = 0; i < nt && i < REPORT_STALL_THREADS; i++) {
		report_fmt_ns(q[1], sizeof(q[1]), t[i].total_ns);
		report_fmt_ns(q[2], sizeof(q[2]), t[i].max_ns);
		fprintf(out, "  %7u  %7u  %6zu  %6s  %6s\n", t[i].pid, t[i].tid, t[i].count, q[1], q[2]);
	}
	err = print_where(out, o, p);
out:
	free(t);
	stalls_release(&s);
	return err;
}
