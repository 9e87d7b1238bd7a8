// SPDX-License-Identifier: GPL-2.0-only
/* Timeline and memory sampling of `record`, interval by interval (intervals.h). */
#include "src/intervals.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "src/procmem.h"
#include "src/proctree.h"
#include "src/lib/util.h"

#define TICK_BUDGET_DIV 4	/* a tick's reads of /proc: a quarter of the interval */
#define PSS_BUDGET_DIV 100	/* smaps_rollup may take 1/100 of the time between reads */

int intervals_start(struct intervals *s, struct collect *col, uint64_t interval_ns,
		    uint64_t start_ns, bool has_cpu, bool has_syscalls)
{
	memset(s, 0, sizeof(*s));
	s->col = col;
	s->start_ns = start_ns;
	s->next_ns = start_ns + interval_ns;
	timeline_init(&s->tl, interval_ns, INTERVALS_MAX);
	s->tl.start_ns = start_ns;
	s->tl.has_cpu = has_cpu;
	s->tl.has_syscalls = has_syscalls;
	return collect_counters(col, &s->tl.last);
}

int intervals_wait_ms(const struct intervals *s, uint64_t now_ns, int max_ms)
{
	uint64_t ms;

	if (now_ns >= s->next_ns)
		return 0;
	ms = (s->next_ns - now_ns + 999999) / 1000000;
	return ms < (uint64_t)max_ms ? (int)ms : max_ms;
}

/* The PSS last read for @pi, or -1. */
static int64_t last_pss(const struct proc_info *pi)
{
	size_t i;

	for (i = pi->mem.nr; i > 0; i--)
		if (pi->mem.items[i - 1].pss_kb >= 0)
			return pi->mem.items[i - 1].pss_kb;
	return -1;
}

/* Read the memory of live process @pi; adds it to the interval's sums. */
static int sample_process(struct intervals *s, struct proc_info *pi, uint64_t now,
			  struct timeline_interval *iv)
{
	struct proc_tree *t = collect_procs(s->col);
	uint64_t rss = 0, pss = 0, cost = 0, gap;
	int64_t p = -1;
	int err = -1;

	if (now >= pi->pss_next_ns && s->pss_spent_ns < s->tl.interval_ns / PSS_BUDGET_DIV) {
		err = procmem_read_pss(pi->pid, &rss, &pss, &cost);
		s->pss_spent_ns += cost;
		gap = cost * PSS_BUDGET_DIV;
		pi->pss_next_ns = now + (gap > s->tl.interval_ns ? gap : 0);
		if (!err)
			p = pss;
	}
	if (err && procmem_read_rss(pi->pid, &rss))
		return 0;	/* gone, or a zombie: its exit event is on the way */
	iv->rss_kb += rss;
	iv->procs++;
	if (p < 0)
		p = last_pss(pi);
	if (p > 0)
		iv->pss_kb += p;
	return proc_tree_add_memory(t, pi, now, rss, err ? -1 : (int64_t)pss);
}

int intervals_tick(struct intervals *s, uint64_t tick_ns, bool force)
{
	struct proc_tree *t = collect_procs(s->col);
	struct timeline_interval iv = { 0 };
	struct timeline_counters cur;
	size_t i, n, next_cursor = SIZE_MAX;
	uint64_t started;
	int err;

	if (!force && tick_ns < s->next_ns)
		return 0;
	while (s->next_ns <= tick_ns)
		s->next_ns += s->tl.interval_ns;	/* doubles as intervals merge */
	err = collect_counters(s->col, &cur);
	started = now_ns();	/* the budget is the reads of /proc */
	/* many targets (-a): PSS goes round, starting where the budget ran out */
	s->pss_spent_ns = 0;
	if (s->pss_cursor >= t->procs.nr)
		s->pss_cursor = 0;
	for (n = 0; !err && n < t->procs.nr; n++) {
		i = (s->pss_cursor + n) % t->procs.nr;
		if (t->procs.items[i].ended)
			continue;
		if (s->pss_spent_ns >= s->tl.interval_ns / PSS_BUDGET_DIV && next_cursor == SIZE_MAX)
			next_cursor = i;
		/*
		 * A busy machine makes every read of /proc slow: past a
		 * quarter of the interval the others wait for the next tick
		 * (the interval's memory is of iv.procs processes), so the
		 * recording keeps its deadline.
		 */
		if (now_ns() - started > s->tl.interval_ns / TICK_BUDGET_DIV) {
			if (next_cursor == SIZE_MAX)
				next_cursor = i;
			break;
		}
		err = sample_process(s, &t->procs.items[i], tick_ns, &iv);
	}
	s->pss_cursor = next_cursor == SIZE_MAX ? 0 : next_cursor;
	if (!err)
		err = timeline_add(&s->tl, tick_ns - s->start_ns, &cur, &iv);
	pr_debug("timeline tick: %u processes, %.0f us (smaps_rollup %.0f us)", iv.procs,
		 (now_ns() - started) / 1e3, s->pss_spent_ns / 1e3);
	return err;
}

int intervals_store(struct intervals *s, struct profile *p)
{
	int err = timeline_store(&s->tl, p);

	return err ? err : proc_tree_store(collect_procs(s->col), p, s->start_ns);
}

void intervals_release(struct intervals *s)
{
	timeline_release(&s->tl);
}
