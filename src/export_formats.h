/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The export formats of a profile (CLI.md "Export formats"), found by name
 * or by the extension of an output path, and written completely or not at
 * all. `latprof export` and `latprof record -o FILE` share this table so the
 * same name means the same bytes everywhere. The formats themselves live one
 * file each (export_*.c); this module only maps names and extensions to them
 * and writes files atomically. SVG is the default flame graph of `latprof
 * flamegraph` (src/stacks_svg.h); its options need that verb. Prints nothing.
 */
#ifndef LATPROF_EXPORT_FORMATS_H
#define LATPROF_EXPORT_FORMATS_H

#include <stddef.h>
#include <stdio.h>

#include "src/weight.h"
#include "src/profile.h"

enum export_format {
	EXPORT_FORMAT_FOLDED,
	EXPORT_FORMAT_SPEEDSCOPE,
	EXPORT_FORMAT_PPROF,
	EXPORT_FORMAT_JSON,
	EXPORT_FORMAT_PROMETHEUS,
	EXPORT_FORMAT_SVG,	/* the default interactive flame graph */
};

/* The names export_format_find accepts, for help and error messages. */
#define EXPORT_FORMATS "folded, speedscope, pprof, json, prometheus or svg"

/* Stacks listed in the JSON "top_stacks" unless told otherwise. */
#define EXPORT_TOP_DEFAULT 10

struct export_opts {
	const struct profile_weight *w;	/* what stacks are weighted by */
	unsigned int stack_flags;	/* enum stacks_flag added to the weight's */
	size_t top;			/* json: length of top_stacks */
};

/* The format called @name (an enum export_format), or -ENOENT. Cannot fail. */
int export_format_find(const char *name);

/*
 * The format that the extension of @path names: .folded/.collapsed,
 * .speedscope.json, .json, .pb.gz, .prom, .svg (EXPORT_FORMAT_SVG). -ENOENT
 * for any other name. Cannot fail.
 */
int export_format_for_path(const char *path);

/* The name of format @format ("folded", ...); "svg" for EXPORT_FORMAT_SVG. */
const char *export_format_name(int format);

/* Does format @format weigh stacks (so --weight matters to it)? */
bool export_format_has_weight(int format);

/*
 * Write @p in format @format to @out. 0, -EOPNOTSUPP for an unknown
 * format, -ENOMEM or -EIO. Prints nothing.
 */
int export_write(FILE *out, int format, const struct profile *p, const struct export_opts *o);

/*
 * export_write into @path through write_file_atomic ("-" is stdout): the
 * file appears complete or not at all. Same returns, plus -errno from the
 * file system. Prints nothing.
 */
int export_write_path_opts(const char *path, int format, const struct profile *p,
			   const struct export_opts *o);

/* The same with weight @w, @stack_flags and the default options. */
int export_write_path(const char *path, int format, const struct profile *p,
		      const struct profile_weight *w, unsigned int stack_flags);

#endif
