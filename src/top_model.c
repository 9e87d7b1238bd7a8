// SPDX-License-Identifier: GPL-2.0-only
/* The views of `latprof top` from two looks at a session (top_model.h). */
#include "src/top_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/stacks.h"
#include "src/lib/util.h"

/* Names a zoom gives the frames around its function when there is none. */
#define TOP_ZOOM_ROOT "(the process)"
#define TOP_ZOOM_SELF "(self)"

int top_model_init(struct top_model *m, unsigned int stack_flags)
{
	memset(m, 0, sizeof(*m));
	m->filter.stack_flags = stack_flags;
	m->names = strtab_new();
	return m->names ? 0 : -ENOMEM;
}

void top_model_release(struct top_model *m)
{
	profile_free(m->prev);
	profile_free(m->cur);
	free(m->prev_sys.items);
	free(m->cur_sys.items);
	free(m->funcs.items);
	free(m->callers.items);
	free(m->callees.items);
	free(m->sites.items);
	free(m->sys.items);
	free(m->procs.items);
	hot_funcs_release(&m->all_funcs);
	hot_funcs_release(&m->all_zoom_funcs[0]);
	hot_funcs_release(&m->all_zoom_funcs[1]);
	hot_sites_release(&m->all_sites);
	strtab_free(m->names);
	memset(m, 0, sizeof(*m));
}

void top_model_push(struct top_model *m, struct profile *p, struct sys_stats *sys,
		    uint64_t elapsed_ns)
{
	profile_free(m->prev);
	free(m->prev_sys.items);
	m->prev = m->cur;
	m->prev_sys = m->cur_sys;
	m->cur = p;
	m->cur_sys = (struct sys_stats){ 0 };
	if (sys) {
		m->cur_sys = *sys;
		*sys = (struct sys_stats){ 0 };
	} else if (p && sys_stats_load(p, &m->cur_sys)) {
		free(m->cur_sys.items);
		m->cur_sys = (struct sys_stats){ 0 };
		m->sys_failed = true;
	}
	m->hdr.interval_ns = elapsed_ns - m->hdr.elapsed_ns;
	m->hdr.elapsed_ns = elapsed_ns;
	m->pushed = true;
}

/* The CPU weight of @p, false when it has none (no --mode cpu). */
static bool cpu_weight(const struct profile *p, struct profile_weight *w)
{
	return p && profile_type_index(p, PROFILE_TYPE_CPU) >= 0 &&
	       !profile_weight_get(p, "cpu-time", w);
}

/* A sample's values summed over the columns: it grows whenever the sample does. */
static uint64_t sample_sum(const struct profile *p, const struct profile_sample *s)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < p->types.nr; i++)
		if (s->values[i] > 0)
			sum += s->values[i];
	return sum;
}

/* Add the sums of look @p's samples per pid into @h (value: sum + 1), @sign -1 subtracts. */
static int pid_sums(const struct profile *p, struct hashmap *h, int sign)
{
	size_t i;

	for (i = 0; p && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		const struct profile_label *pid = profile_sample_label(s, PROFILE_LABEL_PID);
		uint64_t v = HASHMAP_TO_NUM(hashmap_get(h, NULL, pid ? pid->num : 0, 0));

		v = (v ? v : 1) + sign * sample_sum(p, s);
		if (hashmap_put(h, NULL, pid ? pid->num : 0, 0, HASHMAP_NUM(v ? v : 1)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The processes whose samples changed between the two looks, into
 * @active (pid -> 1): the others' part of the interval is nothing, and
 * their part since the start is what it was. Samples only grow, so a
 * process whose sums are the same in both looks has not changed; one the
 * newer look left out (it ended long ago) has not changed either.
 */
static int active_pids(const struct top_model *m, struct hashmap *active)
{
	struct hashmap now = { 0 }, sums = { 0 };
	size_t i;
	int err = pid_sums(m->cur, &now, 1);

	if (!err)
		err = pid_sums(m->cur, &sums, 1);
	if (!err)
		err = pid_sums(m->prev, &sums, -1);
	for (i = 0; !err && i < sums.nr_slots; i++)
		if (sums.slots[i].value && HASHMAP_TO_NUM(sums.slots[i].value) != 1 &&
		    hashmap_get(&now, NULL, sums.slots[i].a, 0))
			err = hashmap_put(active, NULL, sums.slots[i].a, 0, HASHMAP_NUM(1));
	hashmap_release(&now);
	hashmap_release(&sums);
	return err;
}

/*
 * What grew between two looks, 0 when it shrank: a look symbolizes again,
 * and a frame of a process met again under a better name (a JIT's perf
 * map read anew, a process snapshotted late) leaves its old name's row.
 */
static uint64_t grew(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* Add @now - @before (NULL: none) of every function into @all. */
static int funcs_accumulate(struct hot_funcs *all, const struct hot_funcs *now,
			    const struct hot_funcs *before)
{
	size_t i;

	for (i = 0; i < now->nr; i++) {
		const struct hot_func *a = &now->items[i];
		const struct hot_func *b = before ? hot_funcs_find(before, a->name) : NULL;
		struct hot_func *to = hot_funcs_get(all, a->name);

		if (!to)
			return -ENOMEM;
		to->self += grew(a->self, b ? b->self : 0);
		to->total += grew(a->total, b ? b->total : 0);
	}
	return 0;
}

#define TOP_DELTA(now, before, name, field) \
	grew((now) ? (now)->field : 0, (before) ? (before)->field : 0)

/*
 * The rows: every function of @all (since the start), its interval values
 * @now - @before (the changed processes' tables of both looks).
 */
static int funcs_rows(const struct hot_funcs *all, const struct hot_funcs *now,
		      const struct hot_funcs *before, void *rows)
{
	struct { struct top_func *items; size_t nr, alloc; } *out = rows;
	size_t i;

	out->nr = 0;
	if (array_grow(out, all->nr))
		return -ENOMEM;
	for (i = 0; i < all->nr; i++) {
		const struct hot_func *a = &all->items[i];
		const struct hot_func *n = hot_funcs_find(now, a->name);
		const struct hot_func *b = before ? hot_funcs_find(before, a->name) : NULL;

		out->items[out->nr++] = (struct top_func){
			.name = a->name,
			.self = TOP_DELTA(n, b, a->name, self),
			.total = TOP_DELTA(n, b, a->name, total),
			.self_all = a->self,
			.total_all = a->total,
		};
	}
	return 0;
}

/* The callers and callees of m->zoom in the samples of look @p that @f keeps. */
static int zoom_count(struct top_model *m, const struct profile *p, const struct hot_filter *f,
		      struct hot_funcs *callers, struct hot_funcs *callees)
{
	const char *root = strtab_intern(m->names, TOP_ZOOM_ROOT);
	const char *self = strtab_intern(m->names, TOP_ZOOM_SELF);
	struct stack_names st = { 0 };
	struct profile_weight w;
	size_t i, j;
	int err = 0;

	if (!root || !self)
		return -ENOMEM;
	if (!cpu_weight(p, &w))
		return 0;
	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		int64_t v = profile_weight_of(&w, s);

		if (v <= 0 || !hot_keeps(f, s))
			continue;
		err = stack_names_of(p, s, STACKS_FLAG_NO_COMM | w.stack_flags | f->stack_flags,
				     m->names, &st);
		for (j = 0; !err && j < st.nr; j++) {
			if (st.items[j] != m->zoom)
				continue;
			err = hot_funcs_add(callers, j ? st.items[j - 1] : root, i, v, false);
			if (!err)
				err = hot_funcs_add(callees, j + 1 < st.nr ? st.items[j + 1] : self, i,
						    v, false);
		}
	}
	free(st.items);
	return err;
}

/* The functions (@zoom: the zoom's callers and callees) of look @p that @f keeps. */
static int funcs_count(struct top_model *m, const struct profile *p, const struct hot_filter *f,
		       bool zoom, struct hot_funcs t[2])
{
	struct profile_weight w;

	if (!p)
		return 0;
	if (zoom)
		return m->zoom ? zoom_count(m, p, f, &t[0], &t[1]) : 0;
	return cpu_weight(p, &w) ? hot_funcs_count(p, &w, f, m->names, &t[0]) : 0;
}

/*
 * One function table and its rows (@zoom: the two of the zoom): the last
 * interval from the changed processes of both looks, since the start
 * added to (or, @full, counted again from the newer look).
 */
static int compute_funcs_of(struct top_model *m, const struct hashmap *active, bool full,
			    bool zoom)
{
	struct hot_funcs now[2] = { { 0 } }, before[2] = { { 0 } };
	struct hot_funcs *all = zoom ? m->all_zoom_funcs : &m->all_funcs;
	struct hot_filter f = m->filter;
	int err, i;

	f.pids = m->prev ? active : NULL;
	err = funcs_count(m, m->prev, &f, zoom, before);
	if (!err)
		err = funcs_count(m, m->cur, &f, zoom, now);
	for (i = 0; !err && i < 1 + zoom; i++) {
		if (full) {
			hot_funcs_release(&all[i]);
		} else if (m->pushed) {
			err = funcs_accumulate(&all[i], &now[i], m->prev ? &before[i] : NULL);
		}
	}
	if (!err && full)
		err = funcs_count(m, m->cur, &m->filter, zoom, all);
	if (!err && zoom) {
		err = funcs_rows(&all[0], &now[0], m->prev ? &before[0] : NULL, &m->callers);
		if (!err)
			err = funcs_rows(&all[1], &now[1], m->prev ? &before[1] : NULL, &m->callees);
	} else if (!err) {
		err = funcs_rows(&all[0], &now[0], m->prev ? &before[0] : NULL, &m->funcs);
	}
	for (i = 0; i < 2; i++) {
		hot_funcs_release(&now[i]);
		hot_funcs_release(&before[i]);
	}
	return err;
}

/* The slow call sites of look @p that @f keeps (none without the syscall collector). */
static int sites_of(struct top_model *m, const struct profile *p, const struct hot_filter *f,
		    struct hot_sites *t)
{
	int lat = p ? profile_type_index(p, PROFILE_TYPE_LATENCY) : -1;

	if (lat < 0)
		return 0;
	return hot_sites_collect(p, lat, profile_type_index(p, PROFILE_TYPE_SYSCALLS), f,
				 m->names, t);
}

/* The calls of @a's histogram less @b's (NULL: none) into @d. */
static void hist_delta(struct sys_stat *d, const struct hot_site *a, const struct hot_site *b)
{
	*d = a->hist;
	if (b)
		sys_stat_sub(d, &b->hist);
}

/* The sites, as compute_funcs_of the functions. */
static int compute_sites(struct top_model *m, const struct hashmap *active, bool full)
{
	struct hot_sites now = { 0 }, before = { 0 }, *all = &m->all_sites;
	struct hot_filter f = m->filter;
	const struct hot_site *a, *n, *b;
	struct sys_stat d;
	struct hot_site *to;
	size_t i;
	int err;

	f.pids = m->prev ? active : NULL;
	err = sites_of(m, m->prev, &f, &before);
	if (!err)
		err = sites_of(m, m->cur, &f, &now);
	if (!err && full) {
		hot_sites_release(all);
		err = sites_of(m, m->cur, &m->filter, all);
	}
	for (i = 0; !err && !full && m->pushed && i < now.nr; i++) {
		a = &now.items[i];
		b = hot_sites_find(&before, a->name);
		to = hot_sites_get(all, a->name, a->wait);
		if (!to) {
			err = -ENOMEM;
			break;
		}
		to->calls += grew(a->calls, b ? b->calls : 0);
		to->total_ns += grew(a->total_ns, b ? b->total_ns : 0);
		if (a->max_ns > to->max_ns)
			to->max_ns = a->max_ns;
		hist_delta(&d, a, b);
		sys_stat_merge(&to->hist, &d);
	}
	m->sites.nr = 0;
	if (!err && array_grow(&m->sites, all->nr))
		err = -ENOMEM;
	for (i = 0; !err && i < all->nr; i++) {
		a = &all->items[i];
		n = hot_sites_find(&now, a->name);
		b = hot_sites_find(&before, a->name);
		d = (struct sys_stat){ 0 };
		if (n)
			hist_delta(&d, n, b);
		d.max_ns = a->max_ns;	/* a bucket's mean stays below the longest call */
		m->sites.items[m->sites.nr++] = (struct top_site){
			.p99_ns = d.count ? sys_stat_quantile_ns(&d, 0.99) : 0,
			.name = a->name, .wait = a->wait,
			.calls = TOP_DELTA(n, b, a->name, calls),
			.ns = TOP_DELTA(n, b, a->name, total_ns),
			.calls_all = a->calls, .ns_all = a->total_ns, .max_ns = a->max_ns,
		};
	}
	hot_sites_release(&now);
	hot_sites_release(&before);
	return err;
}

/*
 * The syscall statistics @all of a look summed by name over the processes
 * the filter keeps, into @out with index @idx (interned name -> index + 1).
 */
static int sys_by_name(struct top_model *m, const struct sys_stats *all, struct sys_stats *out,
		       struct hashmap *idx)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < all->nr; i++) {
		const struct sys_stat *s = &all->items[i];
		const char *name = strtab_intern(m->names, s->name);
		uint64_t at;

		if (m->filter.pid && s->pid != m->filter.pid)
			continue;
		if (!name) {
			err = -ENOMEM;
			break;
		}
		at = HASHMAP_TO_NUM(hashmap_get(idx, name, 0, 0));
		if (!at) {
			if (array_grow(out, out->nr + 1) ||
			    hashmap_put(idx, name, 0, 0, HASHMAP_NUM(out->nr + 1))) {
				err = -ENOMEM;
				break;
			}
			out->items[out->nr] = (struct sys_stat){ 0 };
			strcpy(out->items[out->nr].name, s->name);
			at = ++out->nr;
		}
		sys_stat_merge(&out->items[at - 1], s);
	}
	return err;
}

static int compute_sys(struct top_model *m)
{
	struct sys_stats now = { 0 }, before = { 0 };
	struct hashmap now_idx = { 0 }, before_idx = { 0 };
	size_t i;
	int err = m->sys_failed ? -ENOMEM : sys_by_name(m, &m->prev_sys, &before, &before_idx);

	m->sys.nr = 0;
	m->sys_failed = false;
	if (!err)
		err = sys_by_name(m, &m->cur_sys, &now, &now_idx);
	if (!err && array_grow(&m->sys, now.nr))
		err = -ENOMEM;
	for (i = 0; !err && i < now.nr; i++) {
		struct sys_stat d = now.items[i];
		uint64_t at = HASHMAP_TO_NUM(hashmap_get(&before_idx,
							 strtab_intern(m->names, d.name), 0, 0));
		struct top_sys *row = &m->sys.items[m->sys.nr++];

		/* the interval's calls: the histograms subtract like the counts */
		if (at)
			sys_stat_sub(&d, &before.items[at - 1]);
		*row = (struct top_sys){
			.calls = d.count, .errors = d.errors, .ns = d.total_ns,
			.p50_ns = sys_stat_quantile_ns(&d, 0.5),
			.p99_ns = sys_stat_quantile_ns(&d, 0.99),
			.max_ns = now.items[i].max_ns,
			.calls_all = now.items[i].count, .errors_all = now.items[i].errors,
			.ns_all = now.items[i].total_ns,
		};
		strcpy(row->name, d.name);
	}
	free(now.items);
	free(before.items);
	hashmap_release(&now_idx);
	hashmap_release(&before_idx);
	return err;
}

/* Add the CPU of look @p per process into m->procs (@sign -1: take it away). */
static int procs_add(struct top_model *m, const struct profile *p, struct hashmap *idx, int sign)
{
	struct profile_weight w;
	size_t i;

	if (!cpu_weight(p, &w))
		return 0;
	for (i = 0; i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		const struct profile_label *pid = profile_sample_label(s, PROFILE_LABEL_PID);
		const struct profile_label *comm = profile_sample_label(s, PROFILE_LABEL_COMM);
		int64_t v = profile_weight_of(&w, s);
		uint64_t at;

		if (v <= 0 || !pid || pid->str)
			continue;
		at = HASHMAP_TO_NUM(hashmap_get(idx, NULL, pid->num, 0));
		if (!at && sign < 0)
			continue;
		if (!at) {
			if (array_grow(&m->procs, m->procs.nr + 1) ||
			    hashmap_put(idx, NULL, pid->num, 0, HASHMAP_NUM(m->procs.nr + 1)))
				return -ENOMEM;
			m->procs.items[m->procs.nr] = (struct top_proc){
				.pid = pid->num,
				.comm = strtab_intern(m->names, comm && comm->str ? comm->str : ""),
			};
			at = ++m->procs.nr;
		}
		m->procs.items[at - 1].cpu_ns += sign * v;
	}
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct top_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The header's sums over what the filter keeps, and the processes by pid. */
static int compute_header(struct top_model *m)
{
	struct hashmap idx = { 0 };
	uint64_t period = m->cur && m->cur->period > 0 ? m->cur->period : 0;
	size_t i;
	int err;

	m->procs.nr = 0;
	err = procs_add(m, m->cur, &idx, 1);
	if (!err)
		err = procs_add(m, m->prev, &idx, -1);
	hashmap_release(&idx);
	array_sort(m->procs.items, m->procs.nr, sizeof(*m->procs.items), cmp_proc);
	m->hdr.cpu_ns = 0;
	for (i = 0; i < m->procs.nr; i++)
		if (!m->filter.pid || m->procs.items[i].pid == m->filter.pid)
			m->hdr.cpu_ns += m->procs.items[i].cpu_ns;
	m->hdr.have_cpu = m->cur && profile_type_index(m->cur, PROFILE_TYPE_CPU) >= 0;
	m->hdr.have_syscalls = m->cur && profile_type_index(m->cur, PROFILE_TYPE_LATENCY) >= 0;
	m->hdr.samples = period ? m->hdr.cpu_ns / period : 0;
	return err;
}

int top_model_compute(struct top_model *m)
{
	/* since the start is counted again when what it counts changed */
	bool full = !m->all_valid || m->all_pid != m->filter.pid;
	bool full_zoom = full || m->all_zoom != m->zoom;
	struct hashmap active = { 0 };
	size_t i;
	int err = active_pids(m, &active);

	if (!err)
		err = compute_header(m);
	for (i = 0; i < m->procs.nr; i++)
		m->procs.items[i].active = hashmap_get(&active, NULL, m->procs.items[i].pid, 0);
	if (!err)
		err = compute_funcs_of(m, &active, full, false);
	if (!err)
		err = compute_funcs_of(m, &active, full_zoom, true);
	if (!err)
		err = compute_sites(m, &active, full);
	if (!err)
		err = compute_sys(m);
	hashmap_release(&active);
	/* a failure leaves since the start to be counted again */
	m->all_valid = !err;
	m->all_pid = m->filter.pid;
	m->all_zoom = m->zoom;
	m->pushed = false;
	return err;
}

/* The sort key of each view, by top_sort; rows compare by it, then by name. */
struct sort_arg {
	enum top_view view;
	enum top_sort sort;
};

static uint64_t func_key(const struct top_func *f, enum top_sort s)
{
	return s == TOP_SORT_NOW ? f->self : s == TOP_SORT_TOTAL ? f->total : f->total_all;
}

static int cmp_func(const void *a, const void *b, void *arg)
{
	const struct top_func *x = a, *y = b;
	const struct sort_arg *s = arg;
	uint64_t kx = func_key(x, s->sort), ky = func_key(y, s->sort);

	if (s->sort != TOP_SORT_NAME && kx != ky)
		return kx < ky ? 1 : -1;
	/* then what ran in the interval before what ran only earlier */
	if (s->sort != TOP_SORT_NAME && x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (s->sort != TOP_SORT_NAME && x->total_all != y->total_all)
		return x->total_all < y->total_all ? 1 : -1;
	return strcmp(x->name, y->name);
}

static uint64_t site_key(const struct top_site *t, enum top_sort s)
{
	return s == TOP_SORT_NOW ? t->ns : s == TOP_SORT_TOTAL ? t->calls : t->ns_all;
}

/* Sites stay in their groups: path of work, readiness, idle. */
static int cmp_site(const void *a, const void *b, void *arg)
{
	const struct top_site *x = a, *y = b;
	const struct sort_arg *s = arg;
	uint64_t kx = site_key(x, s->sort), ky = site_key(y, s->sort);

	if (x->wait != y->wait)
		return x->wait > y->wait ? 1 : -1;
	if (s->sort != TOP_SORT_NAME && kx != ky)
		return kx < ky ? 1 : -1;
	if (s->sort != TOP_SORT_NAME && x->ns_all != y->ns_all)
		return x->ns_all < y->ns_all ? 1 : -1;
	return strcmp(x->name, y->name);
}

static uint64_t sys_key(const struct top_sys *t, enum top_sort s)
{
	return s == TOP_SORT_NOW ? t->ns : s == TOP_SORT_TOTAL ? t->calls : t->calls_all;
}

static int cmp_sys(const void *a, const void *b, void *arg)
{
	const struct top_sys *x = a, *y = b;
	const struct sort_arg *s = arg;
	uint64_t kx = sys_key(x, s->sort), ky = sys_key(y, s->sort);

	if (s->sort != TOP_SORT_NAME && kx != ky)
		return kx < ky ? 1 : -1;
	if (s->sort != TOP_SORT_NAME && x->calls_all != y->calls_all)
		return x->calls_all < y->calls_all ? 1 : -1;
	return strcmp(x->name, y->name);
}

void top_model_sort(struct top_model *m, enum top_view view, enum top_sort sort)
{
	struct sort_arg a = { .view = view, .sort = sort };
	struct sort_arg zoom = { .view = view, .sort = sort == TOP_SORT_NAME ? sort : TOP_SORT_TOTAL };

	switch (view) {
	case TOP_VIEW_FUNCS:
		array_sort_r(m->funcs.items, m->funcs.nr, sizeof(*m->funcs.items), cmp_func, &a);
		/* a caller's or callee's own time means nothing: they go by total */
		array_sort_r(m->callers.items, m->callers.nr, sizeof(*m->callers.items), cmp_func,
			     &zoom);
		array_sort_r(m->callees.items, m->callees.nr, sizeof(*m->callees.items), cmp_func,
			     &zoom);
		break;
	case TOP_VIEW_WAITS:
		array_sort_r(m->sites.items, m->sites.nr, sizeof(*m->sites.items), cmp_site, &a);
		break;
	case TOP_VIEW_SYSCALLS:
		array_sort_r(m->sys.items, m->sys.nr, sizeof(*m->sys.items), cmp_sys, &a);
		break;
	default:
		break;
	}
}
