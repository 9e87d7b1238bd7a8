// SPDX-License-Identifier: GPL-2.0-only
/* `export --format json` (see export_json.h and docs/formats.md). */
#include "src/export_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "src/gil.h"
#include "src/iotrack.h"
#include "src/proctree.h"
#include "src/requests.h"
#include "src/stalls.h"
#include "src/runmeta.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/timeline.h"
#include "src/lib/util.h"

#define JSON_VERSION 1

void json_put_str(FILE *out, const char *s)
{
	const unsigned char *c;

	fputc('"', out);
	for (c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

/* Is @key "@prefix" followed by a number (a record, not a counter)? */
static bool meta_is_chunk(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(key, prefix, n) && key[n] >= '0' && key[n] <= '9';
}

static void json_metadata(FILE *out, const struct profile *p)
{
	size_t i;
	int n = 0;

	fputs("\"metadata\":{", out);
	for (i = 0; i < p->meta.nr; i++) {
		/* per-syscall statistics, processes, the timeline, requests and files
		 * have their own sections */
		if (!strncmp(p->meta.items[i].key, "syscall.", 8) ||
		    !strncmp(p->meta.items[i].key, "process.", 8) ||
		    !strncmp(p->meta.items[i].key, "process_folded.", 15) ||
		    !strncmp(p->meta.items[i].key, "timeline.", 9) ||
		    meta_is_chunk(p->meta.items[i].key, "requests.") ||
		    meta_is_chunk(p->meta.items[i].key, "stalls.") ||
		    meta_is_chunk(p->meta.items[i].key, "gil.") ||
		    meta_is_chunk(p->meta.items[i].key, "io."))
			continue;
		fputs(n++ ? "," : "", out);
		json_put_str(out, p->meta.items[i].key);
		fputc(':', out);
		json_put_str(out, p->meta.items[i].value);
	}
	fputs("}", out);
}

static void json_stacks(FILE *out, struct flame *f)
{
	const struct flame_stack *st = flame_stacks(f);
	size_t i, j, n = flame_nr_stacks(f);

	fputs(",\"stacks\":[", out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n{\"frames\":[" : "\n{\"frames\":[", out);
		for (j = 0; j < st[i].nr_frames; j++) {
			fputs(j ? "," : "", out);
			json_put_str(out, st[i].frames[j]);
		}
		fprintf(out, "],\"value\":%" PRIu64 "}", st[i].weight);
	}
	fputs("]", out);
}

static const char *proc_comm(const struct profile *p, uint32_t pid)
{
	char key[64];

	snprintf(key, sizeof(key), "proc.%" PRIu32 ".comm", pid);
	return profile_get_meta(p, key);
}

static void json_syscall(FILE *out, const struct profile *p, const struct sys_stat *s)
{
	int nr = syscall_number(s->name);
	uint64_t low, high;
	unsigned int i;
	int n = 0;

	fprintf(out, "{\"pid\":%" PRIu32 ",\"comm\":", s->pid);
	json_put_str(out, proc_comm(p, s->pid));
	fputs(",\"name\":", out);
	json_put_str(out, s->name);
	fputs(",\"category\":", out);
	json_put_str(out, syscall_category_name(nr >= 0 ? syscall_category(nr)
						    : SYSCALL_CATEGORY_OTHER));
	fprintf(out, ",\"count\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"total_ns\":%" PRIu64
		",\"avg_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"in_flight\":%" PRIu64
		",\"p50_ns\":%" PRIu64 ",\"p95_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"hist\":[",
		s->count, s->errors, s->total_ns, s->count ? s->total_ns / s->count : 0,
		s->max_ns, s->in_flight, sys_stat_quantile_ns(s, 0.50),
		sys_stat_quantile_ns(s, 0.95), sys_stat_quantile_ns(s, 0.99));
	for (i = 0; i < SYS_HIST_SLOTS; i++) {
		if (!s->hist[i])
			continue;
		sys_hist_bucket_us(i, &low, &high);
		fprintf(out, "%s{\"low_us\":%" PRIu64 ",\"high_us\":%" PRIu64 ",\"count\":%" PRIu64
			",\"sum_ns\":%" PRIu64 "}", n++ ? "," : "", low, high, s->hist[i],
			s->hist_ns[i]);
	}
	fputs("]}", out);
}

static int json_syscalls(FILE *out, const struct profile *p)
{
	struct sys_stats st = { 0 };
	size_t i;
	int err = sys_stats_load(p, &st);

	fputs(",\"syscalls\":[", out);
	for (i = 0; !err && i < st.nr; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_syscall(out, p, &st.items[i]);
	}
	fputs("]", out);
	free(st.items);
	return err;
}

/* Off-CPU totals by state, from the samples' offcpu label. */
static void json_offcpu(FILE *out, const struct profile *p)
{
	int col = profile_type_index(p, PROFILE_TYPE_OFFCPU);
	uint64_t blocked = 0, preempted = 0;
	size_t i;

	for (i = 0; col >= 0 && i < p->samples.nr; i++) {
		const struct profile_sample *s = &p->samples.items[i];
		const struct profile_label *l = profile_sample_label(s, PROFILE_LABEL_OFFCPU);

		if (s->values[col] <= 0 || !l || !l->str)
			continue;
		if (!strcmp(l->str, PROFILE_OFFCPU_PREEMPTED))
			preempted += s->values[col];
		else
			blocked += s->values[col];
	}
	fprintf(out, ",\"offcpu\":{\"blocked_ns\":%" PRIu64 ",\"preempted_ns\":%" PRIu64 "}",
		blocked, preempted);
}

/* Every "lost.*" counter as a number, the prefix dropped, and their sum. */
static void json_lost(FILE *out, const struct profile *p)
{
	uint64_t sum = 0, v;
	size_t i;
	int n = 0;

	fputs(",\"lost\":{", out);
	for (i = 0; i < p->meta.nr; i++) {
		const struct profile_meta *m = &p->meta.items[i];

		if (strncmp(m->key, "lost.", 5))
			continue;
		v = profile_get_meta_u64(p, m->key);
		sum += v;
		fputs(n++ ? "," : "", out);
		json_put_str(out, m->key + 5);
		fprintf(out, ":%" PRIu64, v);
	}
	fprintf(out, "},\"lost_total\":%" PRIu64, sum);
}

/* Heaviest first; equal weights keep the folded (sorted) order. */
static int cmp_weight_desc(const void *a, const void *b)
{
	const struct flame_stack *x = *(const struct flame_stack *const *)a;
	const struct flame_stack *y = *(const struct flame_stack *const *)b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x < y ? -1 : x > y;
}

static int json_top_stacks(FILE *out, struct flame *f, size_t top)
{
	const struct flame_stack *st = flame_stacks(f);
	size_t i, j, n = flame_nr_stacks(f);
	const struct flame_stack **order = calloc(n ? n : 1, sizeof(*order));
	uint64_t total = flame_total(f);

	if (!order)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		order[i] = &st[i];
	array_sort(order, n, sizeof(*order), cmp_weight_desc);
	fputs(",\"top_stacks\":[", out);
	for (i = 0; i < n && i < top; i++) {
		fputs(i ? ",\n{\"frames\":[" : "\n{\"frames\":[", out);
		for (j = 0; j < order[i]->nr_frames; j++) {
			fputs(j ? "," : "", out);
			json_put_str(out, order[i]->frames[j]);
		}
		fprintf(out, "],\"value\":%" PRIu64 ",\"share\":%.6f}", order[i]->weight,
			total ? (double)order[i]->weight / total : 0.0);
	}
	fputs("]", out);
	free(order);
	return 0;
}

static void json_process(FILE *out, const struct proc_tree *t, size_t i)
{
	const struct proc_info *pi = &t->procs.items[i];
	size_t j;

	fprintf(out, "{\"pid\":%" PRIu32 ",\"ppid\":%" PRIu32 ",\"parent\":%ld,\"comm\":",
		pi->pid, pi->ppid, proc_tree_parent(t, i));
	json_put_str(out, pi->comm);
	fputs(",\"cmdline\":", out);
	json_put_str(out, pi->cmdline);
	fprintf(out, ",\"start_ns\":%" PRIu64, pi->start_ns);
	if (pi->ended)
		fprintf(out, ",\"end_ns\":%" PRIu64, pi->end_ns);
	else
		fputs(",\"end_ns\":null", out);
	if (pi->ended && pi->has_status && WIFSIGNALED(pi->status))
		fprintf(out, ",\"exit_code\":null,\"signal\":%d", WTERMSIG(pi->status));
	else if (pi->ended && pi->has_status)
		fprintf(out, ",\"exit_code\":%d,\"signal\":null", WEXITSTATUS(pi->status));
	else
		fputs(",\"exit_code\":null,\"signal\":null", out);
	fprintf(out, ",\"execs\":%" PRIu32 ",\"peak_rss_kb\":%" PRIu64 ",\"peak_pss_kb\":%" PRIu64
		",\"exit_rss_kb\":%" PRIu64 ",\"memory\":[", pi->execs, pi->peak_rss_kb,
		pi->peak_pss_kb, pi->exit_rss_kb);
	for (j = 0; j < pi->mem.nr; j++) {
		const struct proc_mem_sample *m = &pi->mem.items[j];

		fprintf(out, "%s{\"time_ns\":%" PRIu64 ",\"rss_kb\":%" PRIu64 ",\"pss_kb\":",
			j ? "," : "", m->time_ns, m->rss_kb);
		if (m->pss_kb >= 0)
			fprintf(out, "%" PRId64 "}", m->pss_kb);
		else
			fputs("null}", out);
	}
	fputs("]}", out);
}

static void json_folded(FILE *out, const struct proc_folded *f)
{
	fputs("{\"comm\":", out);
	json_put_str(out, f->comm);
	fprintf(out, ",\"processes\":%" PRIu64 ",\"life_ns\":%" PRIu64 ",\"max_life_ns\":%" PRIu64
		",\"peak_rss_kb\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"first_start_ns\":%" PRIu64
		",\"last_end_ns\":%" PRIu64 "}", f->processes, f->life_ns, f->max_life_ns,
		f->peak_rss_kb, f->failed, f->first_start_ns, f->last_end_ns);
}

/*
 * "processes": the process tree in start order; "parent" indexes this array.
 * "processes_folded": the ended processes a full table folded, by name.
 */
static int json_processes(FILE *out, const struct profile *p)
{
	struct proc_tree t;
	size_t i;
	int err;

	proc_tree_init(&t, 0, 0);
	err = proc_tree_load(&t, p);
	fputs(",\"processes\":[", out);
	for (i = 0; !err && i < t.procs.nr; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_process(out, &t, i);
	}
	fputs("],\"processes_folded\":[", out);
	for (i = 0; !err && i < t.folded.nr; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_folded(out, &t.folded.items[i]);
	}
	fputs("]", out);
	proc_tree_release(&t);
	return err;
}

/* "timeline": one object per interval; "timeline_interval_ns" and its clock. */
static int json_timeline(FILE *out, const struct profile *p)
{
	struct timeline tl;
	size_t i;
	int err, s;

	timeline_init(&tl, 0, 0);
	err = timeline_load(&tl, p);
	fprintf(out, ",\"timeline_interval_ns\":%" PRIu64 ",\"timeline_start_monotonic_ns\":%"
		PRIu64 ",\"timeline\":[", tl.interval_ns, tl.start_ns);
	for (i = 0; !err && i < tl.items.nr; i++) {
		const struct timeline_interval *v = &tl.items.items[i];

		fprintf(out, "%s{\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64, i ? ",\n" : "\n",
			v->start_ns, v->duration_ns);
		for (s = 0; s < TIMELINE_SERIES_NR; s++)
			fprintf(out, ",\"%s_ns\":%" PRIu64, timeline_series_name(s), v->ns[s]);
		fprintf(out, ",\"opens\":%" PRIu64 ",\"rss_kb\":%" PRIu64 ",\"pss_kb\":%" PRIu64
			",\"procs\":%" PRIu32 "}", v->opens, v->rss_kb, v->pss_kb, v->procs);
	}
	fputs("]", out);
	timeline_release(&tl);
	return err;
}

static void json_breakdown(FILE *out, uint64_t cpu_ns, const uint64_t *cat_ns)
{
	int j;

	fprintf(out, "\"cpu_ns\":%" PRIu64, cpu_ns);
	for (j = 0; j < REQUEST_CAT_NR; j++)
		fprintf(out, ",\"%s_ns\":%" PRIu64, request_cat_name(j), cat_ns[j]);
}

static void json_request(FILE *out, const struct request *r)
{
	fprintf(out, "{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"fd\":%" PRIu32
		",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"bytes_in\":%" PRIu64
		",\"bytes_out\":%" PRIu64 ",\"shared\":%s,", r->pid, r->tid, r->fd, r->start_ns,
		r->duration_ns, r->bytes_in, r->bytes_out,
		r->flags & REQUEST_SHARED ? "true" : "false");
	json_breakdown(out, r->cpu_ns, r->cat_ns);
	fprintf(out, ",\"unaccounted_ns\":%" PRIu64 "}",
		r->duration_ns - request_accounted_ns(r));
}

/* "requests": summary and every stored request (recorded with --requests). */
static int json_requests(FILE *out, const struct profile *p)
{
	struct requests_summary s;
	struct requests r = { 0 };
	uint64_t cat[REQUEST_CAT_NR];
	size_t i;
	int err, j;

	if (!profile_get_meta(p, "requests.count"))
		return 0;
	err = requests_load(p, &r);
	if (!err)
		err = requests_summarize(&r, &s);
	if (err)
		goto out;
	fprintf(out, ",\"requests\":{\"count\":%zu,\"dropped\":%" PRIu64 ",\"unanswered\":%"
		PRIu64 ",\"shared\":%zu,\"p50_ns\":%" PRIu64 ",\"p95_ns\":%" PRIu64
		",\"p99_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
		",\"mean_ns\":%" PRIu64 ",\"average\":{", s.count,
		profile_get_meta_u64(p, "requests.dropped"),
		profile_get_meta_u64(p, "requests.unanswered"), s.shared, s.p50_ns, s.p95_ns,
		s.p99_ns, s.min_ns, s.max_ns, s.mean_ns);
	for (j = 0; j < REQUEST_CAT_NR; j++)
		cat[j] = s.count ? s.cat_ns[j] / s.count : 0;
	json_breakdown(out, s.count ? s.cpu_ns / s.count : 0, cat);
	fprintf(out, ",\"unaccounted_ns\":%" PRIu64 "},\"items\":[",
		s.count ? s.unaccounted_ns / s.count : 0);
	for (i = 0; i < r.nr; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_request(out, &r.items[i]);
	}
	fputs("]}", out);
out:
	free(r.items);
	return err;
}

/* "files" and "network" (recorded with --files / --net), heaviest first. */
static int json_io(FILE *out, const struct profile *p)
{
	const char *track = profile_get_meta(p, RUN_META_TRACK);
	struct io_entries e = { 0 };
	int err, net, n;
	size_t i;

	if (!track || (!strstr(track, "files") && !strstr(track, "net")))
		return 0;
	err = io_entries_load(p, &e);
	if (err)
		return err;
	for (net = 0; net < 2; net++) {
		if (!strstr(track, net ? "net" : "files"))
			continue;
		fprintf(out, ",\"%s\":[", net ? "network" : "files");
		for (i = 0, n = 0; i < e.nr; i++) {
			const struct io_entry *x = &e.items[i];

			if ((x->kind != IO_KIND_FILE) != net)
				continue;
			fputs(n++ ? ",\n{" : "\n{", out);
			if (net) {
				fprintf(out, "\"direction\":\"%s\",\"peer\":", io_kind_name(x->kind));
				json_put_str(out, x->name);
				fprintf(out, ",\"connections\":%" PRIu64, x->opens);
			} else {
				fputs("\"path\":", out);
				json_put_str(out, x->name);
				fprintf(out, ",\"opens\":%" PRIu64, x->opens);
			}
			fprintf(out, ",\"bytes_read\":%" PRIu64 ",\"bytes_written\":%" PRIu64
				",\"io_ns\":%" PRIu64 ",\"ops\":%" PRIu64 ",\"processes\":%" PRIu64
				"}", x->bytes_in, x->bytes_out, x->io_ns, x->ops, x->pids);
		}
		fputs("]", out);
	}
	io_entries_free(&e);
	return 0;
}

/*
 * "stalls": event-loop stalls (recorded with --mode syscall and --stall-min
 * above 0): the threshold, a summary and each stall.
 */
static int json_stalls(FILE *out, const struct profile *p)
{
	struct stalls_summary sum;
	struct stalls s = { 0 };
	uint64_t min_ns;
	size_t i;
	int err = stalls_load(p, &s, &min_ns);

	if (err == -ENOENT)
		return 0;
	if (!err)
		err = stalls_summarize(&s, &sum);
	if (!err) {
		fprintf(out, ",\"stalls\":{\"min_ns\":%" PRIu64 ",\"count\":%zu,\"in_flight\":%zu,"
			"\"dropped\":%" PRIu64
			",\"total_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
			",\"max_ns\":%" PRIu64 ",\"list\":[", min_ns, sum.count, sum.in_flight,
			profile_get_meta_u64(p, "stalls.dropped"), sum.total_ns, sum.p50_ns,
			sum.p99_ns, sum.max_ns);
		for (i = 0; i < s.nr; i++)
			fprintf(out, "%s{\"pid\":%u,\"tid\":%u,\"start_monotonic_ns\":%" PRIu64
				",\"duration_ns\":%" PRIu64 ",\"in_flight\":%s}", i ? "," : "",
				s.items[i].pid, s.items[i].tid, s.items[i].start_ns,
				s.items[i].duration_ns,
				s.items[i].flags & STALL_IN_FLIGHT ? "true" : "false");
		fputs("]}", out);
	}
	stalls_release(&s);
	return err;
}

/*
 * "gil": the Python threads of GIL builds (src/gil.h), totals and each
 * thread, most waiting first; absent when the recording saw none.
 */
static int json_gil(FILE *out, const struct profile *p)
{
	struct gil_threads g = { 0 };
	uint64_t waits = 0, held_ns = 0;
	size_t i;
	int err = gil_load(p, &g);

	if (err == -ENOENT)
		return 0;
	for (i = 0; !err && i < g.nr; i++) {
		waits += g.items[i].waits;
		held_ns += g.items[i].held_ns;
	}
	if (!err) {
		gil_sort_by_wait(&g);
		fprintf(out, ",\"gil\":{\"threads\":%zu,\"dropped\":%" PRIu64 ",\"waits\":%" PRIu64
			",\"wait_ns\":%" PRIu64 ",\"held_ns\":%" PRIu64 ",\"list\":[", g.nr,
			profile_get_meta_u64(p, "gil.dropped"), waits, gil_wait_ns(&g, 0), held_ns);
		for (i = 0; i < g.nr; i++)
			fprintf(out, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"waits\":%" PRIu64
				",\"wait_ns\":%" PRIu64 ",\"held_ns\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
				"}", i ? ",\n" : "\n", g.items[i].pid, g.items[i].tid,
				g.items[i].waits, g.items[i].wait_ns, g.items[i].held_ns,
				g.items[i].cpu_ns);
		fputs("]}", out);
	}
	gil_threads_release(&g);
	return err;
}

int export_json(FILE *out, const struct profile *p, const struct profile_weight *w,
		struct flame *f, size_t top)
{
	int err;

	fprintf(out, "{\"format\":\"latprof-json\",\"version\":%d,\"weight\":", JSON_VERSION);
	json_put_str(out, w->name);
	if (w->wait) {	/* --weight NAME:path, :idle or :readiness */
		fputs(",\"wait\":", out);
		json_put_str(out, w->wait);
	}
	fputs(",\"unit\":", out);
	json_put_str(out, w->unit);
	fprintf(out, ",\"total\":%" PRIu64 ",\"time_ns\":%" PRId64 ",\"duration_ns\":%" PRId64
		",", flame_total(f), p->time_ns, p->duration_ns);
	json_metadata(out, p);
	json_lost(out, p);
	json_stacks(out, f);
	err = json_top_stacks(out, f, top);
	if (!err)
		err = json_syscalls(out, p);
	json_offcpu(out, p);
	if (!err)
		err = json_processes(out, p);
	if (!err)
		err = json_timeline(out, p);
	if (!err)
		err = json_requests(out, p);
	if (!err)
		err = json_io(out, p);
	if (!err)
		err = json_stalls(out, p);
	if (!err)
		err = json_gil(out, p);
	fputs("}\n", out);
	if (err)
		return err;
	return ferror(out) ? -EIO : 0;
}
