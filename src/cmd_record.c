// SPDX-License-Identifier: GPL-2.0-only
/* `latprof record`: usage, options, one call to record_run() (record.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/privs.h"
#include "src/record.h"
#include "src/stacks.h"
#include "src/lib/util.h"
#include "src/verbs.h"

enum {
	OPT_WEIGHT = COLLECTOPTS_VERB,
	OPT_INTERVAL,
	OPT_CONFIG,
	OPT_NATIVE,
};

static const char record_usage_head[] =
	"usage: latprof record [TARGET] [OPTIONS] [-o FILE]\n"
	"\n"
	"Sample on-CPU stacks (user + kernel), time every syscall and charge the\n"
	"slow ones to the user stack that made them, measure time off CPU, with\n"
	"BPF; write a symbolized pprof profile.\n"
	"\n"
	"targets (one of):\n";

static const char record_usage_command[] =
	"  -- COMMAND [ARGS...]     run COMMAND, trace it and its descendants until it exits\n"
	"\n"
	"options:\n";

static const char record_usage_tail[] =
	"  -d, --duration SEC       stop after SEC seconds (a started COMMAND gets SIGTERM)\n"
	"      --interval SEC       timeline and memory (RSS, PSS) sampling interval,\n"
	"                           0.05..3600 (default 1)\n"
	"  -o, --output FILE        output (default " PROFILE_DEFAULT_PATH "); the extension picks the\n"
	"                           format: .pb.gz (the full profile), .folded,\n"
	"                           .speedscope.json, .json, .prom (as 'latprof export')\n"
	"      --weight W           what stacks are weighted by in those formats (default:\n"
	"                           cpu, else latency, else offcpu, the first with values)\n"
	"      --native             in those formats, Python programs' full native stacks\n"
	"                           (the interpreter's frames around their Python frames)\n"
	"  -q, --quiet              no live status line, errors only\n"
	"  -v, --verbose            more messages (repeat for debug)\n"
	"  -h, --help               this help\n"
	"\n"
	"Separate debuginfo is also fetched from debuginfod when DEBUGINFOD_URLS is set.\n"
	"Stops cleanly on SIGINT/SIGTERM. Needs root or CAP_BPF + CAP_PERFMON.\n";

static void print_usage(void)
{
	fputs(record_usage_head, stdout);
	fputs(collectopts_usage_targets, stdout);
	fputs(record_usage_command, stdout);
	fputs(collectopts_usage, stdout);
	fputs(record_usage_tail, stdout);
}

static const struct option record_longopts[] = {
	COLLECTOPTS_LONGOPTS,
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* 0, 1 after -h, or -errno after printing why. */
static int parse_record_option(struct record_opts *o, int c, char **argv)
{
	int err = collectopts_parse(&o->co, c, optarg);

	if (err != COLLECTOPTS_NOT_MINE)
		return err;
	switch (c) {
	case 'd':
		return collectopts_parse_seconds(optarg, "duration", 0, true, 31536000, &o->duration_s);
	case 'o':
		o->out.path = optarg;
		return 0;
	case OPT_WEIGHT:
		o->out.weight = optarg;
		return 0;
	case OPT_NATIVE:
		o->out.stack_flags |= STACKS_FLAG_NATIVE;
		return 0;
	case OPT_INTERVAL:
		return collectopts_parse_seconds(optarg, "--interval", 0.05, false, 3600, &o->interval_s);
	case OPT_CONFIG:
		return 0;	/* read before the command line (expand_config) */
	case 'h':
		print_usage();
		return 1;
	default:
		pr_option_error("record", argv, c);
		return -EINVAL;
	}
}

/* 0, 1 after -h, or -errno after printing why. */
static int parse_record_args(int argc, char **argv, struct record_opts *o)
{
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" COLLECTOPTS_SHORT "d:o:h", record_longopts,
				NULL)) != -1) {
		err = parse_record_option(o, c, argv);
		if (err)
			return err;
	}
	err = collectopts_finish(&o->co, argc, argv, &o->command);
	if (err)
		return err;
	return record_output_ready(&o->out, &o->co.modes);
}

/* collectopts_run_verb's parser and run. */
static int parse_record(int argc, char **argv, void *opts)
{
	return parse_record_args(argc, argv, opts);
}

static int run_record(void *opts, const char *command_line)
{
	struct record_opts *o = opts;
	int err = privs_check_bpf("record");

	o->command_line = command_line;
	return err ? err : record_run(o);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .out.path = PROFILE_DEFAULT_PATH, .interval_s = 1 };
	int status;

	collectopts_init(&o.co);
	status = collectopts_run_verb(argc, argv, record_longopts, parse_record, run_record, &o);
	collectopts_release(&o.co);
	return status;
}
