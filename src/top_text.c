// SPDX-License-Identifier: GPL-2.0-only
/* The lines of `latprof top`, for the screen and for -b (top_text.h). */
#include "src/top_text.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "src/report_fmt.h"

static const char *const group_names[HOT_WAITS] = {
	[HOT_WAIT_PATH] = "on the path of work",
	[HOT_WAIT_READY] = "readiness waits, not decided",
	[HOT_WAIT_IDLE] = "idle waits, apart",
};

/* The last interval in seconds (at least a microsecond: no division by 0). */
static double interval_s(const struct top_model *m)
{
	return m->hdr.interval_ns > 1000 ? m->hdr.interval_ns / 1e9 : 1e-6;
}

/* @ns of the last interval per second, as a duration. */
static void per_s(const struct top_model *m, uint64_t ns, char *buf, size_t size)
{
	report_fmt_ns(buf, size, (uint64_t)(ns / interval_s(m)));
}

void top_text_header(const struct top_model *m, char *l1, char *l2, size_t size)
{
	const struct top_header *h = &m->hdr;
	char clock[16] = "", filter[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	if (localtime_r(&now, &tm))
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	snprintf(l1, size,
		 "latprof top - %s  up %.1fs  every %.2fs  samples %.0f/s (%" PRIu64 ")"
		 "  lost %" PRIu64 "  processes %u  threads %u",
		 clock, h->elapsed_ns / 1e9, h->interval_ns / 1e9, h->samples / interval_s(m),
		 h->samples_all, h->lost_all, h->processes, h->threads);
	for (i = 0; m->filter.pid && i < m->procs.nr; i++)
		if (m->procs.items[i].pid == m->filter.pid)
			snprintf(filter, sizeof(filter), "  process %" PRIu64 " (%s) only",
				 m->filter.pid, m->procs.items[i].comm);
	if (m->filter.pid && !filter[0])
		snprintf(filter, sizeof(filter), "  process %" PRIu64 " only", m->filter.pid);
	snprintf(l2, size, "CPU: targets %.1f%% of a core%s, latprof %.1f%%%s",
		 h->cpu_ns / interval_s(m) / 1e7,
		 h->have_cpu ? "" : " (no CPU samples: --mode without cpu)", h->self_cpu * 100,
		 filter);
}

void top_text_title(const struct top_model *m, enum top_view v, char *buf, size_t size)
{
	switch (v) {
	case TOP_VIEW_FUNCS:
		if (m->zoom)
			snprintf(buf, size, "Callers and callees of %s (CPU, last interval | since start)",
				 m->zoom);
		else
			snprintf(buf, size, "Functions by own CPU (last interval | since start)");
		break;
	case TOP_VIEW_WAITS:
		snprintf(buf, size, "Slow call sites (syscalls >= %" PRIu64 " us; per second | "
			 "since start)", m->hdr.min_duration_us);
		break;
	default:
		snprintf(buf, size, "Syscalls (per second of the last interval)");
		break;
	}
}

const char *top_text_columns(enum top_view v)
{
	switch (v) {
	case TOP_VIEW_FUNCS:
		return "  OWN%  TOTAL%     OWN   TOTAL |  OWN ALL TOTAL ALL  FUNCTION";
	case TOP_VIEW_WAITS:
		return " TIME/S CALLS/S    AVG    P99    MAX |  TOTAL  CALLS  SITE";
	default:
		return "CALLS/S ERRS/S TIME/S    P50    P99    MAX |  CALLS  SYSCALL";
	}
}

void top_text_func(const struct top_model *m, const struct top_func *f, char *buf, size_t size)
{
	char self[16], total[16], self_all[16], total_all[16];

	report_fmt_ns(self, sizeof(self), f->self);
	report_fmt_ns(total, sizeof(total), f->total);
	report_fmt_ns(self_all, sizeof(self_all), f->self_all);
	report_fmt_ns(total_all, sizeof(total_all), f->total_all);
	snprintf(buf, size, "%6.1f %6.1f %7s %7s | %8s %8s  %s",
		 report_fmt_pct(f->self, m->hdr.cpu_ns), report_fmt_pct(f->total, m->hdr.cpu_ns),
		 self, total, self_all, total_all, f->name);
}

void top_text_site(const struct top_model *m, const struct top_site *s, char *buf, size_t size)
{
	const char *text = hot_site_text(s->name);
	size_t sys = strcspn(text, "\t");
	char rate[16], avg[16] = "-", p99[16] = "-", max[16], all[16];

	per_s(m, s->ns, rate, sizeof(rate));
	if (s->calls)
		report_fmt_ns(avg, sizeof(avg), s->ns / s->calls);
	if (s->p99_ns)
		report_fmt_ns(p99, sizeof(p99), s->p99_ns);
	report_fmt_ns(max, sizeof(max), s->max_ns);
	report_fmt_ns(all, sizeof(all), s->ns_all);
	snprintf(buf, size, "%7s %7.1f %6s %6s %6s | %6s %6" PRIu64 "  %.*s  %s", rate,
		 s->calls / interval_s(m), avg, p99, max, all, s->calls_all, (int)sys, text,
		 text[sys] ? text + sys + 1 : "");
}

void top_text_sys(const struct top_model *m, const struct top_sys *s, char *buf, size_t size)
{
	char rate[16], p50[16] = "-", p99[16] = "-", max[16];

	per_s(m, s->ns, rate, sizeof(rate));
	if (s->calls) {
		report_fmt_ns(p50, sizeof(p50), s->p50_ns);
		report_fmt_ns(p99, sizeof(p99), s->p99_ns);
	}
	report_fmt_ns(max, sizeof(max), s->max_ns);
	snprintf(buf, size, "%7.0f %6.0f %6s %6s %6s %6s | %6" PRIu64 "  %s",
		 s->calls / interval_s(m), s->errors / interval_s(m), rate, p50, p99, max,
		 s->calls_all, s->name);
}

void top_text_group(const struct top_model *m, enum hot_wait w, char *buf, size_t size)
{
	uint64_t ns = 0, calls = 0;
	char rate[16];
	size_t i;

	for (i = 0; i < m->sites.nr; i++)
		if (m->sites.items[i].wait == w) {
			ns += m->sites.items[i].ns;
			calls += m->sites.items[i].calls;
		}
	per_s(m, ns, rate, sizeof(rate));
	snprintf(buf, size, "%s: %s/s in %.1f calls/s", group_names[w], rate,
		 calls / interval_s(m));
}

/* The rows of a function table that ran in the interval, under @title. */
static void print_funcs(FILE *out, const struct top_model *m, const char *title,
			const struct top_func *rows, size_t nr, unsigned int max)
{
	char line[512];
	size_t i, n;

	fprintf(out, "%s\n%s\n", title, top_text_columns(TOP_VIEW_FUNCS));
	for (i = n = 0; i < nr && n < max; i++) {
		if (!rows[i].total)
			continue;
		n++;
		top_text_func(m, &rows[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

void top_text_print(FILE *out, struct top_model *m, unsigned int rows)
{
	char l1[512], l2[512], line[512];
	enum hot_wait w;
	size_t i, n;

	top_text_header(m, l1, l2, sizeof(l1));
	fprintf(out, "%s\n%s\n\n", l1, l2);
	top_model_sort(m, TOP_VIEW_FUNCS, TOP_SORT_NOW);
	top_text_title(m, TOP_VIEW_FUNCS, line, sizeof(line));
	if (m->zoom) {
		print_funcs(out, m, "Callers", m->callers.items, m->callers.nr, rows);
		print_funcs(out, m, "Callees", m->callees.items, m->callees.nr, rows);
	} else {
		print_funcs(out, m, line, m->funcs.items, m->funcs.nr, rows);
	}
	top_model_sort(m, TOP_VIEW_WAITS, TOP_SORT_NOW);
	top_text_title(m, TOP_VIEW_WAITS, line, sizeof(line));
	fprintf(out, "\n%s\n%s\n", line, top_text_columns(TOP_VIEW_WAITS));
	for (w = 0; w < HOT_WAITS; w++) {
		for (i = n = 0; i < m->sites.nr; i++) {
			if (m->sites.items[i].wait != w || !m->sites.items[i].calls || n >= rows)
				continue;
			if (!n++) {
				top_text_group(m, w, line, sizeof(line));
				fprintf(out, "%s\n", line);
			}
			top_text_site(m, &m->sites.items[i], line, sizeof(line));
			fprintf(out, "%s\n", line);
		}
	}
	top_model_sort(m, TOP_VIEW_SYSCALLS, TOP_SORT_NOW);
	top_text_title(m, TOP_VIEW_SYSCALLS, line, sizeof(line));
	fprintf(out, "\n%s\n%s\n", line, top_text_columns(TOP_VIEW_SYSCALLS));
	for (i = 0; i < m->sys.nr && i < rows && m->sys.items[i].calls; i++) {
		top_text_sys(m, &m->sys.items[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
	fflush(out);
}
