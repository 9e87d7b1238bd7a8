// SPDX-License-Identifier: GPL-2.0-only
/* The options both flame graph verbs take, and the drawing (flameopts.h). */
#include "src/flameopts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/svg.h"
#include "src/weight.h"
#include "src/stacks.h"
#include "src/lib/util.h"
#include "src/verbs.h"

const char flameopts_help[] =
	"  -w, --weight W       what a stack is weighted by (default: cpu, else latency,\n"
	"                       else offcpu, the first the profile has values of): cpu,\n"
	"                       samples, cpu-time, latency, syscalls, offcpu, or wall\n"
	"                       (hot/cold: on-CPU and off-CPU time together, coloured by\n"
	"                       their split); W:path, W:idle, W:readiness: only on-path,\n"
	"                       only idle, or only undecided syscall waits (docs/syscalls.md)\n"
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

int flameopts_option(struct flame_cmd *cmd, int c, const char *arg)
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
	/* a verb's own, in its longopts only: flamegraph --folded FILE, diff --folded */
	case 'F':
		if (arg)
			cmd->folded = arg;
		else
			cmd->force_folded = true;
		return 0;
	case 'N': cmd->look.svg.normalize = false; return 0;
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

static int write_svg(FILE *out, void *arg)
{
	struct flame *f = ((void **)arg)[0];
	const struct flame_svg_opts *o = ((void **)arg)[1];

	return flame_write_svg(f, o, out);
}

int flameopts_render(struct flame_cmd *cmd, struct flame *f, const char *default_title)
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

int flameopts_check(const struct flame_cmd *cmd)
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

int flameopts_parse(struct flame_cmd *cmd, int argc, char **argv, const struct option *longopts,
		    const char *verb, const char *usage)
{
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("%s%s", usage, flameopts_help);
			return 1;
		}
		err = flameopts_option(cmd, c, optarg);
		if (err > 0)
			pr_option_error(verb, argv, c);
		if (err)
			return -EINVAL;
	}
	return 0;
}
