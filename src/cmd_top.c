// SPDX-License-Identifier: GPL-2.0-only
/* `latprof top`: usage, options, one call to top_run() (top.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/privs.h"
#include "src/stacks.h"
#include "src/top.h"
#include "src/lib/util.h"
#include "src/verbs.h"

enum {
	OPT_INTERVAL = COLLECTOPTS_VERB,
	OPT_ROWS,
	OPT_WEIGHT,
	OPT_NATIVE,
	OPT_CONFIG,
};

static const char top_usage_head[] =
	"usage: latprof top [TARGET] [OPTIONS]\n"
	"\n"
	"Live view of a target, redrawn every interval: functions by own and total\n"
	"CPU, the call sites of slow syscalls, and every syscall's rate and\n"
	"percentiles, for the last interval and since the start. Keys: 1 2 3 views,\n"
	"< > sort, space freeze, p one process, Enter callers and callees, ? help,\n"
	"q quit.\n"
	"\n"
	"targets (one of):\n";

static const char top_usage_command[] =
	"  -- COMMAND [ARGS...]     run COMMAND, watch it and its descendants until it exits\n"
	"\n"
	"options:\n";

static const char top_usage_tail[] =
	"      --interval SEC       redraw every SEC seconds, 0.1..3600 (default 1)\n"
	"  -b, --batch              plain snapshots on stdout, one per interval, no\n"
	"                           keys (also when stdout is not a terminal)\n"
	"  -n, --iterations N       stop after N snapshots\n"
	"      --rows N             rows per table in a snapshot (default 15)\n"
	"  -o, --output FILE        at the end, write what was seen as a profile, as\n"
	"                           'latprof record -o' does (the extension picks the format)\n"
	"      --weight W           what stacks are weighted by in -o's derived formats\n"
	"      --native             Python programs' full native stacks, in the views and -o\n"
	"  -q, --quiet              errors only\n"
	"  -v, --verbose            more messages (repeat for debug)\n"
	"  -h, --help               this help\n"
	"\n"
	"Stops cleanly on q, SIGINT/SIGTERM/SIGHUP or when the targets exit.\n"
	"Needs root or CAP_BPF + CAP_PERFMON.\n";

static void print_usage(void)
{
	fputs(top_usage_head, stdout);
	fputs(collectopts_usage_targets, stdout);
	fputs(top_usage_command, stdout);
	fputs(collectopts_usage, stdout);
	fputs(top_usage_tail, stdout);
}

static const struct option top_longopts[] = {
	COLLECTOPTS_LONGOPTS,
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "batch", no_argument, NULL, 'b' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "output", required_argument, NULL, 'o' },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A count in [@min, @max] for option @what, or the one error line. */
static int parse_count(const char *arg, const char *what, uint64_t min, uint64_t max,
		       uint64_t *out)
{
	if (!parse_u64(arg, min, max, out))
		return 0;
	pr_err("invalid %s '%s': want %" PRIu64 "..%" PRIu64, what, arg, min, max);
	return -EINVAL;
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_top_option(struct top_opts *o, int c, char **argv)
{
	int err = collectopts_parse(&o->co, c, optarg);
	uint64_t n;

	if (err != COLLECTOPTS_NOT_MINE)
		return err;
	switch (c) {
	case OPT_INTERVAL:
		return collectopts_parse_seconds(optarg, "--interval", 0.1, false, 3600,
						 &o->interval_s);
	case 'b':
		o->batch = true;
		return 0;
	case 'n':
		err = parse_count(optarg, "--iterations", 1, 1000000000, &n);
		if (!err)
			o->iterations = n;
		return err;
	case OPT_ROWS:
		err = parse_count(optarg, "--rows", 1, 10000, &n);
		if (!err)
			o->rows = n;
		return err;
	case 'o':
		o->out.path = optarg;
		return 0;
	case OPT_WEIGHT:
		o->out.weight = optarg;
		return 0;
	case OPT_NATIVE:
		o->stack_flags |= STACKS_FLAG_NATIVE;
		o->out.stack_flags |= STACKS_FLAG_NATIVE;
		return 0;
	case OPT_CONFIG:
		return 0;	/* read before the command line (expand_config) */
	case 'h':
		print_usage();
		return 1;
	default:
		pr_option_error("top", argv, c);
		return -EINVAL;
	}
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_top(int argc, char **argv, void *opts)
{
	struct top_opts *o = opts;
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" COLLECTOPTS_SHORT "bn:o:h", top_longopts,
				NULL)) != -1) {
		err = parse_top_option(o, c, argv);
		if (err)
			return err;
	}
	err = collectopts_finish(&o->co, argc, argv, &o->command);
	if (err)
		return err;
	if (!isatty(STDOUT_FILENO))
		o->batch = true;
	if (!o->out.path)
		return o->out.weight ? (pr_err("--weight goes with -o"), -EINVAL) : 0;
	return record_output_ready(&o->out, &o->co.modes);
}

static int run_top(void *opts, const char *command_line)
{
	struct top_opts *o = opts;
	int err = privs_check_bpf("top");

	o->command_line = command_line;
	return err ? err : top_run(o);
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { .interval_s = 1, .rows = 15 };
	int status;

	collectopts_init(&o.co);
	status = collectopts_run_verb(argc, argv, top_longopts, parse_top, run_top, &o);
	collectopts_release(&o.co);
	return status;
}
