// SPDX-License-Identifier: GPL-2.0-only
/* `latprof export`: convert a recorded profile to another format. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
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
	"  -w, --weight W       what a stack is weighted by: cpu (samples, default)\n"
	"      --per-pid        first frame 'comm-PID' instead of 'comm'\n"
	"  -o, --output OUT     output file, '-' for stdout (default)\n"
	"  -h, --help           this help\n";

static int write_flame(FILE *f, void *arg)
{
	return flame_write_folded(arg, f);
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
	int c, col, err, status = EXIT_STATUS_USAGE;

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
		pr_err("missing --format (want folded)");
		return EXIT_STATUS_USAGE;
	}
	if (strcmp(format, "folded")) {
		pr_err("unknown format '%s' (want folded)", format);
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
	col = profile_weight_column(p, weight);
	if (col < 0)
		goto out;
	status = EXIT_STATUS_FAILURE;
	fl = flame_new();
	err = fl ? stacks_to_flame(p, col, flags, fl) : -ENOMEM;
	if (!err)
		err = write_file_atomic(out, write_flame, fl);
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
