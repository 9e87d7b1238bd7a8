// SPDX-License-Identifier: GPL-2.0-only
/* Functions and slow call sites of a profile, as tables (hotspots.h). */
#include "src/hotspots.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/stacks.h"
#include "src/syscalls.h"
#include "src/lib/util.h"

bool hot_keeps(const struct hot_filter *f, const struct profile_sample *s)
{
	const struct profile_label *pid;

	if (!f || (!f->pid && !f->pids))
		return true;
	pid = profile_sample_label(s, PROFILE_LABEL_PID);
	if (!pid || pid->str)
		return false;
	return (!f->pid || (uint64_t)pid->num == f->pid) &&
	       (!f->pids || hashmap_get(f->pids, NULL, pid->num, 0));
}

struct hot_func *hot_funcs_find(const struct hot_funcs *t, const char *name)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&t->idx, name, 0, 0));

	return i ? &t->items[i - 1] : NULL;
}

struct hot_func *hot_funcs_get(struct hot_funcs *t, const char *name)
{
	struct hot_func *fs = hot_funcs_find(t, name);

	if (fs)
		return fs;
	if (array_grow(t, t->nr + 1) || hashmap_put(&t->idx, name, 0, 0, HASHMAP_NUM(t->nr + 1)))
		return NULL;
	t->items[t->nr] = (struct hot_func){ .name = name, .last_sample = SIZE_MAX };
	return &t->items[t->nr++];
}

int hot_funcs_add(struct hot_funcs *t, const char *name, size_t sample, int64_t v, bool self)
{
	struct hot_func *fs = hot_funcs_get(t, name);

	if (!fs)
		return -ENOMEM;
	/* a sample numbers the functions it met: one total per recursion */
	if (fs->last_sample != sample)
		fs->total += v;
	fs->last_sample = sample;
	if (self)
		fs->self += v;
	return 0;
}

int hot_funcs_count(const struct profile *p, const struct profile_weight *w,
		    const struct hot_filter *f, struct strtab *names, struct hot_funcs *t)
{
	unsigned int flags = STACKS_FLAG_NO_COMM | w->stack_flags | (f ? f->stack_flags : 0);
	struct stack_names st = { 0 };
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		int64_t v = profile_weight_of(w, s);

		if (v <= 0 || !hot_keeps(f, s))
			continue;
		err = stack_names_of(p, s, flags, names, &st);
		for (j = 0; !err && j < st.nr; j++)
			err = hot_funcs_add(t, st.items[j], i, v, j == st.nr - 1);
	}
	free(st.items);
	return err;
}

static int cmp_self(const void *a, const void *b)
{
	const struct hot_func *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

void hot_funcs_sort(struct hot_funcs *t)
{
	array_sort(t->items, t->nr, sizeof(*t->items), cmp_self);
	hashmap_release(&t->idx);
}

void hot_funcs_release(struct hot_funcs *t)
{
	free(t->items);
	hashmap_release(&t->idx);
	*t = (struct hot_funcs){ 0 };
}

static int cmp_site(const void *a, const void *b)
{
	const struct hot_site *x = a, *y = b;

	if (x->wait != y->wait)
		return x->wait > y->wait ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * "syscall:read\tmain;wait_on_pipe;read": the syscall, then the innermost
 * user frames of @st, as many of HOT_SITE_FRAMES as fit in HOT_SITE_WIDTH.
 * With @python, a stack with Python frames ends at the frame below its
 * innermost one, the C function it called ("outer (s.py);inner
 * (s.py);time_sleep"): the frames below that say how the C function reached
 * the kernel, the Python ones which line of the program waited.
 */
static void site_name(const struct stack_names *st, bool python, char *buf, size_t size)
{
	const char *sys = "syscall:?";
	size_t n = st->nr, first, len = 0, i;

	if (n && !strncmp(st->items[n - 1], "syscall:", 8))
		sys = st->items[--n];
	if (python && st->python_leaf && st->python_leaf < n)
		n = st->python_leaf + 1;
	first = n;
	while (first > 0 && n - first < HOT_SITE_FRAMES &&
	       len + strlen(st->items[first - 1]) + 1 <= HOT_SITE_WIDTH) {
		first--;
		len += strlen(st->items[first]) + 1;
	}
	if (first == n && n)	/* one frame longer than the width: show it cut */
		first--;
	/* the Python function is named even when the line is then cut */
	if (python && st->python_leaf && first >= st->python_leaf)
		first = st->python_leaf - 1;
	len = snprintf(buf, size, "%s\t", sys);
	for (i = first; i < n && len + 1 < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i > first ? ";" : "", st->items[i]);
}

struct hot_site *hot_sites_find(const struct hot_sites *t, const char *name)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&t->idx, name, 0, 0));

	return i ? &t->items[i - 1] : NULL;
}

struct hot_site *hot_sites_get(struct hot_sites *t, const char *name, enum hot_wait wait)
{
	struct hot_site *s = hot_sites_find(t, name);

	if (s)
		return s;
	if (array_grow(t, t->nr + 1) || hashmap_put(&t->idx, name, 0, 0, HASHMAP_NUM(t->nr + 1)))
		return NULL;
	t->items[t->nr] = (struct hot_site){ .name = name, .wait = wait };
	return &t->items[t->nr++];
}

/* The group of a sample by its "wait" label (none: on the path, as before it existed). */
static enum hot_wait site_wait_of(const struct profile_label *wait)
{
	if (!wait || !wait->str)
		return HOT_WAIT_PATH;
	if (!strcmp(wait->str, SYSCALL_WAIT_IDLE))
		return HOT_WAIT_IDLE;
	return strcmp(wait->str, SYSCALL_WAIT_READY) ? HOT_WAIT_PATH : HOT_WAIT_READY;
}

/* Add a sample's "latency_hist" label @l (NULL: none) to @site's histogram. */
static void sites_hist_add(struct hot_site *site, const struct profile_label *l)
{
	struct sys_stat h = { 0 };
	unsigned int i;

	if (!l || !l->str || sys_hist_parse(l->str, &h))
		return;
	for (i = 0; i < SYS_HIST_SLOTS; i++) {
		site->hist.count += h.hist[i];
		site->hist.total_ns += h.hist_ns[i];
	}
	sys_stat_merge(&site->hist, &h);
}

int hot_sites_collect(const struct profile *p, int lat, int calls, const struct hot_filter *f,
		      struct strtab *names, struct hot_sites *t)
{
	unsigned int flags = f ? f->stack_flags : 0;
	struct stack_names st = { 0 };
	char buf[512];
	enum hot_wait w;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		const struct profile_label *max = profile_sample_label(s, PROFILE_LABEL_MAX_NS);
		const struct profile_label *wait = profile_sample_label(s, SYSCALL_WAIT_LABEL);
		struct hot_site *site;

		if (s->values[lat] <= 0 || !hot_keeps(f, s))
			continue;
		err = stack_names_of(p, s, STACKS_FLAG_NO_COMM | STACKS_FLAG_SYSCALL_LEAF |
				     STACKS_FLAG_PROGRAM_ONLY | flags, names, &st);
		if (err)
			break;
		/* one site per group: an event loop's wait is on the path or idle */
		w = site_wait_of(wait);
		buf[0] = '0' + w;
		site_name(&st, !(flags & STACKS_FLAG_NATIVE), buf + 1, sizeof(buf) - 1);
		site = hot_sites_get(t, strtab_intern(names, buf), w);
		if (!site || !site->name) {
			err = -ENOMEM;
			break;
		}
		site->total_ns += s->values[lat];
		site->calls += calls >= 0 && s->values[calls] > 0 ? s->values[calls] : 0;
		if (max && !max->str && (uint64_t)max->num > site->max_ns)
			site->max_ns = max->num;
		sites_hist_add(site, profile_sample_label(s, PROFILE_LABEL_LATENCY_HIST));
	}
	free(st.items);
	return err;
}

void hot_sites_sort(struct hot_sites *t)
{
	array_sort(t->items, t->nr, sizeof(*t->items), cmp_site);
	hashmap_release(&t->idx);
}

void hot_sites_release(struct hot_sites *t)
{
	free(t->items);
	hashmap_release(&t->idx);
	*t = (struct hot_sites){ 0 };
}
