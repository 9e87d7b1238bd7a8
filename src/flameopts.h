/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The options both flame graph verbs take (`latprof flamegraph`, `latprof
 * diff`): what the picture shows and where it is written, with their help
 * text, their getopt entries and their parser, and the drawing once the
 * stacks are in. Loading the inputs is stacks_load.c's, the picture's
 * defaults stacks_svg.c's, rendering flamegraph/svg.c's.
 */
#ifndef LATPROF_FLAMEOPTS_H
#define LATPROF_FLAMEOPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "flamegraph/flame.h"
#include "src/stacks_svg.h"

struct flame_cmd {
	struct stacks_svg look;		/* display options, then the defaults */
	const char *out;
	const char *folded;		/* flamegraph --folded FILE */
	bool force_folded;		/* diff --folded */
};

/* The options' help, for a verb's --help after its own lines. */
extern const char flameopts_help[];

/* Their entries in a verb's getopt_long table (short options w: and o:). */
#define FLAMEOPTS_LONGOPTS                                               \
	{ "weight", required_argument, NULL, 'w' },                      \
	{ "title", required_argument, NULL, 'T' },                       \
	{ "subtitle", required_argument, NULL, 'S' },                    \
	{ "width", required_argument, NULL, 'W' },                       \
	{ "minwidth", required_argument, NULL, 'm' },                    \
	{ "inverted", no_argument, NULL, 'i' },                          \
	{ "colors", required_argument, NULL, 'c' },                      \
	{ "per-pid", no_argument, NULL, 'P' },                           \
	{ "py-lines", no_argument, NULL, 'y' },                          \
	{ "native", no_argument, NULL, 'X' },                            \
	{ "no-script", no_argument, NULL, 'n' },                         \
	{ "output", required_argument, NULL, 'o' },                      \
	{ "help", no_argument, NULL, 'h' }

/*
 * One of them, @c with @arg, into @cmd, or a verb's own that its longopts
 * hold: 'F' (--folded, with a FILE for flamegraph, without for diff) and 'N'
 * (diff's --no-normalize). 0, -EINVAL after printing, or 1 if @c is none.
 */
int flameopts_option(struct flame_cmd *cmd, int c, const char *arg);

/*
 * Parse @verb's options with @longopts (FLAMEOPTS_LONGOPTS and its own),
 * up to the first argument that is none (optind). 0, 1 after printing
 * @usage and the options' help (--help), or -EINVAL after printing why.
 */
int flameopts_parse(struct flame_cmd *cmd, int argc, char **argv, const struct option *longopts,
		    const char *verb, const char *usage);

/* The checks both verbs make once the options are parsed: 0 or -EINVAL, printed. */
int flameopts_check(const struct flame_cmd *cmd);

/*
 * Fill in what the options left open (@default_title: NULL, the weight's),
 * then write @f to cmd->out, atomically. Returns the exit status.
 */
int flameopts_render(struct flame_cmd *cmd, struct flame *f, const char *default_title);

#endif
