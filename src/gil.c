// SPDX-License-Identifier: GPL-2.0-only
/* The GIL waits of Python threads in a profile (gil.h). */
#include "src/gil.h"

#include <errno.h>
#include <stdlib.h>

#include "src/metarecords.h"
#include "src/lib/util.h"

#define GIL_PREFIX "gil"
#define GIL_META_THREADS "gil.threads"
#define GIL_META_DROPPED "gil.dropped"
#define GIL_FIELDS 6	/* pid, tid, waits, wait_ns, cpu_ns, held_ns */

int gil_threads_add(struct gil_threads *g, const struct gil_thread *t)
{
	if (array_grow(g, g->nr + 1))
		return -ENOMEM;
	g->items[g->nr++] = *t;
	return 0;
}

void gil_threads_release(struct gil_threads *g)
{
	free(g->items);
	*g = (struct gil_threads){ 0 };
}

static int cmp_thread(const void *a, const void *b)
{
	const struct gil_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct gil_thread *x = a, *y = b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return cmp_thread(a, b);
}

void gil_sort_by_wait(struct gil_threads *g)
{
	array_sort(g->items, g->nr, sizeof(*g->items), cmp_wait);
}

int gil_store(struct profile *p, struct gil_threads *g, uint64_t dropped)
{
	uint64_t *v;
	size_t i;
	int err;

	if (!g->nr && !dropped)
		return 0;
	array_sort(g->items, g->nr, sizeof(*g->items), cmp_thread);
	err = profile_set_meta_u64(p, GIL_META_THREADS, g->nr);
	if (!err)
		err = profile_set_meta_u64(p, GIL_META_DROPPED, dropped);
	if (err || !g->nr)
		return err;
	v = calloc(g->nr, GIL_FIELDS * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < g->nr; i++) {
		uint64_t *r = v + i * GIL_FIELDS;

		r[0] = g->items[i].pid;
		r[1] = g->items[i].tid;
		r[2] = g->items[i].waits;
		r[3] = g->items[i].wait_ns;
		r[4] = g->items[i].cpu_ns;
		r[5] = g->items[i].held_ns;
	}
	err = metarecords_store(p, GIL_PREFIX, v, g->nr, GIL_FIELDS);
	free(v);
	return err;
}

static int load_one(void *arg, const uint64_t *v)
{
	struct gil_thread t = {
		.pid = v[0], .tid = v[1], .waits = v[2], .wait_ns = v[3], .cpu_ns = v[4],
		.held_ns = v[5],
	};

	if (v[0] > UINT32_MAX || v[1] > UINT32_MAX)
		return 0;	/* not ours: skipped like any malformed record */
	return gil_threads_add(arg, &t);
}

int gil_load(const struct profile *p, struct gil_threads *out)
{
	if (!profile_get_meta(p, GIL_META_THREADS))
		return -ENOENT;
	return metarecords_each(p, GIL_PREFIX, GIL_FIELDS, load_one, out);
}

uint64_t gil_wait_ns(const struct gil_threads *g, uint32_t pid)
{
	uint64_t ns = 0;
	size_t i;

	for (i = 0; i < g->nr; i++)
		if (!pid || g->items[i].pid == pid)
			ns += g->items[i].wait_ns;
	return ns;
}
