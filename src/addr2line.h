/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Addresses of one ELF file resolved offline by the symbolizer and printed
 * as `eu-addr2line -f` prints them (function, then FILE:LINE, "??" when
 * unknown), so that `latprof symbolize` can be compared with the tools users
 * know and benchmarked against them (bench/symbolize_speed.sh). A bad
 * address is reported here, once, with the text it came from; the results
 * go to the caller's stream.
 */
#ifndef LATPROF_ADDR2LINE_H
#define LATPROF_ADDR2LINE_H

#include <stdbool.h>
#include <stdio.h>

#include "symbolize/symbolize.h"

struct addr2line_opts {
	const char *file;	/* the ELF file */
	bool inlines;		/* -i: every inlined frame, innermost first */
	bool basenames;		/* -s: file names without directories */
	bool addresses;		/* -a: each address first, as 0x%016x */
};

/*
 * Is @path a whole ELF file? A truncated or damaged one is bad input, said
 * so, rather than a file in which no address resolves. 0, -EINVAL with
 * *@why set ("not an ELF file", ...), or -errno when it cannot be opened.
 * Prints nothing.
 */
int addr2line_check_file(const char *path, const char **why);

/*
 * Resolve the address @arg (hexadecimal, with or without 0x, up to an
 * optional newline) in @o->file with @s and print it to @out. 0, or after
 * printing why: -EINVAL (not an address), -ENOENT (the file cannot be read)
 * or -ENOMEM.
 */
int addr2line_resolve(const struct addr2line_opts *o, struct symbolizer *s, const char *arg,
		      FILE *out);

/*
 * addr2line_resolve for every line of @in, skipping empty lines, until the
 * first failure. A NUL byte in @in is -EINVAL (printed): "10\0junk" is not
 * 0x10. Same returns.
 */
int addr2line_resolve_lines(const struct addr2line_opts *o, struct symbolizer *s, FILE *in,
			    FILE *out);

#endif
