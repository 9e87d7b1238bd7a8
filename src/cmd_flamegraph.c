// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof flamegraph` and `latprof diff`: a profile (or folded text from
 * any tool) to an interactive SVG. Both verbs share the display options;
 * loading the inputs is stacks_load.c's, the defaults of the picture
 * stacks_svg.c's, rendering flamegraph/svg.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "flamegraph/svg.h"
#include "src/loadprof.h"
#include "src/stacks.h"
#include "src/stacks_load.h"
#include "src/stacks_svg.h"
#include "src/util.h"
#include "src/verbs.h"

static const char display_help[] =
	"  -w, --weight W       what a stack is weighted by (default: cpu, else latency,\n"
	"                       else offcpu, the first the profile has values of): cpu,\n"
	"                       samples, cpu-time, latency, syscalls, offcpu, or wall (hot/cold:\n"
	"                       on-CPU and off-CPU time together, coloured by their split);\n"
	"                       W:path, W:idle, W:readiness: only on-path, only idle, or\n"
	"                       only undecided syscall waits (docs/syscalls.md)\n"
	"      --title T        title (default: from the weight)\n"
	"      --subtitle S     second line (default: the recorded command and duration)\n"
	"      --width PX       image width, 200 to 20000 (default 1200)\n"
	"      --minwidth PX|N% leave out frames narrower than PX pixels or N% of the\n"
	"                       total; 0 keeps every frame (default 0.1 pixels)\n"
	"      --inverted       icicle graph: roots at the top\n"
	"      --colors P       palette of ordinary frames: " FLAME_PALETTES "\n"
	"                       (default hot)\n"
	"      --per-pid        first frame 'comm-PID' instead of 'comm'\n"
	"      --py-lines       Python frames 'f (file.py:LINE)': one frame per line run\n"
	"      --native         Python programs' full native stacks: keep the interpreter's\n"
	"                       frames around their Python frames (docs/python.md)\n"
	"      --no-script      a static image, without the interactive viewer\n"
	"  -h, --help           this help\n";

static const char flamegraph_usage[] =
	"usage: latprof flamegraph [FILE] [OPTIONS] [-o SVG]\n"
	"\n"
	"Draw an interactive flame graph of a profile (default " PROFILE_DEFAULT_PATH "): hover\n"
	"for details, click to zoom, Ctrl-F or Search to highlight frames.\n"
	"\n"
	"      --folded FILE    read folded stacks ('root;...;leaf WEIGHT' lines, from\n"
	"                       any tool) instead of a profile; '-' reads stdin\n"
	"  -o, --output SVG     output file, '-' for stdout (default flame.svg)\n";

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

struct flame_cmd {
	struct stacks_svg look;		/* display options, then the defaults */
	const char *out;
	const char *folded;		/* flamegraph --folded FILE */
	bool force_folded;		/* diff --folded */
};

/* "--minwidth 0.5" (pixels) or "--minwidth 2%" (of the total). */
static int parse_minwidth(const char *s, struct flame_svg_opts *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!strcmp(end, "%")) {
		if (v > 100)
			return -EINVAL;
		o->min_width_pct = v;
		return 0;
	}
	if (*end || v > 20000)
		return -EINVAL;
	o->min_width_px = v;
	return 0;
}

/* One display option (shared by both verbs): 0, -EINVAL after printing, or 1 if not one. */
static int display_option(struct flame_cmd *cmd, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'w': cmd->look.weight = arg; return 0;
	case 'T': cmd->look.svg.title = arg; return 0;
	case 'S': cmd->look.svg.subtitle = arg; return 0;
	case 'i': cmd->look.svg.inverted = true; return 0;
	case 'P': cmd->look.stack_flags |= STACKS_FLAG_PER_PID; return 0;
	case 'y': cmd->look.stack_flags |= STACKS_FLAG_PY_LINES; return 0;
	case 'X': cmd->look.stack_flags |= STACKS_FLAG_NATIVE; return 0;
	case 'n': cmd->look.svg.no_script = true; return 0;
	case 'o': cmd->out = arg; return 0;
	case 'W':
		if (parse_u64(arg, 200, 20000, &v)) {
			pr_err("bad --width '%s' (want pixels, 200 to 20000)", arg);
			return -EINVAL;
		}
		cmd->look.svg.width_px = v;
		return 0;
	case 'm':
		if (parse_minwidth(arg, &cmd->look.svg)) {
			pr_err("bad --minwidth '%s' (want pixels, e.g. 0.5, or a percentage, e.g. 1%%)",
			       arg);
			return -EINVAL;
		}
		return 0;
	case 'c':
		if (flame_palette_parse(arg, &cmd->look.svg.palette)) {
			pr_err("unknown palette '%s' (want %s)", arg, FLAME_PALETTES);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}

#define DISPLAY_LONGOPTS                                                 \
	{ "weight", required_argument, NULL, 'w' },                      \
	{ "title", required_argument, NULL, 'T' },                       \
	{ "subtitle", required_argument, NULL, 'S' },                    \
	{ "width", required_argument, NULL, 'W' },                       \
	{ "minwidth", required_argument, NULL, 'm' },                    \
	{ "inverted", no_argument, NULL, 'i' },                          \
	{ "colors", required_argument, NULL, 'c' },                      \
	{ "per-pid", no_argument, NULL, 'P' },                           \
	{ "py-lines", no_argument, NULL, 'y' },                          \
	{ "native", no_argument, NULL, 'X' },                            \
	{ "no-script", no_argument, NULL, 'n' },                         \
	{ "output", required_argument, NULL, 'o' },                      \
	{ "help", no_argument, NULL, 'h' }

static int write_svg(FILE *out, void *arg)
{
	struct flame *f = ((void **)arg)[0];
	const struct flame_svg_opts *o = ((void **)arg)[1];

	return flame_write_svg(f, o, out);
}

/* Fill in what the options left open, then write @f. Returns the exit status. */
static int render(struct flame_cmd *cmd, struct flame *f, const char *default_title)
{
	void *job[2] = { f, &cmd->look.svg };
	int err;

	stacks_svg_finish(&cmd->look, default_title);
	if (!flame_total(f))
		pr_warn("no stacks with a weight (--weight %s): the graph is empty",
			cmd->look.weight);
	err = write_file_atomic(cmd->out, write_svg, job);
	if (err) {
		pr_err("cannot write %s: %s", cmd->out, strerror(-err));
		return EXIT_STATUS_FAILURE;
	}
	return EXIT_STATUS_OK;
}

/* Checks common to both verbs once options are parsed; prints. */
static int check_common(const struct flame_cmd *cmd)
{
	int err;

	if (cmd->look.weight && !stacks_svg_knows_weight(cmd->look.weight)) {
		pr_err("unknown weight '%s' (want %s)", cmd->look.weight, PROFILE_WEIGHTS);
		return -EINVAL;
	}
	err = output_check(cmd->out);
	if (err)
		pr_err("cannot write %s: %s", cmd->out, strerror(-err));
	return err;
}

static int flamegraph_args(struct flame_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		DISPLAY_LONGOPTS,
		{ "folded", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("%s%s", flamegraph_usage, display_help);
			return 1;
		}
		if (c == 'F') {
			cmd->folded = optarg;
			continue;
		}
		err = display_option(cmd, c, optarg);
		if (err > 0)
			pr_option_error("flamegraph", argv, c);
		if (err)
			return -EINVAL;
	}
	if (argc - optind > (cmd->folded ? 0 : 1)) {
		pr_err(cmd->folded ? "a profile FILE and --folded: choose one" :
		       "too many arguments (one profile at a time)");
		return -EINVAL;
	}
	return check_common(cmd);
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
	status = render(&cmd, f, NULL);
out:
	flame_free(f);
	stacks_svg_release(&cmd.look);
	return status;
}

static int diff_args(struct flame_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		DISPLAY_LONGOPTS,
		{ "folded", no_argument, NULL, 'F' },
		{ "no-normalize", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("%s%s", diff_usage, display_help);
			return 1;
		}
		if (c == 'F' || c == 'N') {
			cmd->force_folded |= c == 'F';
			cmd->look.svg.normalize &= c != 'N';
			continue;
		}
		err = display_option(cmd, c, optarg);
		if (err > 0)
			pr_option_error("diff", argv, c);
		if (err)
			return -EINVAL;
	}
	if (argc - optind < 1 || argc - optind > 2) {
		pr_err("want BEFORE AFTER (see 'latprof diff --help')");
		return -EINVAL;
	}
	return check_common(cmd);
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
	status = render(&cmd, f, "Differential flame graph");
out:
	flame_free(f);
	stacks_svg_release(&cmd.look);
	return status;
}
