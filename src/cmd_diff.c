// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof diff`: two profiles or folded files (or one difffolded file) to a
 * differential flame graph; the display options are flameopts.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "src/flameopts.h"
#include "src/stacks_load.h"
#include "src/lib/util.h"
#include "src/verbs.h"

static const char diff_usage[] =
	"usage: latprof diff BEFORE AFTER [OPTIONS] [-o SVG]\n"
	"       latprof diff --folded DIFFFOLDED [OPTIONS] [-o SVG]\n"
	"\n"
	"Draw a differential flame graph: the shape of AFTER, each frame red where it\n"
	"grew since BEFORE and blue where it shrank. BEFORE and AFTER are profiles or\n"
	"folded stacks (told apart by content); one file of 'STACK BEFORE AFTER' lines\n"
	"(FlameGraph's difffolded) works too.\n"
	"\n"
	"      --folded         read the inputs as folded stacks whatever they look like\n"
	"      --no-normalize   compare raw weights, not each frame's share of its total\n"
	"  -o, --output SVG     output file, '-' for stdout (default diff.svg)\n";

static int diff_args(struct flame_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		FLAMEOPTS_LONGOPTS,
		{ "folded", no_argument, NULL, 'F' },
		{ "no-normalize", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int err = flameopts_parse(cmd, argc, argv, longopts, "diff", diff_usage);

	if (err)
		return err;
	if (argc - optind < 1 || argc - optind > 2) {
		pr_err("want BEFORE AFTER (see 'latprof diff --help')");
		return -EINVAL;
	}
	return flameopts_check(cmd);
}

int cmd_diff(int argc, char **argv)
{
	struct flame_cmd cmd = { .out = "diff.svg",
				 .look.svg.normalize = true,
				 .look.svg.min_width_px = STACKS_SVG_MIN_WIDTH_PX };
	struct flame *f = NULL;
	int err, status = EXIT_STATUS_USAGE;

	err = diff_args(&cmd, argc, argv);
	if (err)
		return err > 0 ? EXIT_STATUS_OK : EXIT_STATUS_USAGE;
	if (argc - optind == 2 &&
	    asprintf(&cmd.look.subtitle, "before: %s, after: %s", argv[optind], argv[optind + 1]) < 0)
		cmd.look.subtitle = NULL;
	f = flame_new();
	err = !f ? -ENOMEM :
	      stacks_load_diff(argv + optind, argc - optind, cmd.force_folded, &cmd.look, f);
	if (err) {
		status = err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
		goto out;
	}
	cmd.look.svg.mode = FLAME_SVG_MODE_DIFF;
	status = flameopts_render(&cmd, f, "Differential flame graph");
out:
	flame_free(f);
	stacks_svg_release(&cmd.look);
	return status;
}
