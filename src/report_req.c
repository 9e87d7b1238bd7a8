// SPDX-License-Identifier: GPL-2.0-only
/*
 * The request, file and network sections of `latprof report` (recorded with
 * --requests, --files, --net): request latency quantiles from the sorted
 * latencies, the average breakdown, the slowest requests with their own
 * breakdown; the files and peers that took the most time.
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/iotrack.h"
#include "src/report_fmt.h"
#include "src/requests.h"
#include "src/runmeta.h"
#include "src/lib/util.h"

static int cmp_duration_desc(const void *a, const void *b)
{
	const struct request *x = a, *y = b;

	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static void print_quantiles(FILE *out, const struct requests_summary *s)
{
	char q[6][16];

	report_fmt_ns(q[0], sizeof(q[0]), s->p50_ns);
	report_fmt_ns(q[1], sizeof(q[1]), s->p95_ns);
	report_fmt_ns(q[2], sizeof(q[2]), s->p99_ns);
	report_fmt_ns(q[3], sizeof(q[3]), s->max_ns);
	report_fmt_ns(q[4], sizeof(q[4]), s->min_ns);
	report_fmt_ns(q[5], sizeof(q[5]), s->mean_ns);
	fprintf(out, "  latency  p50 %s  p95 %s  p99 %s  max %s  (min %s, mean %s)\n", q[0], q[1],
		q[2], q[3], q[4], q[5]);
}

static void average_line(FILE *out, const char *what, uint64_t sum,
			 const struct requests_summary *s)
{
	char t[16];

	report_fmt_ns(t, sizeof(t), sum / s->count);
	fprintf(out, "    %-36s %8s %6.1f%%\n", what, t, report_fmt_pct(sum, s->total_ns));
}

static void print_average(FILE *out, const struct requests_summary *s)
{
	char what[40];
	int j;

	fprintf(out, "  average breakdown (per request)            time   share\n");
	average_line(out, "on CPU", s->cpu_ns, s);
	for (j = 0; j < REQUEST_CAT_NR; j++) {
		snprintf(what, sizeof(what), "in syscalls: %s", request_cat_name(j));
		average_line(out, what, s->cat_ns[j], s);
	}
	average_line(out, "unaccounted (runnable, faults, ...)", s->unaccounted_ns, s);
}

static void print_slowest(FILE *out, const struct report_opts *o, struct requests *r, uint64_t t0)
{
	char lat[16], f[1 + REQUEST_CAT_NR + 1][16];
	size_t i;
	int j;

	array_sort(r->items, r->nr, sizeof(*r->items), cmp_duration_desc);
	fprintf(out, "  slowest %u:\n", o->slowest < r->nr ? o->slowest : (unsigned int)r->nr);
	fprintf(out, "    %9s %7s %7s %7s %5s %6s %6s %6s %6s %6s %6s %6s %6s\n", "start",
		"latency", "pid", "tid", "fd", "in", "out", "cpu", "net", "file", "sync", "sleep",
		"other");
	for (i = 0; i < r->nr && i < o->slowest; i++) {
		const struct request *q = &r->items[i];

		report_fmt_ns(lat, sizeof(lat), q->duration_ns);
		report_fmt_ns(f[0], sizeof(f[0]), q->cpu_ns);
		for (j = 0; j < REQUEST_CAT_NR; j++)
			report_fmt_ns(f[1 + j], sizeof(f[0]), q->cat_ns[j]);
		fprintf(out, "    %+8.3fs %7s %7u %7u %5u %6" PRIu64 " %6" PRIu64
			" %6s %6s %6s %6s %6s %6s%s\n", (q->start_ns - t0) / 1e9, lat, q->pid,
			q->tid, q->fd, q->bytes_in, q->bytes_out, f[0], f[1], f[2], f[3], f[4],
			f[5], q->flags & REQUEST_SHARED ? " *" : "");
	}
}

int report_requests(FILE *out, const struct report_opts *o, const struct profile *p)
{
	struct requests_summary sum;
	struct requests r = { 0 };
	uint64_t t0 = UINT64_MAX;
	size_t i;
	int err;

	if (!profile_get_meta(p, "requests.count"))
		return 0;
	err = requests_load(p, &r);
	if (!err)
		err = requests_summarize(&r, &sum);
	if (err)
		goto out;
	report_fmt_heading(out, o->color, "Requests", "(on accepted connections, "
			   "first request byte read to last response byte written)");
	fprintf(out, "  %zu requests, %" PRIu64 " more not kept (--max-requests), %" PRIu64
		" unanswered at stop\n", r.nr, profile_get_meta_u64(p, "requests.dropped"),
		profile_get_meta_u64(p, "requests.unanswered"));
	for (i = 0; i < r.nr; i++)
		if (r.items[i].start_ns < t0)
			t0 = r.items[i].start_ns;
	if (r.nr) {
		print_quantiles(out, &sum);
		print_average(out, &sum);
		print_slowest(out, o, &r, t0);
	}
	if (sum.shared)
		fprintf(out, "  * %zu request%s served on a shared event loop: "
			"breakdown is proportional "
			"(the process's time split among the requests open at once)\n",
			sum.shared, sum.shared == 1 ? "" : "s");
out:
	free(r.items);
	return err;
}

static void print_io_table(FILE *out, const struct report_opts *o, const struct io_entries *e,
			   bool net)
{
	char t[16], in[16], written[16];
	unsigned int n = 0;
	size_t i;

	fprintf(out, "  %8s %8s %10s %10s %7s  %s\n", "time", net ? "conns" : "opens", "read",
		"written", "ops", net ? "peer" : "path");
	for (i = 0; i < e->nr && n < o->top; i++) {
		const struct io_entry *x = &e->items[i];

		if ((x->kind != IO_KIND_FILE) != net)
			continue;
		report_fmt_ns(t, sizeof(t), x->io_ns);
		snprintf(in, sizeof(in), "%" PRIu64, x->bytes_in);
		snprintf(written, sizeof(written), "%" PRIu64, x->bytes_out);
		fprintf(out, "  %8s %8" PRIu64 " %10s %10s %7" PRIu64 "  %s%s\n", t, x->opens, in,
			written, x->ops, x->name, x->kind == IO_KIND_ACCEPT ? " (clients)" : "");
		n++;
	}
	if (!n)
		fprintf(out, "  none\n");
}

int report_io(FILE *out, const struct report_opts *o, const struct profile *p)
{
	const char *track = profile_get_meta(p, RUN_META_TRACK);
	struct io_entries e = { 0 };
	int err;

	if (!track || (!strstr(track, "files") && !strstr(track, "net")))
		return 0;
	err = io_entries_load(p, &e);
	if (err)
		return err;
	if (strstr(track, "files")) {
		report_fmt_heading(out, o->color, "Files",
				   "(opened by path; bytes in bytes, time in syscalls on them)");
		print_io_table(out, o, &e, false);
	}
	if (strstr(track, "net")) {
		report_fmt_heading(out, o->color, "Network", "(peers of connect and accept)");
		print_io_table(out, o, &e, true);
	}
	io_entries_free(&e);
	return 0;
}
