// SPDX-License-Identifier: GPL-2.0-only
/*
 * The awaits section of `latprof report` (src/awaits.h): what asyncio tasks
 * were suspended on, by await chain (the profile's "await" column, task
 * names set apart), beside what their event loops waited in the kernel
 * meanwhile: the loop's wait is all its tasks' awaits at once, the chains
 * say what each was for. Printed only for a profile with await time; the
 * heaviest chains also go under the loop's wait in the slow call sites.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "src/report_fmt.h"
#include "src/sysstats.h"
#include "src/weight.h"
#include "src/lib/util.h"

#define REPORT_AWAIT_CHAINS 5		/* chains listed */
#define REPORT_AWAIT_NOTE 2		/* chains under the loop's wait in the slow sites */
#define REPORT_AWAIT_GROUPS 256		/* chains told apart, at most */
#define REPORT_AWAIT_WHOLE 6		/* a chain this long is shown whole, */
#define REPORT_AWAIT_INNER 4		/* else its outer frame and this many innermost */

/* The stacks of one await chain, whatever their tasks' names. */
struct await_chain {
	const struct flame_stack *st;	/* the heaviest: its frames are shown */
	size_t task;			/* index of its "[task ...]" frame */
	uint64_t weight;
	size_t names;			/* task names summed here (asyncio's own: one) */
};

/* The index of @st's "[task NAME]" frame; nr_frames when none. */
static size_t task_frame(const struct flame_stack *st)
{
	size_t i;

	for (i = 0; i < st->nr_frames; i++)
		if (!strncmp(st->frames[i], "[task ", 6))
			return i;
	return st->nr_frames;
}

/* Do @a and @b await the same way below their task frames @ta, @tb? */
static bool same_chain(const struct flame_stack *a, size_t ta, const struct flame_stack *b,
		       size_t tb)
{
	size_t i;

	if (a->nr_frames - ta != b->nr_frames - tb)
		return false;
	for (i = 1; ta + i < a->nr_frames; i++)
		if (a->frames[ta + i] != b->frames[tb + i] &&
		    strcmp(a->frames[ta + i], b->frames[tb + i]))
			return false;
	return true;
}

static int cmp_chain(const void *a, const void *b)
{
	const struct await_chain *x = a, *y = b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

/* One chain: the outer coroutine, then its innermost frames. */
static void print_chain(FILE *out, const struct await_chain *c)
{
	const struct flame_stack *st = c->st;
	size_t first = c->task + 1, n = st->nr_frames, i;

	/* the handler a framework calls is deep down, near the awaited call */
	for (i = first; i < n; i++) {
		if (n - first <= REPORT_AWAIT_WHOLE || i == first || n - i <= REPORT_AWAIT_INNER)
			fprintf(out, "%s%s", i > first ? " > " : "", st->frames[i]);
		else if (i == first + 1)
			fprintf(out, " > ...");
	}
	if (first >= n)
		fputc('?', out);
	fputc('\n', out);
}

/* Time the loops of processes with asyncio tasks waited in epoll, poll or select. */
static uint64_t loop_waits(const struct profile *p)
{
	static const char *const waits[] = {
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
	};
	struct sys_stats s = { 0 };
	uint64_t total = 0;
	size_t i, j;
	char key[64];

	if (sys_stats_load(p, &s))
		return 0;
	for (i = 0; i < s.nr; i++) {
		const char *v;

		snprintf(key, sizeof(key), "proc.%u.awaits", s.items[i].pid);
		v = profile_get_meta(p, key);
		if (!v || strcmp(v, "asyncio"))
			continue;
		for (j = 0; j < ARRAY_SIZE(waits); j++)
			if (!strcmp(s.items[i].name, waits[j]))
				total += s.items[i].total_ns;
	}
	free(s.items);
	return total;
}

/* The await chains of @p, heaviest first, into *@c (*@nc); *@f, *@order hold their stacks. */
static int await_chains(const struct report_opts *o, const struct profile *p,
			struct await_chain **c, size_t *nc, struct flame **f,
			const struct flame_stack ***order)
{
	struct profile_weight w;
	size_t i, j, n;
	int err;

	*c = NULL;
	*nc = 0;
	*f = NULL;
	*order = NULL;
	if (profile_type_index(p, PROFILE_TYPE_AWAIT) < 0 ||
	    profile_weight_get(p, PROFILE_TYPE_AWAIT, &w))
		return -ENOENT;
	err = report_sorted_stacks(o, p, &w, f, order, &n);
	if (err)
		return err;
	*c = calloc(REPORT_AWAIT_GROUPS, sizeof(**c));
	if (!*c)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t ti = task_frame((*order)[i]);

		for (j = 0; j < *nc && !same_chain((*c)[j].st, (*c)[j].task, (*order)[i], ti); j++)
			;
		if (j == *nc && *nc == REPORT_AWAIT_GROUPS)
			continue;
		if (j == *nc)
			(*c)[(*nc)++] = (struct await_chain){ .st = (*order)[i], .task = ti };
		(*c)[j].weight += (*order)[i]->weight;
		(*c)[j].names++;
	}
	array_sort(*c, *nc, sizeof(**c), cmp_chain);
	return 0;
}

static void chains_free(struct await_chain *c, struct flame *f, const struct flame_stack **order)
{
	free(c);
	free(order);
	flame_free(f);
}

int report_awaits(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct await_chain *c;
	const struct flame_stack **order;
	struct flame *f;
	size_t i, nc;
	char t[3][16];
	int err = await_chains(o, p, &c, &nc, &f, &order);

	if (err) {
		chains_free(c, f, order);
		return err == -ENOENT ? 0 : err;
	}
	report_fmt_ns(t[0], sizeof(t[0]), flame_total(f));
	report_fmt_ns(t[1], sizeof(t[1]), loop_waits(p));
	report_fmt_heading(out, o->color, "Awaits",
			   "(asyncio tasks suspended, summed over tasks; CPython 3.14+)");
	fprintf(out, "  %s awaited by tasks; their event loops waited %s in epoll/poll/select\n"
		"  meanwhile (the loop's wait is every task's at once; --weight await)\n",
		t[0], t[1]);
	fprintf(out, "     share    time  names  chain "
		"(outer coroutine > ... > innermost awaiting)\n");
	for (i = 0; i < nc && i < REPORT_AWAIT_CHAINS; i++) {
		report_fmt_ns(t[2], sizeof(t[2]), c[i].weight);
		fprintf(out, "  %7.1f%% %7s %6zu  ", report_fmt_pct(c[i].weight, flame_total(f)),
			t[2], c[i].names);
		print_chain(out, &c[i]);
	}
	chains_free(c, f, order);
	return 0;
}

int report_await_note(const struct report_opts *o, const struct profile *p, char **note)
{
	struct await_chain *c;
	const struct flame_stack **order;
	struct flame *f;
	size_t i, nc, len = 0;
	FILE *out;
	int err = await_chains(o, p, &c, &nc, &f, &order);

	*note = NULL;
	if (err) {
		chains_free(c, f, order);
		return err == -ENOENT ? 0 : err;
	}
	out = open_memstream(note, &len);
	if (!out) {
		chains_free(c, f, order);
		return -ENOMEM;
	}
	for (i = 0; i < nc && i < REPORT_AWAIT_NOTE; i++) {
		fprintf(out, "  %24s%s %.1f%% ", "", i ? "  " : "^ awaited meanwhile:",
			report_fmt_pct(c[i].weight, flame_total(f)));
		print_chain(out, &c[i]);
	}
	err = fclose(out) ? -ENOMEM : 0;
	chains_free(c, f, order);
	if (err) {
		free(*note);
		*note = NULL;
	}
	return err;
}
