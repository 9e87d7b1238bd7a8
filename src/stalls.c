// SPDX-License-Identifier: GPL-2.0-only
/* The list of event-loop stalls in a profile (stalls.h). */
#include "src/stalls.h"

#include <errno.h>
#include <stdlib.h>

#include "src/metarecords.h"
#include "src/requests.h"
#include "src/lib/util.h"

#define STALLS_PREFIX "stalls"
#define STALLS_META_MIN "stalls.min_ns"
#define STALLS_META_COUNT "stalls.count"
#define STALLS_META_DROPPED "stalls.dropped"
#define STALL_FIELDS 5	/* pid, tid, start_ns, duration_ns, flags */

int stalls_add(struct stalls *s, const struct stall *st)
{
	if (array_grow(s, s->nr + 1))
		return -ENOMEM;
	s->items[s->nr++] = *st;
	return 0;
}

void stalls_release(struct stalls *s)
{
	free(s->items);
	*s = (struct stalls){ 0 };
}

static int cmp_start(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int stalls_store(struct profile *p, struct stalls *s, uint64_t min_ns, uint64_t dropped)
{
	uint64_t *v;
	size_t i;
	int err;

	array_sort(s->items, s->nr, sizeof(*s->items), cmp_start);
	err = profile_set_meta_u64(p, STALLS_META_MIN, min_ns);
	if (!err)
		err = profile_set_meta_u64(p, STALLS_META_COUNT, s->nr);
	if (!err)
		err = profile_set_meta_u64(p, STALLS_META_DROPPED, dropped);
	if (err || !s->nr)
		return err;
	v = calloc(s->nr, STALL_FIELDS * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		v[i * STALL_FIELDS] = s->items[i].pid;
		v[i * STALL_FIELDS + 1] = s->items[i].tid;
		v[i * STALL_FIELDS + 2] = s->items[i].start_ns;
		v[i * STALL_FIELDS + 3] = s->items[i].duration_ns;
		v[i * STALL_FIELDS + 4] = s->items[i].flags;
	}
	err = metarecords_store(p, STALLS_PREFIX, v, s->nr, STALL_FIELDS);
	free(v);
	return err;
}

static int load_one(void *arg, const uint64_t *v)
{
	struct stall st = { .pid = v[0], .tid = v[1], .start_ns = v[2], .duration_ns = v[3],
			    .flags = v[4] };

	if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[4] > UINT32_MAX)
		return 0;	/* not ours: skipped like any malformed record */
	return stalls_add(arg, &st);
}

int stalls_load(const struct profile *p, struct stalls *out, uint64_t *min_ns)
{
	if (!profile_get_meta(p, STALLS_META_MIN))
		return -ENOENT;
	*min_ns = profile_get_meta_u64(p, STALLS_META_MIN);
	return metarecords_each(p, STALLS_PREFIX, STALL_FIELDS, load_one, out);
}

int stalls_summarize(const struct stalls *s, struct stalls_summary *sum)
{
	uint64_t *d;
	size_t i;

	*sum = (struct stalls_summary){ .count = s->nr };
	if (!s->nr)
		return 0;
	d = malloc(s->nr * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		d[i] = s->items[i].duration_ns;
		sum->total_ns += d[i];
		sum->in_flight += !!(s->items[i].flags & STALL_IN_FLIGHT);
	}
	array_sort(d, s->nr, sizeof(*d), array_cmp_u64);
	/* the requests' quantiles, so that the two sections agree on what p99 is */
	sum->p50_ns = requests_quantile_ns(d, s->nr, 0.50);
	sum->p99_ns = requests_quantile_ns(d, s->nr, 0.99);
	sum->max_ns = d[s->nr - 1];
	free(d);
	return 0;
}
