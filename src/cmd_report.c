// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof report`: usage, options, loading the profile, one call to
 * report_profile() (report.h) writing to stdout, and the exit status. Colour
 * only on a terminal, never with NO_COLOR or --no-color.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/pprof.h"
#include "src/weight.h"
#include "src/report.h"
#include "src/stacks.h"
#include "src/lib/util.h"
#include "src/verbs.h"

static const char report_usage[] =
	"usage: latprof report [FILE] [OPTIONS]\n"
	"\n"
	"Hotspot report of a profile (default " PROFILE_DEFAULT_PATH ").\n"
	"\n"
	"  -w, --weight W       cpu (samples), cpu-time, latency, syscalls, offcpu, wall\n"
	"                       (default: cpu, else latency, else offcpu, the first the\n"
	"                       profile has values of);\n"
	"                       W:path, W:idle, W:readiness: only on-path, only idle, or\n"
	"                       only undecided syscall waits (docs/syscalls.md)\n"
	"  -n, --top N          functions to list (default 15)\n"
	"      --stacks N       heaviest stacks to show (default 5)\n"
	"      --slowest N      slowest requests to show (default 5; record --requests)\n"
	"      --native         Python programs' full native stacks: keep the interpreter's\n"
	"                       frames around their Python frames (docs/python.md)\n"
	"      --no-color       no colour even on a terminal (NO_COLOR is honoured)\n"
	"  -h, --help           this help\n";

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "weight", required_argument, NULL, 'w' },
		{ "top", required_argument, NULL, 'n' },
		{ "stacks", required_argument, NULL, 's' },
		{ "slowest", required_argument, NULL, 'S' },
		{ "native", no_argument, NULL, 'N' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts o = { .top = 15, .stacks = 5, .slowest = 5 };
	const char *path;
	struct profile *p;
	uint64_t v;
	int c, err;

	o.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			o.weight = optarg;
			break;
		case 'n':
		case 's':
		case 'S':
			if (parse_u64(optarg, 0, 100000, &v)) {
				pr_err("invalid count '%s'", optarg);
				return EXIT_STATUS_USAGE;
			}
			*(c == 'n' ? &o.top : c == 's' ? &o.stacks : &o.slowest) = v;
			break;
		case 'N':
			o.stack_flags |= STACKS_FLAG_NATIVE;
			break;
		case 'C':
			o.color = false;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("report", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (argc - optind > 1) {
		pr_err("too many arguments (one profile at a time)");
		return EXIT_STATUS_USAGE;
	}
	path = optind < argc ? argv[optind] : PROFILE_DEFAULT_PATH;
	p = profile_load(path);
	if (!p)
		return EXIT_STATUS_USAGE;
	err = report_profile(stdout, &o, p, path);
	profile_free(p);
	if (err == -EINVAL)
		return EXIT_STATUS_USAGE;
	if (err)
		pr_err("cannot report: %s", strerror(-err));
	return err ? EXIT_STATUS_FAILURE : EXIT_STATUS_OK;
}
