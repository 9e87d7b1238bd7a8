// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof timeline`: the per-interval activity of a recording as an SVG
 * chart: CPU and syscall time by category as stacked bars (seconds per
 * second: 1.0 = one CPU busy, or one thread waiting, for the whole
 * interval) and the targets' resident memory as a line. Rendering is
 * flamegraph/timechart.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/timechart.h"
#include "src/loadprof.h"
#include "src/timeline.h"
#include "src/util.h"
#include "src/verbs.h"

static const char timeline_usage[] =
	"usage: latprof timeline [FILE] [OPTIONS] [-o SVG]\n"
	"\n"
	"Chart what the targets of a recording (default latprof.pb.gz) did in each\n"
	"interval of record --interval: CPU time and syscall time by category\n"
	"(file, network, sync, sleep, other) as stacked bars in seconds per second,\n"
	"resident memory (RSS, all targets) as a line; hover an interval for its\n"
	"numbers, files opened and processes alive.\n"
	"\n"
	"      --title T        title (default \"Timeline\")\n"
	"      --width PX       image width, 400 to 20000 (default 1200)\n"
	"      --height PX      image height, 200 to 5000 (default 480)\n"
	"  -o, --output SVG     output file, '-' for stdout (default timeline.svg)\n"
	"  -h, --help           this help\n";

/* Bar colours; the syscall categories have the flame graph's colours. */
static const struct timechart_series series[TIMELINE_SERIES_NR] = {
	[TIMELINE_SERIES_CPU] = { "cpu", { 226, 84, 56 } },
	[TIMELINE_SERIES_FILE] = { "file", { 190, 140, 60 } },
	[TIMELINE_SERIES_NETWORK] = { "network", { 150, 90, 225 } },
	[TIMELINE_SERIES_SYNC] = { "sync", { 225, 210, 60 } },
	[TIMELINE_SERIES_SLEEP] = { "sleep", { 140, 185, 235 } },
	[TIMELINE_SERIES_OTHER] = { "other syscalls", { 235, 140, 170 } },
};

struct timeline_job {
	struct timechart chart;
	struct timechart_point *points;
	char (*details)[64];
};

static int write_chart(FILE *f, void *arg)
{
	return timechart_write_svg(&((struct timeline_job *)arg)->chart, f);
}

/* The chart's points: values per second of each interval. */
static int build_points(const struct timeline *tl, struct timeline_job *job)
{
	size_t i, k, n = tl->items.nr;

	job->points = calloc(n ? n : 1, sizeof(*job->points));
	job->details = calloc(n ? n : 1, sizeof(*job->details));
	if (!job->points || !job->details)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct timeline_interval *v = &tl->items.items[i];
		struct timechart_point *pt = &job->points[i];

		pt->start_s = v->start_ns / 1e9;
		pt->duration_s = v->duration_ns / 1e9;
		for (k = 0; k < TIMELINE_SERIES_NR; k++)
			pt->value[k] = v->duration_ns ? (double)v->ns[k] / v->duration_ns : 0;
		/* no target alive at the end: no memory to draw */
		pt->line = v->procs ? v->rss_kb / 1024.0 : -1;
		snprintf(job->details[i], sizeof(job->details[i]),
			 "files opened %" PRIu64 ", processes %" PRIu32, v->opens, v->procs);
		pt->detail = job->details[i];
	}
	job->chart.points = job->points;
	job->chart.nr_points = n;
	return 0;
}

static int render(const struct profile *p, struct timeline_job *job, const char *out)
{
	struct timeline tl;
	char subtitle[160];
	const char *cmd = profile_get_meta(p, "command_line");
	int err;

	timeline_init(&tl, 0, 0);
	err = timeline_load(&tl, p);
	if (!err && !tl.items.nr) {
		pr_err("the profile has no timeline (recorded by an older latprof?)");
		err = -EINVAL;
	}
	if (!err)
		err = build_points(&tl, job);
	if (!err) {
		snprintf(subtitle, sizeof(subtitle), "%.100s%s%.2f s intervals", cmd ? cmd : "",
			 cmd ? ", " : "", tl.interval_ns / 1e9);
		job->chart.subtitle = subtitle;
		memcpy(job->chart.series, series, sizeof(series));
		job->chart.nr_series = tl.has_cpu ? TIMELINE_SERIES_NR : TIMELINE_SERIES_NR - 1;
		if (!tl.has_cpu)	/* no CPU column: the syscall series only */
			memmove(job->chart.series, series + 1, sizeof(series) - sizeof(series[0]));
		for (size_t i = 0; !tl.has_cpu && i < job->chart.nr_points; i++)
			memmove(job->points[i].value, job->points[i].value + 1,
				sizeof(double) * (TIMELINE_SERIES_NR - 1));
		err = write_file_atomic(out, write_chart, job);
		if (err)
			pr_err("cannot write %s: %s", out, strerror(-err));
	}
	timeline_release(&tl);
	return err;
}

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "title", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "height", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct timeline_job job = { .chart = {
		.title = "Timeline", .x_label = "time since the start of the recording (s)",
		.y_label = "seconds per second (CPU, syscalls)", .line_label = "RSS (MB)",
		.line_unit = "MB", .line_color = { 31, 58, 147 }, .value_unit = "s/s" } };
	const char *out = "timeline.svg";
	struct profile *p = NULL;
	uint64_t v;
	int c, err, status = EXIT_STATUS_USAGE;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'T':
			job.chart.title = optarg;
			break;
		case 'W':
		case 'H':
			if (parse_u64(optarg, c == 'W' ? 400 : 200, c == 'W' ? 20000 : 5000, &v)) {
				pr_err("invalid --%s '%s'", c == 'W' ? "width" : "height", optarg);
				return EXIT_STATUS_USAGE;
			}
			*(c == 'W' ? &job.chart.width_px : &job.chart.height_px) = v;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(timeline_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("timeline", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (argc - optind > 1) {
		pr_err("too many arguments (one profile at a time)");
		return EXIT_STATUS_USAGE;
	}
	err = output_check(out);
	if (err) {
		pr_err("cannot write %s: %s", out, strerror(-err));
		return EXIT_STATUS_USAGE;
	}
	p = profile_load(optind < argc ? argv[optind] : NULL);
	if (!p)
		return EXIT_STATUS_USAGE;
	err = render(p, &job, out);
	status = !err ? EXIT_STATUS_OK : err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
	free(job.points);
	free(job.details);
	profile_free(p);
	return status;
}
