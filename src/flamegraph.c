// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof flamegraph` and `latprof diff`: a profile (or folded text from
 * any tool) to an interactive SVG. Both verbs share the display options and
 * the loading of inputs; rendering is flamegraph/svg.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flamegraph/flame.h"
#include "flamegraph/folded.h"
#include "flamegraph/svg.h"
#include "src/flamegraph.h"
#include "src/loadprof.h"
#include "src/stacks.h"
#include "src/syscalls.h"
#include "src/util.h"
#include "src/verbs.h"

#define FOLDED_STDIN_MAX (1ULL << 30)	/* a pipe cannot make us allocate without end */

static const char display_help[] =
	"  -w, --weight W       what a stack is weighted by (default cpu): cpu, samples,\n"
	"                       cpu-time, latency, syscalls, offcpu, or wall (hot/cold:\n"
	"                       on-CPU and off-CPU time together, coloured by their split)\n"
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
	"      --no-script      a static image, without the interactive viewer\n"
	"  -h, --help           this help\n";

static const char flamegraph_usage[] =
	"usage: latprof flamegraph [FILE] [OPTIONS] [-o SVG]\n"
	"\n"
	"Draw an interactive flame graph of a profile (default latprof.pb.gz): hover\n"
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

/* What a weight means on the picture, also for folded input (no profile to ask). */
static const struct weight_look {
	const char *weight, *title, *unit;
} weight_looks[] = {
	{ "cpu", "CPU flame graph", "samples" },
	{ "samples", "CPU flame graph", "samples" },
	{ "cpu-time", "CPU time flame graph", "nanoseconds" },
	{ "latency", "Syscall latency flame graph", "nanoseconds" },
	{ "syscalls", "Slow syscall count flame graph", "count" },
	{ "offcpu", "Off-CPU flame graph", "nanoseconds" },
	{ "wall", "Wall-clock (hot/cold) flame graph", "nanoseconds" },
};

struct flame_cmd {
	struct flame_svg_opts svg;
	const char *weight, *out;
	const char *folded;		/* flamegraph --folded FILE */
	bool force_folded;		/* diff --folded */
	unsigned int stack_flags;
	char *subtitle;			/* owned, when made up from a profile */
};

static const struct weight_look *weight_look(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(weight_looks); i++)
		if (!strcmp(name, weight_looks[i].weight))
			return &weight_looks[i];
	return NULL;
}

static const char *category_of(const char *syscall_name)
{
	int nr = syscall_number(syscall_name);

	return nr < 0 ? NULL : syscall_category_name(syscall_category(nr));
}

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
	case 'w': cmd->weight = arg; return 0;
	case 'T': cmd->svg.title = arg; return 0;
	case 'S': cmd->svg.subtitle = arg; return 0;
	case 'i': cmd->svg.inverted = true; return 0;
	case 'P': cmd->stack_flags |= STACKS_FLAG_PER_PID; return 0;
	case 'y': cmd->stack_flags |= STACKS_FLAG_PY_LINES; return 0;
	case 'n': cmd->svg.no_script = true; return 0;
	case 'o': cmd->out = arg; return 0;
	case 'W':
		if (parse_u64(arg, 200, 20000, &v)) {
			pr_err("bad --width '%s' (want pixels, 200 to 20000)", arg);
			return -EINVAL;
		}
		cmd->svg.width_px = v;
		return 0;
	case 'm':
		if (parse_minwidth(arg, &cmd->svg)) {
			pr_err("bad --minwidth '%s' (want pixels, e.g. 0.5, or a percentage, e.g. 1%%)",
			       arg);
			return -EINVAL;
		}
		return 0;
	case 'c':
		if (flame_palette_parse(arg, &cmd->svg.palette)) {
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
	{ "no-script", no_argument, NULL, 'n' },                         \
	{ "output", required_argument, NULL, 'o' },                      \
	{ "help", no_argument, NULL, 'h' }

/* Read folded text from @path ("-": stdin) into @f; prints the one error. */
static int load_folded(const char *path, unsigned int flags, struct flame *f)
{
	struct folded_error e;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (!strcmp(path, "-"))
		err = read_fd(dup(STDIN_FILENO), FOLDED_STDIN_MAX, &buf, &len);
	else
		err = read_file(path, &buf, &len);
	if (err) {
		pr_err("cannot read %s: %s", path, strerror(-err));
		free(buf);
		return -EINVAL;
	}
	err = folded_parse(f, buf, len, flags, &e);
	free(buf);
	if (err == -EINVAL)
		pr_err("%s:%zu: %s", strcmp(path, "-") ? path : "<stdin>", e.line, e.reason);
	else if (err)
		pr_err("cannot read %s: %s", path, strerror(-err));
	return err;
}

/* "record -F 99 -- ./app, 2.01 s": what a recorded profile says about itself. */
static char *profile_subtitle(const struct profile *p)
{
	const char *cmdline = profile_get_meta(p, "command_line");
	char *s = NULL;
	int n;

	if (cmdline && p->duration_ns > 0)
		n = asprintf(&s, "%s, %.2f s", cmdline, p->duration_ns / 1e9);
	else if (p->duration_ns > 0)
		n = asprintf(&s, "%.2f s", p->duration_ns / 1e9);
	else
		n = cmdline ? asprintf(&s, "%s", cmdline) : 0;
	return n > 0 ? s : NULL;
}

/*
 * Stacks of profile @p weighted by @w into @f; sets hot/cold mode for
 * two-column weights and, unless given, the subtitle. 0 or -ENOMEM.
 */
static int profile_flame(struct flame_cmd *cmd, const struct profile *p,
			 const struct profile_weight *w, struct flame *f)
{
	int err = stacks_to_flame(p, w, cmd->stack_flags, f);

	if (err)
		return err;
	if (w->nr_cols == 2)
		cmd->svg.mode = FLAME_SVG_MODE_HOTCOLD;
	if (!cmd->subtitle)
		cmd->subtitle = profile_subtitle(p);
	return 0;
}

/*
 * Stacks of the profile @path weighted by cmd->weight into @f. -EINVAL
 * (printed) for bad input, -ENOMEM.
 */
static int load_profile(struct flame_cmd *cmd, const char *path, struct flame *f)
{
	struct profile *p = profile_load(path);
	struct profile_weight w;
	int err = -EINVAL;

	if (!p || profile_weight_get(p, cmd->weight, &w))
		goto out;
	err = profile_flame(cmd, p, &w, f);
	if (err)
		pr_err("cannot read profile %s: %s", path ? path : "latprof.pb.gz", strerror(-err));
out:
	profile_free(p);
	return err;
}

static int write_svg(FILE *out, void *arg)
{
	struct flame *f = ((void **)arg)[0];
	const struct flame_svg_opts *o = ((void **)arg)[1];

	return flame_write_svg(f, o, out);
}

/* Fill in the SVG options that the command line left open. */
static void svg_defaults(struct flame_cmd *cmd, const char *default_title)
{
	const struct weight_look *look = weight_look(cmd->weight);

	if (!cmd->svg.title)
		cmd->svg.title = default_title ? default_title : look ? look->title : NULL;
	if (!cmd->svg.subtitle)
		cmd->svg.subtitle = cmd->subtitle;
	cmd->svg.unit = look ? look->unit : NULL;
	cmd->svg.process_frames = !(cmd->stack_flags & STACKS_FLAG_NO_COMM);
	cmd->svg.category_fn = category_of;
}

int flamegraph_write_profile(FILE *out, const struct profile *p, const struct profile_weight *w,
			     unsigned int stack_flags)
{
	struct flame_cmd cmd = { .weight = w->name, .svg.min_width_px = FLAMEGRAPH_MIN_WIDTH_PX,
				 .stack_flags = stack_flags };
	struct flame *f = flame_new();
	int err = f ? profile_flame(&cmd, p, w, f) : -ENOMEM;

	if (!err) {
		svg_defaults(&cmd, NULL);
		err = flame_write_svg(f, &cmd.svg, out);
	}
	flame_free(f);
	free(cmd.subtitle);
	return err;
}

/* Fill in what the options left open, then write @f. Returns the exit status. */
static int render(struct flame_cmd *cmd, struct flame *f, const char *default_title)
{
	void *job[2] = { f, &cmd->svg };
	int err;

	svg_defaults(cmd, default_title);
	if (!flame_total(f))
		pr_warn("no stacks with a weight (--weight %s): the graph is empty", cmd->weight);
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

	if (!weight_look(cmd->weight)) {
		pr_err("unknown weight '%s' (want %s)", cmd->weight, PROFILE_WEIGHTS);
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
	struct flame_cmd cmd = { .weight = "cpu", .out = "flame.svg",
				 .svg.min_width_px = FLAMEGRAPH_MIN_WIDTH_PX };
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
		err = load_folded(cmd.folded, 0, f);
	else
		err = load_profile(&cmd, optind < argc ? argv[optind] : NULL, f);
	if (err) {
		status = err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
		goto out;
	}
	status = render(&cmd, f, NULL);
out:
	flame_free(f);
	free(cmd.subtitle);
	return status;
}

/* Does @path start with gzip's magic (a pprof profile)? No: folded text. */
static bool is_gzip(const char *path)
{
	unsigned char magic[2];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
	bool yes = f && fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;

	if (f)
		fclose(f);
	return yes;
}

static int load_input(struct flame_cmd *cmd, const char *path, struct flame *f)
{
	if (!cmd->force_folded && is_gzip(path))
		return load_profile(cmd, path, f);
	return load_folded(path, 0, f);
}

/* Add the stacks of @from to @to as AFTER weights, or as BEFORE (weight2). */
static int add_side(struct flame *to, struct flame *from, bool after)
{
	const struct flame_stack *s = flame_stacks(from);
	size_t i, n = flame_nr_stacks(from);
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = flame_add_pair(to, s[i].frames, s[i].nr_frames, after ? s[i].weight : 0,
				     after ? 0 : s[i].weight);
	return err;
}

/* BEFORE and AFTER into @f; or one file of "STACK BEFORE AFTER" lines. */
static int load_diff(struct flame_cmd *cmd, char **paths, int nr, struct flame *f)
{
	struct flame *side = NULL;
	int i, err = 0;

	if (nr == 1) {
		if (!cmd->force_folded && is_gzip(paths[0])) {
			pr_err("%s is a profile: a diff needs BEFORE and AFTER", paths[0]);
			return -EINVAL;
		}
		return load_folded(paths[0], FOLDED_FLAG_PAIRS, f);
	}
	for (i = 0; !err && i < nr; i++) {
		flame_free(side);
		side = flame_new();
		err = side ? load_input(cmd, paths[i], side) : -ENOMEM;
		if (!err)
			err = add_side(f, side, i == 1);
		if (err == -ERANGE)
			pr_err("%s: total weight out of range", paths[i]);
	}
	flame_free(side);
	return err == -ERANGE ? -EINVAL : err;
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
			cmd->svg.normalize &= c != 'N';
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
	struct flame_cmd cmd = { .weight = "cpu", .out = "diff.svg", .svg.normalize = true,
				 .svg.min_width_px = FLAMEGRAPH_MIN_WIDTH_PX };
	struct flame *f = NULL;
	int err, status = EXIT_STATUS_USAGE;

	err = diff_args(&cmd, argc, argv);
	if (err)
		return err > 0 ? EXIT_STATUS_OK : EXIT_STATUS_USAGE;
	if (argc - optind == 2 &&
	    asprintf(&cmd.subtitle, "before: %s, after: %s", argv[optind], argv[optind + 1]) < 0)
		cmd.subtitle = NULL;
	f = flame_new();
	err = f ? load_diff(&cmd, argv + optind, argc - optind, f) : -ENOMEM;
	if (err) {
		status = err == -EINVAL ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
		goto out;
	}
	cmd.svg.mode = FLAME_SVG_MODE_DIFF;
	status = render(&cmd, f, "Differential flame graph");
out:
	flame_free(f);
	free(cmd.subtitle);
	return status;
}
