// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile's timeline as a time chart (timeline_svg.h): intervals become
 * points in units per second, the series and colours are fixed here.
 */
#include "src/runmeta.h"
#include "src/timeline_svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/timeline.h"

/* Bar colours; the syscall categories have the flame graph's colours. */
static const struct timechart_series series[TIMELINE_SERIES_NR] = {
	[TIMELINE_SERIES_CPU] = { "cpu", { 226, 84, 56 } },
	[TIMELINE_SERIES_FILE] = { "file", { 190, 140, 60 } },
	[TIMELINE_SERIES_NETWORK] = { "network", { 150, 90, 225 } },
	[TIMELINE_SERIES_SYNC] = { "sync", { 225, 210, 60 } },
	[TIMELINE_SERIES_GIL] = { "gil", { 60, 170, 150 } },
	[TIMELINE_SERIES_SLEEP] = { "sleep", { 140, 185, 235 } },
	[TIMELINE_SERIES_OTHER] = { "other syscalls", { 235, 140, 170 } },
};

void timeline_svg_init(struct timeline_svg *ts)
{
	*ts = (struct timeline_svg){ .chart = {
		.title = "Timeline", .x_label = "time since the start of the recording (s)",
		.y_label = "seconds per second (CPU, syscalls)", .line_label = "RSS (MB)",
		.line_unit = "MB", .line_color = { 31, 58, 147 }, .value_unit = "s/s" } };
}

void timeline_svg_release(struct timeline_svg *ts)
{
	free(ts->points);
	free(ts->details);
	ts->points = NULL;
	ts->details = NULL;
}

/* The chart's points: values per second of each interval. */
static int build_points(struct timeline_svg *ts, const struct timeline *tl)
{
	size_t i, k, n = tl->items.nr;

	ts->points = calloc(n ? n : 1, sizeof(*ts->points));
	ts->details = calloc(n ? n : 1, sizeof(*ts->details));
	if (!ts->points || !ts->details)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct timeline_interval *v = &tl->items.items[i];
		struct timechart_point *pt = &ts->points[i];

		pt->start_s = v->start_ns / 1e9;
		pt->duration_s = v->duration_ns / 1e9;
		for (k = 0; k < TIMELINE_SERIES_NR; k++)
			pt->value[k] = v->duration_ns ? (double)v->ns[k] / v->duration_ns : 0;
		/* no target alive at the end: no memory to draw */
		pt->line = v->procs ? v->rss_kb / 1024.0 : -1;
		snprintf(ts->details[i], sizeof(ts->details[i]),
			 "files opened %" PRIu64 ", processes %" PRIu32, v->opens, v->procs);
		pt->detail = ts->details[i];
	}
	ts->chart.points = ts->points;
	ts->chart.nr_points = n;
	return 0;
}

/* Take series @k out of the chart (its points' values too). */
static void drop_series(struct timeline_svg *ts, size_t k)
{
	size_t i, n = ts->chart.nr_series - k - 1;

	memmove(ts->chart.series + k, ts->chart.series + k + 1, n * sizeof(ts->chart.series[0]));
	for (i = 0; i < ts->chart.nr_points; i++)
		memmove(ts->points[i].value + k, ts->points[i].value + k + 1, n * sizeof(double));
	ts->chart.nr_series--;
}

/*
 * Subtitle and series; a profile without a CPU column charts the syscall
 * series only, and one without GIL waits has no gil series.
 */
static void build_series(struct timeline_svg *ts, const struct timeline *tl, const char *cmd)
{
	snprintf(ts->subtitle, sizeof(ts->subtitle), "%.100s%s%.2f s intervals", cmd ? cmd : "",
		 cmd ? ", " : "", tl->interval_ns / 1e9);
	ts->chart.subtitle = ts->subtitle;
	memcpy(ts->chart.series, series, sizeof(series));
	ts->chart.nr_series = TIMELINE_SERIES_NR;
	if (!timeline_has(tl, TIMELINE_SERIES_GIL))
		drop_series(ts, TIMELINE_SERIES_GIL);
	if (!tl->has_cpu)
		drop_series(ts, TIMELINE_SERIES_CPU);
}

int timeline_svg_build(struct timeline_svg *ts, const struct profile *p)
{
	struct timeline tl;
	int err;

	timeline_init(&tl, 0, 0);
	err = timeline_load(&tl, p);
	if (!err && !tl.items.nr)
		err = -ENODATA;
	if (!err)
		err = build_points(ts, &tl);
	if (!err)
		build_series(ts, &tl, profile_get_meta(p, RUN_META_COMMAND_LINE));
	timeline_release(&tl);
	return err;
}

int timeline_svg_write(const struct timeline_svg *ts, FILE *out)
{
	return timechart_write_svg(&ts->chart, out);
}
