// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof symbolize -e FILE [ADDR...]`: the symbolizer on its own, offline,
 * in the output format of `eu-addr2line -f -i` (src/addr2line.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "src/addr2line.h"
#include "src/lib/util.h"
#include "src/verbs.h"
#include "symbolize/symbolize.h"

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
	struct addr2line_opts o = { 0 };
	struct symbolizer *s;
	const char *why = NULL;
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
	err = addr2line_check_file(o.file, &why);
	if (err) {
		pr_err("cannot read %s: %s", o.file, err == -EINVAL ? why : strerror(-err));
		return EXIT_STATUS_USAGE;
	}
	s = symbolizer_new(&so);
	if (!s) {
		pr_err("cannot create symbolizer: %s", strerror(errno));
		return EXIT_STATUS_FAILURE;
	}
	if (optind < argc) {
		for (; !err && optind < argc; optind++)
			err = addr2line_resolve(&o, s, argv[optind], stdout);
	} else {
		err = addr2line_resolve_lines(&o, s, stdin, stdout);
	}
	symbolizer_free(s);
	if (fflush(stdout))
		err = -EIO;
	return !err ? EXIT_STATUS_OK : err == -EINVAL || err == -ENOENT ? EXIT_STATUS_USAGE :
		EXIT_STATUS_FAILURE;
}
