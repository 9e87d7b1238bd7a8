// SPDX-License-Identifier: GPL-2.0-only
/*
 * The body of `latprof report`, a hotspot report for an 80-column terminal:
 * recording metadata and totals, the sections of report_sys.c, report_procs.c
 * and report_req.c in order, top functions by self and total weight, the
 * heaviest stacks, stack quality and losses. The options and the choice of
 * colour are the verb's (cmd_report.c).
 */
#include "src/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flamegraph/flame.h"
#include "src/hotspots.h"
#include "src/lib/hashmap.h"
#include "src/weight.h"
#include "src/report_fmt.h"
#include "src/runmeta.h"
#include "src/stackflame.h"
#include "src/stacks.h"
#include "src/lib/util.h"

/* A weight as the table shows it: a count, or a duration for nanoseconds. */
static void weight_str(const struct report_opts *o, uint64_t v, char *buf, size_t size)
{
	if (!strcmp(o->weight_unit, "nanoseconds"))
		report_fmt_ns(buf, size, v);
	else
		snprintf(buf, size, "%" PRIu64, v);
}

static void print_functions(FILE *out, const struct report_opts *o, struct hot_funcs *t,
			    uint64_t total)
{
	char self[32], tot[32], title[64];
	size_t i, n = t->nr;

	hot_funcs_sort(t);
	snprintf(title, sizeof(title), "Top functions by self %s", o->weight);
	report_fmt_heading(out, o->color, title, NULL);
	fprintf(out, "  %7s %8s %7s %8s  %s\n", "self%", "self", "total%", "total", "function");
	for (i = 0; i < n && i < o->top; i++) {
		const struct hot_func *s = &t->items[i];

		if (!s->self)
			break;
		weight_str(o, s->self, self, sizeof(self));
		weight_str(o, s->total, tot, sizeof(tot));
		fprintf(out, "  %6.2f%% %8s %6.2f%% %8s  %.40s\n", report_fmt_pct(s->self, total),
			self, report_fmt_pct(s->total, total), tot, s->name);
	}
}

static int cmp_stack_weight(const void *a, const void *b)
{
	const struct flame_stack *x = *(const struct flame_stack *const *)a;
	const struct flame_stack *y = *(const struct flame_stack *const *)b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

int report_sorted_stacks(const struct report_opts *o, const struct profile *p,
			 const struct profile_weight *w, struct flame **f,
			 const struct flame_stack ***order, size_t *nr)
{
	const struct flame_stack *st;
	size_t i, n;
	int err;

	*order = NULL;
	*nr = 0;
	*f = flame_new();
	err = *f ? stacks_to_flame(p, w, STACKS_FLAG_PER_PID | o->stack_flags, *f) : -ENOMEM;
	n = err ? 0 : flame_nr_stacks(*f);
	*order = err ? NULL : calloc(n ? n : 1, sizeof(**order));
	if (!err && !*order)
		err = -ENOMEM;
	if (err) {
		flame_free(*f);
		*f = NULL;
		return err;
	}
	st = flame_stacks(*f);
	for (i = 0; i < n; i++)
		(*order)[i] = &st[i];
	array_sort(*order, n, sizeof(**order), cmp_stack_weight);
	*nr = n;
	return 0;
}

static int print_stacks(FILE *out, const struct report_opts *o, const struct profile *p,
			const struct profile_weight *w)
{
	char wbuf[32];
	struct flame *f;
	const struct flame_stack **order;
	size_t i, j, n;
	int err = report_sorted_stacks(o, p, w, &f, &order, &n);

	if (err)
		return err;
	report_fmt_heading(out, o->color, "Top stacks (leaf first)", NULL);
	for (i = 0; i < n && i < o->stacks; i++) {
		weight_str(o, order[i]->weight, wbuf, sizeof(wbuf));
		fprintf(out, "  #%zu %6.2f%% %8s  %.50s\n", i + 1,
			report_fmt_pct(order[i]->weight, flame_total(f)), wbuf,
			order[i]->frames[0]);
		for (j = order[i]->nr_frames; j-- > 1;) {
			if (order[i]->nr_frames - j > 12) {
				fprintf(out, "        ... %zu more\n", j);
				break;
			}
			fprintf(out, "        %.70s\n", order[i]->frames[j]);
		}
	}
	free(order);
	flame_free(f);
	return 0;
}

static void print_header(FILE *out, const struct report_opts *o, const struct profile *p,
			 const char *path, uint64_t total)
{
	const char *cmd = profile_get_meta(p, RUN_META_COMMAND_LINE);
	const char *exit_status = profile_get_meta(p, RUN_META_EXIT_STATUS);
	time_t t = p->time_ns / NSEC_PER_SEC;
	char when[64] = "", freq[32] = "";

	if (p->time_ns)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	/* the report's title: no blank line before it, unlike the sections' */
	fprintf(out, "%slatprof report: %s%s\n", report_fmt_bold(o->color), path,
		report_fmt_reset(o->color));
	if (cmd)
		fprintf(out, "  command    %.66s\n", cmd);
	if (profile_type_index(p, PROFILE_TYPE_SAMPLES) >= 0)
		snprintf(freq, sizeof(freq), " at %" PRIu64 " Hz",
			 profile_get_meta_u64(p, RUN_META_FREQ_HZ));
	fprintf(out, "  recorded   %s, %.2f s%s (%s stacks), kernel %s\n", when,
		p->duration_ns / 1e9, freq,
		profile_get_meta(p, RUN_META_UNWIND) ? profile_get_meta(p, RUN_META_UNWIND) : "?",
		profile_get_meta(p, RUN_META_KERNEL) ? profile_get_meta(p, RUN_META_KERNEL) : "?");
	if (exit_status)
		fprintf(out, "  exit       command exited with status %s\n", exit_status);
	if (profile_get_meta(p, RUN_META_MODE))
		fprintf(out, "  collectors %s\n", profile_get_meta(p, RUN_META_MODE));
	fprintf(out, "  total      %" PRIu64 " %s", total, o->weight);
	if (p->period > 0 && !strcmp(o->weight, "cpu"))
		fprintf(out, " = %.3f s on CPU", total * (double)p->period / 1e9);
	else if (!strcmp(o->weight_unit, "nanoseconds"))
		fprintf(out, " ns = %.3f s", total / 1e9);
	fprintf(out, ", %" PRIu64 " processes\n", profile_get_meta_u64(p, "count.processes"));
}

static uint64_t proc_meta(const struct profile *p, const char *pid, const char *name)
{
	char key[96];

	snprintf(key, sizeof(key), "proc.%s.%s", pid, name);
	return profile_get_meta_u64(p, key);
}

/* Per process: how its user stacks were unwound and how many were complete. */
static void print_stack_quality(FILE *out, const struct report_opts *o, const struct profile *p)
{
	char pid[32], key[96];
	size_t i;

	report_fmt_heading(out, o->color, "Stacks", "(user stack unwinding per process)");
	for (i = 0; i < p->meta.nr; i++) {
		const char *k = p->meta.items[i].key, *mode = p->meta.items[i].value, *comm;
		uint64_t complete, copy, depth, noinfo, bad;

		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".unwind") ||
		    strlen(k) - 12 >= sizeof(pid))
			continue;
		snprintf(pid, sizeof(pid), "%.*s", (int)(strlen(k) - 12), k + 5);
		snprintf(key, sizeof(key), "proc.%s.comm", pid);
		comm = profile_get_meta(p, key);
		complete = proc_meta(p, pid, "stacks_complete");
		copy = proc_meta(p, pid, "truncated_copy");
		depth = proc_meta(p, pid, "truncated_depth");
		noinfo = proc_meta(p, pid, "truncated_no_unwind_info");
		bad = proc_meta(p, pid, "truncated_bad_read");
		if (strcmp(mode, "dwarf")) {
			fprintf(out, "  %7s %-15s %-6s complete -  truncated -\n", pid,
				comm ? comm : "", mode);
			continue;
		}
		if (!complete && !copy && !depth && !noinfo && !bad)
			continue;	/* an image that was never sampled */
		fprintf(out, "  %7s %-15s %-6s complete %" PRIu64 "  truncated %" PRIu64 "\n"
			"  %31s(copy %" PRIu64 ", depth %" PRIu64 ", no-unwind-info %" PRIu64
			", bad-read %" PRIu64 ")\n", pid, comm ? comm : "", mode, complete,
			copy + depth + noinfo + bad, "", copy, depth, noinfo, bad);
	}
}

/* Per Python process: its interpreter, and how its frame walks ended, or why none was made. */
static void print_python(FILE *out, const struct report_opts *o, const struct profile *p)
{
	char pid[32];
	size_t i;

	if (!profile_get_meta(p, "python.processes"))
		return;
	report_fmt_heading(out, o->color, "Python",
			   "(interpreter frames replaced by Python functions)");
	for (i = 0; i < p->meta.nr; i++) {
		const char *k = p->meta.items[i].key, *v = p->meta.items[i].value;

		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".python") ||
		    strlen(k) - 12 >= sizeof(pid))
			continue;
		snprintf(pid, sizeof(pid), "%.*s", (int)(strlen(k) - 12), k + 5);
		if (!strncmp(v, "unsupported: ", 13)) {
			fprintf(out, "  %7s %s\n  %7s C frames kept: %" PRIu64 " stacks without"
				" Python frames\n", pid, v, "",
				proc_meta(p, pid, "python_samples_without_frames"));
			continue;
		}
		fprintf(out, "  %7s Python %s\n  %7s stacks walked %" PRIu64
			", taken before it was found %" PRIu64 ", truncated %" PRIu64
			"\n  %7s thread not found %" PRIu64 ", unreadable %" PRIu64
			", unnamed frames %" PRIu64 "\n", pid, v, "",
			proc_meta(p, pid, "python_walk_ok"),
			proc_meta(p, pid, "python_walk_before_found"),
			proc_meta(p, pid, "python_walk_truncated"), "",
			proc_meta(p, pid, "python_walk_no_thread"),
			proc_meta(p, pid, "python_walk_read_failed"),
			proc_meta(p, pid, "python_frames_unnamed"));
		if (proc_meta(p, pid, "python_frames_unnamed"))
			fprintf(out, "  %7s unnamed because: the process had exited %" PRIu64
				", the memory had changed %" PRIu64 ", unreadable %" PRIu64 "\n",
				"", proc_meta(p, pid, "python_frames_unnamed_exited"),
				proc_meta(p, pid, "python_frames_unnamed_changed"),
				proc_meta(p, pid, "python_frames_unnamed_unreadable"));
	}
}

static void print_losses(FILE *out, const struct report_opts *o, const struct profile *p)
{
	const char *unread = profile_get_meta(p, "stats_unreadable"), *k;
	char label[64];
	size_t i;
	int n = 0;

	report_fmt_heading(out, o->color, "Lost and dropped", NULL);
	for (i = 0; i < p->meta.nr; i++) {
		uint64_t v;

		if (strncmp(p->meta.items[i].key, "lost.", 5))
			continue;
		v = profile_get_meta_u64(p, p->meta.items[i].key);
		if (!v)
			continue;
		fprintf(out, "  %-34s %10" PRIu64 "\n", p->meta.items[i].key + 5, v);
		n++;
	}
	/* which processes mapped the files libdwfl refused */
	for (i = 0; i < p->meta.nr; i++) {
		k = p->meta.items[i].key;
		if (strncmp(k, "proc.", 5) || !str_has_suffix(k, ".modules_refused"))
			continue;
		snprintf(label, sizeof(label), "modules_refused, pid %.*s",
			 (int)(strlen(k) - 21), k + 5);
		fprintf(out, "  %-34s %10" PRIu64 "\n", label, profile_get_meta_u64(p, k));
	}
	if (unread)
		fprintf(out, "  unknown: these counters could not be read from the kernel (0 = not known)"
			"\n    %s\n", unread);
	if (n)
		fprintf(out,
			"  the result is partial: the events counted above are missing from it\n");
	else if (!unread)
		fprintf(out, "  none: every sample was recorded with its stacks\n");
	/* recorded, but not named: no perf map for that JIT code */
	if (profile_get_meta_u64(p, "count.jit_frames_unnamed"))
		fprintf(out, "  JIT frames unnamed (no perf map entry, shown [anon]+0x...): %" PRIu64
			" of %" PRIu64 "\n", profile_get_meta_u64(p, "count.jit_frames_unnamed"),
			profile_get_meta_u64(p, "count.jit_frames"));
}

int report_profile(FILE *out, struct report_opts *o, const struct profile *p, const char *path)
{
	struct hot_funcs t = { 0 };
	struct hot_filter f = { .stack_flags = o->stack_flags };
	struct strtab *names;
	struct profile_weight w;
	uint64_t total = 0;
	size_t i;
	int err;

	/* a recording without CPU samples is weighed by what it has */
	if (!o->weight)
		o->weight = profile_weight_default(p);
	if (profile_weight_get(p, o->weight, &w))
		return -EINVAL;
	o->weight_unit = w.unit;
	names = strtab_new();
	if (!names)
		return -ENOMEM;
	for (i = 0; i < p->samples.nr; i++)
		total += profile_weight_of(&w, &p->samples.items[i]);
	print_header(out, o, p, path, total);
	err = report_time_breakdown(out, o, p);
	if (!err)
		err = report_syscalls(out, o, p);
	if (!err)
		err = report_slow_sites(out, o, p);
	if (!err)
		err = report_processes(out, o, p);
	if (!err)
		err = report_timeline(out, o, p);
	if (!err)
		err = report_requests(out, o, p);
	if (!err)
		err = report_io(out, o, p);
	if (!err)
		err = report_stalls(out, o, p);
	if (!err)
		err = report_awaits(out, o, p);
	if (!err)
		err = report_gil(out, o, p);
	if (!err)
		err = hot_funcs_count(p, &w, &f, names, &t);
	if (!err) {
		print_functions(out, o, &t, total);
		err = print_stacks(out, o, p, &w);
	}
	if (!err) {
		print_stack_quality(out, o, p);
		print_python(out, o, p);
		print_losses(out, o, p);
	}
	hot_funcs_release(&t);
	strtab_free(names);
	return err;
}
