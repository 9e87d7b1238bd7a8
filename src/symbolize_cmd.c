// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof symbolize -e FILE [ADDR...]`: the symbolizer on its own, offline,
 * in the output format of `eu-addr2line -f -i`, so it can be compared with
 * the tools users know and benchmarked against them (bench/symbolize_speed.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util.h"
#include "src/verbs.h"
#include "symbolize/symbolize.h"

struct symbolize_opts {
	const char *file;
	bool inlines;		/* -i: every inlined frame, innermost first */
	bool basenames;		/* -s: file names without directories */
	bool addresses;		/* -a: each address first, as 0x%016x */
};

static const char symbolize_usage[] =
	"usage: latprof symbolize -e FILE [-i] [-s] [-a] [ADDR...]\n"
	"\n"
	"Resolve addresses of an ELF file (its own virtual addresses, as\n"
	"addr2line takes them) to function and file:line, one address per\n"
	"argument or, without any, per line of standard input. Output as\n"
	"`eu-addr2line -f`: a line with the function (two question marks if unknown), then\n"
	"FILE:LINE (same for the file, line 0).\n"
	"\n"
	"  -e, --exe FILE       the ELF file (separate debuginfo is found by build-id\n"
	"                       and .gnu_debuglink)\n"
	"  -i, --inlines        also the frames inlined at the address, innermost first\n"
	"  -s, --basenames      file names without their directories\n"
	"  -a, --addresses      print each address (0x%016x) before its frames\n"
	"  -h, --help           this help\n";

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void print_location(const struct symbolize_opts *o, const struct sym_location *loc)
{
	size_t i, n = o->inlines ? loc->nr_frames : 1;

	if (o->addresses)
		printf("0x%016" PRIx64 "\n", loc->address);
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];

		printf("%s\n%s:%" PRIu32 "\n", f->function ? f->function : "??",
		       f->file ? (o->basenames ? base_name(f->file) : f->file) : "??",
		       f->file ? f->line : 0);
	}
}

/* One address (hex, with or without 0x); 0 or -errno after a message. */
static int symbolize_one(const struct symbolize_opts *o, struct symbolizer *s, const char *arg)
{
	const struct sym_location *loc;
	uint64_t addr;
	char *end;

	errno = 0;
	addr = strtoull(arg, &end, 16);
	if (errno || end == arg || (*end && *end != '\n')) {
		pr_err("invalid address '%s': want hexadecimal", arg);
		return -EINVAL;
	}
	loc = symbolizer_file(s, o->file, addr);
	if (!loc) {
		pr_err("cannot read %s: %s", o->file, strerror(errno));
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	}
	print_location(o, loc);
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "exe", required_argument, NULL, 'e' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "basenames", no_argument, NULL, 's' },
		{ "addresses", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct symbolizer_opts so = { .no_kernel = true };
	struct symbolize_opts o = { 0 };
	struct symbolizer *s;
	char *line = NULL;
	size_t cap = 0;
	int c, err = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:isah", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.file = optarg;
			break;
		case 'i':
			o.inlines = true;
			break;
		case 's':
			o.basenames = true;
			break;
		case 'a':
			o.addresses = true;
			break;
		case 'h':
			fputs(symbolize_usage, stdout);
			return EXIT_STATUS_OK;
		default:
			pr_option_error("symbolize", argv, c);
			return EXIT_STATUS_USAGE;
		}
	}
	if (!o.file) {
		pr_err("missing -e FILE");
		return EXIT_STATUS_USAGE;
	}
	if (access(o.file, R_OK)) {
		pr_err("cannot read %s: %s", o.file, strerror(errno));
		return EXIT_STATUS_USAGE;
	}
	s = symbolizer_new(&so);
	if (!s) {
		pr_err("cannot create symbolizer: %s", strerror(errno));
		return EXIT_STATUS_FAILURE;
	}
	if (optind < argc) {
		for (; !err && optind < argc; optind++)
			err = symbolize_one(&o, s, argv[optind]);
	} else {
		while (!err && getline(&line, &cap, stdin) > 0)
			if (line[0] != '\n')
				err = symbolize_one(&o, s, line);
	}
	free(line);
	symbolizer_free(s);
	if (fflush(stdout))
		err = -EIO;
	return !err ? EXIT_STATUS_OK : err == -EINVAL || err == -ENOENT ? EXIT_STATUS_USAGE :
		EXIT_STATUS_FAILURE;
}
