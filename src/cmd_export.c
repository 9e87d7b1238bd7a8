// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof export`: its options, then one profile written in one of the
 * formats of export_formats.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "src/export_formats.h"
#include "src/pprof.h"
#include "src/stacks.h"
#include "src/lib/util.h"
#include "src/verbs.h"

static const char export_usage[] =
	"usage: latprof export [FILE] --format FMT [-o OUT]\n"
	"\n"
	"Convert a profile (default " PROFILE_DEFAULT_PATH ").\n"
	"\n"
	"  -f, --format FMT     folded: collapsed stacks, 'comm;root;...;leaf WEIGHT'\n"
	"                       speedscope: speedscope's JSON file, one profile per process\n"
	"                       pprof: gzip'ed profile.proto with the columns of --weight\n"
	"                       json: metadata, stacks, syscall statistics (docs/formats.md)\n"
	"                       prometheus: text exposition: syscall latency histograms,\n"
	"                       CPU and off-CPU counters, lost events (no --weight)\n"
	"                       svg: the interactive flame graph 'latprof flamegraph'\n"
	"                       draws by default (its display options need that verb)\n"
	"  -w, --weight W       what a stack is weighted by (default: cpu, else latency,\n"
	"                       else offcpu, the first the profile has values of):\n"
	"                       cpu, samples   on-CPU samples\n"
	"                       cpu-time       on-CPU nanoseconds (samples x period)\n"
	"                       latency        nanoseconds in slow syscalls, leaf 'syscall:NAME'\n"
	"                       syscalls       number of slow syscalls, same stacks\n"
	"                       offcpu         nanoseconds off CPU (--mode offcpu)\n"
	"                       wall           cpu-time + offcpu\n"
	"                       W:path         only the samples on the path of work\n"
	"                       W:idle         only the idle syscall waits\n"
	"                       W:readiness    only the waits not decided (docs/syscalls.md)\n"
	"      --per-pid        first frame 'comm-PID' instead of 'comm' (folded, json)\n"
	"      --py-lines       Python frames 'f (file.py:LINE)' (folded, json, svg)\n"
	"      --native         Python programs' full native stacks: keep the interpreter's\n"
	"                       frames around their Python frames (docs/python.md)\n"
	"      --top N          json: the N heaviest stacks in 'top_stacks' (default 10)\n"
	"  -o, --output OUT     output file, '-' for stdout (default)\n"
	"  -h, --help           this help\n"
	"\n"
	"Without --format, the extension of OUT decides: .folded, .speedscope.json,\n"
	".pb.gz, .json, .prom, .svg.\n";

struct export_args {
	const char *format, *weight, *out, *in;
	unsigned int flags;
	uint64_t top;
};

/* 0, or -EINVAL after printing why; -ECANCELED after --help. */
static int parse_export_args(int argc, char **argv, struct export_args *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "weight", required_argument, NULL, 'w' },
		{ "per-pid", no_argument, NULL, 'P' },
		{ "py-lines", no_argument, NULL, 'y' },
		{ "native", no_argument, NULL, 'N' },
		{ "top", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:w:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->format = optarg;
			break;
		case 'w':
			a->weight = optarg;
			break;
		case 'P':
			a->flags |= STACKS_FLAG_PER_PID;
			break;
		case 'y':
			a->flags |= STACKS_FLAG_PY_LINES;
			break;
		case 'N':
			a->flags |= STACKS_FLAG_NATIVE;
			break;
		case 'T':
			if (parse_u64(optarg, 0, 1000000, &a->top)) {
				pr_err("invalid --top '%s': want 0..1000000 stacks", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'h':
			fputs(export_usage, stdout);
			return -ECANCELED;
		default:
			pr_option_error("export", argv, c);
			return -EINVAL;
		}
	}
	if (argc - optind > 1) {
		pr_err("too many arguments (one profile at a time)");
		return -EINVAL;
	}
	a->in = optind < argc ? argv[optind] : NULL;
	return 0;
}

/* The format to write: --format, else the extension of -o. -EINVAL after printing why. */
static int export_args_format(const struct export_args *a)
{
	int format;

	if (a->format) {
		format = export_format_find(a->format);
		if (format < 0)
			pr_err("unknown format '%s' (want %s)", a->format, EXPORT_FORMATS);
		return format < 0 ? -EINVAL : format;
	}
	format = strcmp(a->out, "-") ? export_format_for_path(a->out) : -ENOENT;
	if (format < 0)
		pr_err("missing --format (want %s)", EXPORT_FORMATS);
	return format < 0 ? -EINVAL : format;
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = { .out = "-", .top = EXPORT_TOP_DEFAULT };
	struct profile *p = NULL;
	struct profile_weight w;
	struct export_opts o;
	int format, err, status = EXIT_STATUS_USAGE;

	err = parse_export_args(argc, argv, &a);
	if (err)
		return err == -ECANCELED ? EXIT_STATUS_OK : EXIT_STATUS_USAGE;
	format = export_args_format(&a);
	if (format < 0)
		return EXIT_STATUS_USAGE;
	err = output_check(a.out);
	if (err) {
		pr_err("cannot write %s: %s", a.out, strerror(-err));
		return EXIT_STATUS_USAGE;
	}
	p = profile_load(a.in);
	if (!p)
		goto out;
	o = (struct export_opts){ .stack_flags = a.flags, .top = a.top };
	if (export_format_has_weight(format)) {
		if (profile_weight_get(p, a.weight ? a.weight : profile_weight_default(p), &w))
			goto out;
		o.w = &w;
	}
	status = EXIT_STATUS_FAILURE;
	err = export_write_path_opts(a.out, format, p, &o);
	if (err) {
		pr_err("cannot write %s: %s", a.out, strerror(-err));
		goto out;
	}
	status = EXIT_STATUS_OK;
out:
	profile_free(p);
	return status;
}
