// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof timeline`: the per-interval activity of a recording as an SVG
 * chart. The chart is timeline_svg.c's, its drawing flamegraph/timechart.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/pprof.h"
#include "src/weight.h"
#include "src/timeline_svg.h"
#include "src/lib/util.h"
#include "src/verbs.h"

static const char timeline_usage[] =
	"usage: latprof timeline [FILE] [OPTIONS] [-o SVG]\n"
	"\n"
	"Chart what the targets of a recording (default " PROFILE_DEFAULT_PATH ") did in each\n"
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

static int write_chart(FILE *f, void *arg)
{
	return timeline_svg_write(arg, f);
}

/* Chart @p into @out; prints the one error. 0, -EINVAL (no timeline) or -errno. */
static int render(const struct profile *p, struct timeline_svg *ts, const char *out)
{
	int err = timeline_svg_build(ts, p);

	if (err == -ENODATA) {
		pr_err("the profile has no timeline (recorded by an older latprof?)");
		return -EINVAL;
	}
	if (err)
		return err;
	err = write_file_atomic(out, write_chart, ts);
	if (err)
		pr_err("cannot write %s: %s", out, strerror(-err));
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
	struct timeline_svg ts;
	const char *out = "timeline.svg";
	struct profile *p = NULL;
	uint64_t v;
	int c, err, status = EXIT_STATUS_USAGE;

	timeline_svg_init(&ts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'T':
			ts.chart.title = optarg;
			break;
		case 'W':
		case 'H':
			if (parse_u64(optarg, c == 'W' ? 400 : 200, c == 'W' ? 20000 : 5000, &v)) {
				pr_err("invalid --%s '%s'", c == 'W' ? "width" : "height", optarg);
				return EXIT_STATUS_USAGE;
			}
			*(c == 'W' ? &ts.chart.width_px : &ts.chart.height_px) = v;
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
	err = render(p, &ts, out);
	status = !err ? EXIT_STATUS_OK : err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
	timeline_svg_release(&ts);
	profile_free(p);
	return status;
}
