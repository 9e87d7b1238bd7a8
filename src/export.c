// SPDX-License-Identifier: GPL-2.0-only
/* `latprof export`: convert a recorded profile to another format. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "src/export_json.h"
#include "src/loadprof.h"
#include "src/stacks.h"
#include "src/util.h"
#include "src/verbs.h"

static const char export_usage[] =
	"usage: latprof export [FILE] --format FMT [-o OUT]\n"
	"\n"
	"Convert a profile (default latprof.pb.gz).\n"
	"\n"
	"  -f, --format FMT     folded: collapsed stacks, 'comm;root;...;leaf COUNT'\n"
	"                       json: metadata, stacks, syscall statistics (docs/formats.md)\n"
	"  -w, --weight W       what a stack is weighted by (default cpu):\n"
	"                       cpu, samples   on-CPU samples\n"
	"                       cpu-time       on-CPU nanoseconds (samples x period)\n"
	"                       latency        nanoseconds in slow syscalls, leaf 'syscall:NAME'\n"
	"                       syscalls       number of slow syscalls, same stacks\n"
	"                       offcpu         nanoseconds off CPU (--mode offcpu)\n"
	"                       wall           cpu-time + offcpu\n"
	"      --per-pid        first frame 'comm-PID' instead of 'comm'\n"
	"  -o, --output OUT     output file, '-' for stdout (default)\n"
	"  -h, --help           this help\n";

struct export_job {
	const struct profile *p;
	const struct profile_weight *w;
	struct flame *f;
	bool json;
};

static int write_export(FILE *out, void *arg)
{
	struct export_job *j = arg;

	return j->json ? export_json(out, j->p, j->w, j->f) : flame_write_folded(j->f, out);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "weight", required_argument, NULL, 'w' },
		{ "per-pid", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *weight = "cpu", *out = "-";
	unsigned int flags = 0;
	struct profile *p = NULL;
	struct flame *fl = NULL;
	struct profile_weight w;
	struct export_job job;
	int c, err, status = EXIT_STATUS_USAGE;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:w:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'w':
			weight = optarg;
			break;
		case 'P':
			flags |= STACKS_FLAG_PER_PID;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(export_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("export", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (!format) {
		pr_err("missing --format (want folded or json)");
		return EXIT_STATUS_USAGE;
	}
	if (strcmp(format, "folded") && strcmp(format, "json")) {
		pr_err("unknown format '%s' (want folded or json)", format);
		return EXIT_STATUS_USAGE;
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
		goto out;
	if (profile_weight_get(p, weight, &w))
		goto out;
	status = EXIT_STATUS_FAILURE;
	fl = flame_new();
	err = fl ? stacks_to_flame(p, &w, flags, fl) : -ENOMEM;
	job = (struct export_job){ .p = p, .w = &w, .f = fl, .json = !strcmp(format, "json") };
	if (!err)
		err = write_file_atomic(out, write_export, &job);
	if (err) {
		pr_err("cannot write %s: %s", out, strerror(-err));
		goto out;
	}
	status = EXIT_STATUS_OK;
out:
	flame_free(fl);
	profile_free(p);
	return status;
}
