// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof export` and the table of export formats behind it (export.h).
 * The formats themselves live one file each (export_*.c); this file only
 * maps names and extensions to them and writes files atomically.
 */
#include "src/export.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "src/export_json.h"
#include "src/export_pprof.h"
#include "src/export_prom.h"
#include "src/export_speedscope.h"
#include "src/flamegraph.h"
#include "src/stacks.h"
#include "src/util.h"
#include "src/verbs.h"

typedef int (*export_write_fn)(FILE *out, const struct profile *p, const struct export_opts *o);

/* Folded text and the JSON report both start from the weighted stacks. */
static int write_flame(FILE *out, const struct profile *p, const struct export_opts *o,
		       bool json)
{
	struct flame *f = flame_new();
	int err = f ? stacks_to_flame(p, o->w, o->stack_flags, f) : -ENOMEM;

	if (!err)
		err = json ? export_json(out, p, o->w, f, o->top) : flame_write_folded(f, out);
	flame_free(f);
	return err;
}

static int write_folded(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return write_flame(out, p, o, false);
}

static int write_json(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return write_flame(out, p, o, true);
}

static int write_speedscope(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_speedscope(out, p, o->w);
}

static int write_pprof(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_pprof(out, p, o->w);
}

static int write_prom(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return export_prom(out, p);
}

static int write_svg(FILE *out, const struct profile *p, const struct export_opts *o)
{
	return flamegraph_write_profile(out, p, o->w, o->stack_flags);
}

/*
 * Order matters for extensions: ".speedscope.json" must be tried before
 * ".json". Indexed by enum export_format.
 */
static const struct export_format_def {
	const char *name;
	const char *exts[3];
	export_write_fn write;
	bool weighted;
} formats[] = {
	[EXPORT_FORMAT_FOLDED] = { "folded", { ".folded", ".collapsed" }, write_folded, true },
	[EXPORT_FORMAT_SPEEDSCOPE] = { "speedscope", { ".speedscope.json" }, write_speedscope,
				       true },
	[EXPORT_FORMAT_PPROF] = { "pprof", { ".pb.gz" }, write_pprof, true },
	[EXPORT_FORMAT_JSON] = { "json", { ".json" }, write_json, true },
	[EXPORT_FORMAT_PROMETHEUS] = { "prometheus", { ".prom" }, write_prom, false },
	[EXPORT_FORMAT_SVG] = { "svg", { ".svg" }, write_svg, true },
};

int export_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].write && !strcmp(name, formats[i].name))
			return i;
	return -ENOENT;
}

int export_format_for_path(const char *path)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		for (j = 0; j < ARRAY_SIZE(formats[i].exts) && formats[i].exts[j]; j++)
			if (str_has_suffix(path, formats[i].exts[j]))
				return i;
	return -ENOENT;
}

const char *export_format_name(int format)
{
	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats))
		return "unknown";
	return formats[format].name;
}

bool export_format_has_weight(int format)
{
	return format >= 0 && (size_t)format < ARRAY_SIZE(formats) && formats[format].weighted;
}

int export_write(FILE *out, int format, const struct profile *p, const struct export_opts *o)
{
	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats) || !formats[format].write)
		return -EOPNOTSUPP;
	return formats[format].write(out, p, o);
}

struct export_job {
	int format;
	const struct profile *p;
	const struct export_opts *o;
};

static int export_job_write(FILE *out, void *arg)
{
	const struct export_job *j = arg;

	return export_write(out, j->format, j->p, j->o);
}

int export_write_path_opts(const char *path, int format, const struct profile *p,
			   const struct export_opts *o)
{
	struct export_job j = { .format = format, .p = p, .o = o };

	if (format < 0 || (size_t)format >= ARRAY_SIZE(formats) || !formats[format].write)
		return -EOPNOTSUPP;	/* before a temporary file exists */
	return write_file_atomic(path, export_job_write, &j);
}

int export_write_path(const char *path, int format, const struct profile *p,
		      const struct profile_weight *w, unsigned int stack_flags)
{
	struct export_opts o = { .w = w, .stack_flags = stack_flags, .top = EXPORT_TOP_DEFAULT };

	return export_write_path_opts(path, format, p, &o);
}

static const char export_usage[] =
	"usage: latprof export [FILE] --format FMT [-o OUT]\n"
	"\n"
	"Convert a profile (default latprof.pb.gz).\n"
	"\n"
	"  -f, --format FMT     folded: collapsed stacks, 'comm;root;...;leaf WEIGHT'\n"
	"                       speedscope: speedscope's JSON file, one profile per process\n"
	"                       pprof: gzip'ed profile.proto with the columns of --weight\n"
	"                       json: metadata, stacks, syscall statistics (docs/formats.md)\n"
	"                       prometheus: text exposition: syscall latency histograms,\n"
	"                       CPU and off-CPU counters, lost events (no --weight)\n"
	"                       svg: the interactive flame graph 'latprof flamegraph'\n"
	"                       draws by default (its display options need that verb)\n"
	"  -w, --weight W       what a stack is weighted by (default cpu):\n"
	"                       cpu, samples   on-CPU samples\n"
	"                       cpu-time       on-CPU nanoseconds (samples x period)\n"
	"                       latency        nanoseconds in slow syscalls, leaf 'syscall:NAME'\n"
	"                       syscalls       number of slow syscalls, same stacks\n"
	"                       offcpu         nanoseconds off CPU (--mode offcpu)\n"
	"                       wall           cpu-time + offcpu\n"
	"      --per-pid        first frame 'comm-PID' instead of 'comm' (folded, json)\n"
	"      --py-lines       Python frames 'f (file.py:LINE)' (folded, json, svg)\n"
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
	struct export_args a = { .weight = "cpu", .out = "-", .top = EXPORT_TOP_DEFAULT };
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
		if (profile_weight_get(p, a.weight, &w))
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
