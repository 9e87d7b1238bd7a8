// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof flamegraph`: a profile (or folded text from any tool) to an
 * interactive SVG; the display options are flameopts.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "src/flameopts.h"
#include "src/weight.h"
#include "src/stacks_load.h"
#include "src/lib/util.h"
#include "src/verbs.h"

static const char flamegraph_usage[] =
	"usage: latprof flamegraph [FILE] [OPTIONS] [-o SVG]\n"
	"\n"
	"Draw an interactive flame graph of a profile (default " PROFILE_DEFAULT_PATH "): hover\n"
	"for details, click to zoom, Ctrl-F or Search to highlight frames.\n"
	"\n"
	"      --folded FILE    read folded stacks ('root;...;leaf WEIGHT' lines, from\n"
	"                       any tool) instead of a profile; '-' reads stdin\n"
	"  -o, --output SVG     output file, '-' for stdout (default flame.svg)\n";

static int flamegraph_args(struct flame_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		FLAMEOPTS_LONGOPTS,
		{ "folded", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int err = flameopts_parse(cmd, argc, argv, longopts, "flamegraph", flamegraph_usage);

	if (err)
		return err;
	if (argc - optind > (cmd->folded ? 0 : 1)) {
		pr_err(cmd->folded ? "a profile FILE and --folded: choose one" :
		       "too many arguments (one profile at a time)");
		return -EINVAL;
	}
	return flameopts_check(cmd);
}

int cmd_flamegraph(int argc, char **argv)
{
	struct flame_cmd cmd = { .out = "flame.svg",
				 .look.svg.min_width_px = STACKS_SVG_MIN_WIDTH_PX };
	struct flame *f = NULL;
	int err, status = EXIT_STATUS_USAGE;

	err = flamegraph_args(&cmd, argc, argv);
	if (err)
		return err > 0 ? EXIT_STATUS_OK : EXIT_STATUS_USAGE;
	f = flame_new();
	if (!f) {
		status = EXIT_STATUS_FAILURE;
		goto out;
	}
	if (cmd.folded)
		err = stacks_load_folded(cmd.folded, 0, f);
	else
		err = stacks_load_profile(optind < argc ? argv[optind] : NULL, &cmd.look, f);
	if (err) {
		status = err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
		goto out;
	}
	status = flameopts_render(&cmd, f, NULL);
out:
	flame_free(f);
	stacks_svg_release(&cmd.look);
	return status;
}
