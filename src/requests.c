// SPDX-License-Identifier: GPL-2.0-only
/* Requests: breakdowns from snapshots, quantiles, metadata (see requests.h). */
#include "src/requests.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/metarecords.h"
#include "src/lib/util.h"

#define REQUEST_FIELDS 14

static const char *const cat_names[REQUEST_CAT_NR] = {
	[REQUEST_CAT_NETWORK] = "network",
	[REQUEST_CAT_FILE] = "file",
	[REQUEST_CAT_SYNC] = "sync",
	[REQUEST_CAT_SLEEP] = "sleep",
	[REQUEST_CAT_OTHER] = "other",
};

const char *request_cat_name(enum request_cat c)
{
	return c < REQUEST_CAT_NR ? cat_names[c] : "other";
}

_Static_assert(sizeof(struct request_times) == REQUEST_TIMES_NR * sizeof(uint64_t),
	       "request_times is an array of counters");

/* A counter of struct request_times by index, in field order. */
static uint64_t times_get(const struct request_times *t, int i)
{
	return ((const uint64_t *)t)[i];
}

static uint64_t diff(uint64_t to, uint64_t from)
{
	return to > from ? to - from : 0;
}

/* Scale @r's breakdown down to its duration when it sums past it. */
static void request_clip(struct request *r)
{
	uint64_t sum = r->cpu_ns;
	double f;
	int i;

	for (i = 0; i < REQUEST_CAT_NR; i++)
		sum += r->cat_ns[i];
	if (sum <= r->duration_ns)
		return;
	f = (double)r->duration_ns / sum;
	r->cpu_ns = r->cpu_ns * f;
	for (i = 0; i < REQUEST_CAT_NR; i++)
		r->cat_ns[i] = r->cat_ns[i] * f;
}

uint64_t request_accounted_ns(const struct request *r)
{
	uint64_t sum = r->cpu_ns;
	int i;

	for (i = 0; i < REQUEST_CAT_NR; i++)
		sum += r->cat_ns[i];
	return sum < r->duration_ns ? sum : r->duration_ns;
}

/* Fill @r's breakdown from the differences @d of struct request_times counters. */
static void request_breakdown(struct request *r, const double *d)
{
	const double *cat = d + 3;
	double sys = 0, ticks = d[1] + d[2], user, kern;
	int j;

	for (j = 0; j < REQUEST_CAT_NR; j++) {
		r->cat_ns[j] = cat[j];
		sys += cat[j];
	}
	/*
	 * The kernel's share of the CPU time, by the tick-based utime/stime
	 * split; it cannot exceed the wall time spent in syscalls. The cap
	 * matters for a thread that is preempted a lot: ticks that land in the
	 * scheduler count as its stime, and a busy 2-CPU machine made 13% of a
	 * pure user-space spin "system" (test_requests_threaded's /spin).
	 */
	kern = ticks > 0 ? d[0] * d[2] / ticks : sys;
	if (kern > sys)
		kern = sys;
	user = d[0] > kern ? d[0] - kern : 0;
	r->cpu_ns = user;
	request_clip(r);
}

static void request_init(struct request *r, const struct request_raw *in)
{
	memset(r, 0, sizeof(*r));
	r->pid = in->pid;
	r->tid = in->read_tid;
	r->fd = in->fd;
	r->flags = in->flags & REQUEST_SHARED;
	r->start_ns = in->start_ns;
	r->duration_ns = diff(in->end_ns, in->start_ns);
	r->bytes_in = in->bytes_in;
	r->bytes_out = in->bytes_out;
}

static bool raw_shared(const struct request_raw *in)
{
	return (in->flags & REQUEST_SHARED) || in->read_tid != in->write_tid;
}

/* One end of a shared request, on its process's timeline. */
struct req_point {
	uint32_t pid;
	bool end;
	uint64_t time_ns;
	size_t req;		/* index in the raw records */
};

static int cmp_point(const void *a, const void *b)
{
	const struct req_point *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (int)x->end - (int)y->end;	/* starts first */
}

static const struct request_times *point_snap(const struct request_raw *raw,
					      const struct req_point *pt)
{
	return pt->end ? &raw[pt->req].p_end : &raw[pt->req].p_start;
}

/*
 * Split each process's time among its open shared requests: @pts sorted by
 * (pid, time); prefix[k][i] is component i summed over the shares of the
 * segments before point k; a request gets prefix[end] - prefix[start].
 */
static void share_segments(const struct request_raw *raw, const struct req_point *pts,
			   size_t n, double (*prefix)[REQUEST_TIMES_NR], size_t *pos)
{
	size_t k, open = 0;
	int i;

	memset(prefix[0], 0, sizeof(prefix[0]));
	for (k = 0; k < n; k++) {
		const struct request_times *a = point_snap(raw, &pts[k]), *b;

		pos[2 * pts[k].req + pts[k].end] = k;
		if (k + 1 == n)
			break;
		if (pts[k].pid != pts[k + 1].pid) {
			open = 0;
			memcpy(prefix[k + 1], prefix[k], sizeof(prefix[0]));
			continue;
		}
		open = pts[k].end ? (open ? open - 1 : 0) : open + 1;
		b = point_snap(raw, &pts[k + 1]);
		for (i = 0; i < REQUEST_TIMES_NR; i++)
			prefix[k + 1][i] = prefix[k][i] +
				(open ? (double)diff(times_get(b, i), times_get(a, i)) / open : 0);
	}
}

static int compute_shared(const struct request_raw *raw, size_t nr, struct request *out)
{
	struct req_point *pts = NULL;
	double (*prefix)[REQUEST_TIMES_NR] = NULL, d[REQUEST_TIMES_NR];
	size_t *pos = NULL, i, n = 0, s, e;
	int err = -ENOMEM, j;

	pts = calloc(2 * nr + 1, sizeof(*pts));
	prefix = calloc(2 * nr + 1, sizeof(*prefix));
	pos = calloc(2 * nr + 1, sizeof(*pos));
	if (!pts || !prefix || !pos)
		goto out;
	for (i = 0; i < nr; i++) {
		if (!raw_shared(&raw[i]))
			continue;
		pts[n++] = (struct req_point){ raw[i].pid, false, raw[i].start_ns, i };
		pts[n++] = (struct req_point){ raw[i].pid, true, raw[i].end_ns, i };
	}
	array_sort(pts, n, sizeof(*pts), cmp_point);
	if (n)
		share_segments(raw, pts, n, prefix, pos);
	for (i = 0; i < nr; i++) {
		if (!raw_shared(&raw[i]))
			continue;
		s = pos[2 * i];
		e = pos[2 * i + 1];
		out[i].flags |= REQUEST_SHARED;
		for (j = 0; j < REQUEST_TIMES_NR; j++)
			d[j] = prefix[e][j] > prefix[s][j] ? prefix[e][j] - prefix[s][j] : 0;
		request_breakdown(&out[i], d);
	}
	err = 0;
out:
	free(pts);
	free(prefix);
	free(pos);
	return err;
}

int requests_compute(const struct request_raw *raw, size_t nr, struct requests *out)
{
	double d[REQUEST_TIMES_NR];
	struct request *r;
	size_t i;
	int j;

	if (array_grow(out, out->nr + nr))
		return -ENOMEM;
	r = out->items + out->nr;
	for (i = 0; i < nr; i++) {
		request_init(&r[i], &raw[i]);
		if (raw_shared(&raw[i]))
			continue;
		for (j = 0; j < REQUEST_TIMES_NR; j++)
			d[j] = diff(times_get(&raw[i].t_end, j), times_get(&raw[i].t_start, j));
		request_breakdown(&r[i], d);
	}
	if (compute_shared(raw, nr, r))
		return -ENOMEM;
	out->nr += nr;
	return 0;
}

uint64_t requests_quantile_ns(const uint64_t *sorted, size_t nr, double q)
{
	size_t rank;

	if (!nr)
		return 0;
	rank = (size_t)(q * nr + 0.999999);
	if (rank < 1)
		rank = 1;
	return sorted[(rank > nr ? nr : rank) - 1];
}

static int cmp_start(const void *a, const void *b)
{
	const struct request *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

void requests_sort_by_start(struct requests *r)
{
	if (r->nr)
		array_sort(r->items, r->nr, sizeof(*r->items), cmp_start);
}

int requests_store(struct profile *p, const struct requests *r, uint64_t dropped,
		   uint64_t unanswered)
{
	uint64_t *v = NULL, *x;
	size_t i;
	int err, j;

	err = profile_set_meta_u64(p, "requests.count", r->nr);
	if (!err)
		err = profile_set_meta_u64(p, "requests.dropped", dropped);
	if (!err)
		err = profile_set_meta_u64(p, "requests.unanswered", unanswered);
	if (err || !r->nr)
		return err;
	v = calloc(r->nr, REQUEST_FIELDS * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < r->nr; i++) {
		const struct request *q = &r->items[i];

		x = v + i * REQUEST_FIELDS;
		x[0] = q->pid;
		x[1] = q->tid;
		x[2] = q->fd;
		x[3] = q->flags;
		x[4] = q->start_ns;
		x[5] = q->duration_ns;
		x[6] = q->bytes_in;
		x[7] = q->bytes_out;
		x[8] = q->cpu_ns;
		for (j = 0; j < REQUEST_CAT_NR; j++)
			x[9 + j] = q->cat_ns[j];
	}
	err = metarecords_store(p, "requests", v, r->nr, REQUEST_FIELDS);
	free(v);
	return err;
}

/* One stored request; a number past its field's width makes it malformed. */
static int load_one(void *arg, const uint64_t *v)
{
	struct requests *out = arg;
	struct request *r;
	int i;

	if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[2] > UINT32_MAX || v[3] > UINT32_MAX)
		return 0;
	if (array_grow(out, out->nr + 1))
		return -ENOMEM;
	r = &out->items[out->nr++];
	*r = (struct request){ .pid = v[0], .tid = v[1], .fd = v[2], .flags = v[3],
			       .start_ns = v[4], .duration_ns = v[5], .bytes_in = v[6],
			       .bytes_out = v[7], .cpu_ns = v[8] };
	for (i = 0; i < REQUEST_CAT_NR; i++)
		r->cat_ns[i] = v[9 + i];
	return 0;
}

int requests_load(const struct profile *p, struct requests *out)
{
	return metarecords_each(p, "requests", REQUEST_FIELDS, load_one, out);
}

int requests_summarize(const struct requests *r, struct requests_summary *s)
{
	uint64_t *lat;
	size_t i;
	int j;

	memset(s, 0, sizeof(*s));
	if (!r->nr)
		return 0;
	lat = malloc(r->nr * sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	for (i = 0; i < r->nr; i++) {
		const struct request *q = &r->items[i];

		lat[i] = q->duration_ns;
		s->total_ns += q->duration_ns;
		s->cpu_ns += q->cpu_ns;
		for (j = 0; j < REQUEST_CAT_NR; j++)
			s->cat_ns[j] += q->cat_ns[j];
		s->unaccounted_ns += q->duration_ns - request_accounted_ns(q);
		s->shared += !!(q->flags & REQUEST_SHARED);
	}
	array_sort(lat, r->nr, sizeof(*lat), array_cmp_u64);
	s->count = r->nr;
	s->p50_ns = requests_quantile_ns(lat, r->nr, 0.50);
	s->p95_ns = requests_quantile_ns(lat, r->nr, 0.95);
	s->p99_ns = requests_quantile_ns(lat, r->nr, 0.99);
	s->min_ns = lat[0];
	s->max_ns = lat[r->nr - 1];
	s->mean_ns = s->total_ns / r->nr;
	free(lat);
	return 0;
}
