// SPDX-License-Identifier: GPL-2.0-only
/* Per-interval activity of a recording and its metadata encoding (timeline.h). */
#include "src/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

#define META_PREFIX "timeline."

static const char *const series_names[TIMELINE_SERIES_NR] = {
	[TIMELINE_SERIES_CPU] = "cpu",
	[TIMELINE_SERIES_FILE] = "file",
	[TIMELINE_SERIES_NETWORK] = "network",
	[TIMELINE_SERIES_SYNC] = "sync",
	[TIMELINE_SERIES_GIL] = "gil",
	[TIMELINE_SERIES_SLEEP] = "sleep",
	[TIMELINE_SERIES_OTHER] = "other",
};

const char *timeline_series_name(enum timeline_series s)
{
	return s < TIMELINE_SERIES_NR ? series_names[s] : "other";
}

bool timeline_has(const struct timeline *tl, enum timeline_series s)
{
	size_t i;

	for (i = 0; s < TIMELINE_SERIES_NR && i < tl->items.nr; i++)
		if (tl->items.items[i].ns[s])
			return true;
	return false;
}

void timeline_init(struct timeline *tl, uint64_t interval_ns, size_t max_intervals)
{
	memset(tl, 0, sizeof(*tl));
	tl->interval_ns = interval_ns;
	tl->max_intervals = max_intervals;
}

void timeline_release(struct timeline *tl)
{
	free(tl->items.items);
	timeline_init(tl, tl->interval_ns, tl->max_intervals);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void timeline_counters_delta(const struct timeline_counters *prev,
			     const struct timeline_counters *cur, struct timeline_counters *d)
{
	int i;

	for (i = 0; i < TIMELINE_SERIES_NR; i++)
		d->ns[i] = sub0(cur->ns[i], prev->ns[i]);
	d->opens = sub0(cur->opens, prev->opens);
}

/* Merge neighbours in pairs: half as many intervals, each twice as long. */
static void timeline_coarsen(struct timeline *tl)
{
	struct timeline_interval *v = tl->items.items;
	size_t i, n = tl->items.nr;
	int s;

	for (i = 0; i + 1 < n; i += 2) {
		struct timeline_interval m = v[i + 1];	/* memory and procs: at the end */

		m.start_ns = v[i].start_ns;
		m.duration_ns += v[i].duration_ns;
		for (s = 0; s < TIMELINE_SERIES_NR; s++)
			m.ns[s] += v[i].ns[s];
		m.opens += v[i].opens;
		if (!m.pss_kb)
			m.pss_kb = v[i].pss_kb;
		v[i / 2] = m;
	}
	if (n % 2)
		v[n / 2] = v[n - 1];
	tl->items.nr = (n + 1) / 2;
	tl->interval_ns *= 2;
}

int timeline_add(struct timeline *tl, uint64_t end_ns, const struct timeline_counters *cur,
		 const struct timeline_interval *iv)
{
	const struct timeline_interval *last = tl->items.nr ?
		&tl->items.items[tl->items.nr - 1] : NULL;
	uint64_t start = last ? last->start_ns + last->duration_ns : 0;
	struct timeline_counters d;
	struct timeline_interval *n;
	int s;

	if (end_ns <= start)
		return 0;
	if (tl->max_intervals && tl->items.nr >= tl->max_intervals)
		timeline_coarsen(tl);
	if (array_grow(&tl->items, tl->items.nr + 1))
		return -ENOMEM;
	timeline_counters_delta(&tl->last, cur, &d);
	n = &tl->items.items[tl->items.nr++];
	*n = *iv;
	n->start_ns = start;
	n->duration_ns = end_ns - start;
	for (s = 0; s < TIMELINE_SERIES_NR; s++)
		n->ns[s] = d.ns[s];
	n->opens = d.opens;
	tl->last = *cur;
	return 0;
}

long timeline_find(const struct timeline *tl, uint64_t t_ns)
{
	size_t i;

	for (i = 0; i < tl->items.nr; i++) {
		const struct timeline_interval *v = &tl->items.items[i];

		if (t_ns >= v->start_ns && t_ns < v->start_ns + v->duration_ns)
			return i;
	}
	return -1;
}

static int store_interval(const struct timeline_interval *v, size_t seq, struct profile *p)
{
	char key[48], val[512];
	int n, s;

	n = snprintf(val, sizeof(val), "start_ns=%" PRIu64 " duration_ns=%" PRIu64, v->start_ns,
		     v->duration_ns);
	for (s = 0; s < TIMELINE_SERIES_NR; s++)
		n += snprintf(val + n, sizeof(val) - n, " %s_ns=%" PRIu64, series_names[s], v->ns[s]);
	snprintf(val + n, sizeof(val) - n, " opens=%" PRIu64 " rss_kb=%" PRIu64 " pss_kb=%" PRIu64
		 " procs=%" PRIu32, v->opens, v->rss_kb, v->pss_kb, v->procs);
	snprintf(key, sizeof(key), META_PREFIX "%zu", seq);
	return profile_set_meta(p, key, val);
}

int timeline_store(const struct timeline *tl, struct profile *p)
{
	char cols[64];
	size_t i;
	int err;

	snprintf(cols, sizeof(cols), "%s%s%s", tl->has_cpu ? "cpu" : "",
		 tl->has_cpu && tl->has_syscalls ? "," : "", tl->has_syscalls ? "syscalls" : "");
	err = profile_set_meta_u64(p, META_PREFIX "interval_ns", tl->interval_ns);
	if (!err)
		err = profile_set_meta_u64(p, META_PREFIX "start_monotonic_ns", tl->start_ns);
	if (!err)
		err = profile_set_meta(p, META_PREFIX "measured", cols);
	if (!err)
		err = profile_set_meta_u64(p, META_PREFIX "intervals", tl->items.nr);
	for (i = 0; !err && i < tl->items.nr; i++)
		err = store_interval(&tl->items.items[i], i + 1, p);
	return err;
}

/* The value of "NAME=" in the space-separated @s, 0 when absent. */
static uint64_t field(const char *s, const char *name)
{
	size_t n = strlen(name);
	const char *q;

	for (q = s; (q = strstr(q, name)); q += n)
		if ((q == s || q[-1] == ' ') && q[n] == '=')
			return strtoull(q + n + 1, NULL, 10);
	return 0;
}

static void parse_interval(struct timeline_interval *v, const char *s)
{
	char name[32];
	int i;

	v->start_ns = field(s, "start_ns");
	v->duration_ns = field(s, "duration_ns");
	for (i = 0; i < TIMELINE_SERIES_NR; i++) {
		snprintf(name, sizeof(name), "%s_ns", series_names[i]);
		v->ns[i] = field(s, name);
	}
	v->opens = field(s, "opens");
	v->rss_kb = field(s, "rss_kb");
	v->pss_kb = field(s, "pss_kb");
	v->procs = field(s, "procs");
}

int timeline_load(struct timeline *tl, const struct profile *p)
{
	const char *measured = profile_get_meta(p, META_PREFIX "measured");
	size_t i, n = strlen(META_PREFIX);
	char *end;

	if (!measured)
		return 0;
	tl->interval_ns = profile_get_meta_u64(p, META_PREFIX "interval_ns");
	tl->start_ns = profile_get_meta_u64(p, META_PREFIX "start_monotonic_ns");
	tl->has_cpu = strstr(measured, "cpu") != NULL;
	tl->has_syscalls = strstr(measured, "syscalls") != NULL;
	for (i = 0; i < p->meta.nr; i++) {
		const char *key = p->meta.items[i].key;

		if (strncmp(key, META_PREFIX, n) || !strtoul(key + n, &end, 10) || *end)
			continue;
		if (array_grow(&tl->items, tl->items.nr + 1))
			return -ENOMEM;
		parse_interval(&tl->items.items[tl->items.nr++], p->meta.items[i].value);
	}
	return 0;
}
