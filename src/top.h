/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof top`: the live view. One session (session.h) as record runs it;
 * every interval a look at the aggregation so far (collect_peek_profile)
 * becomes the views of top_model.h, drawn full-screen with ncurses
 * (top_screen.c) or printed as plain snapshots (top_text.c, -b or no
 * terminal). At the end, like record, the whole run's profile goes to -o.
 */
#ifndef LATPROF_TOP_H
#define LATPROF_TOP_H

#include <stdbool.h>

#include "src/collectopts.h"
#include "src/record_output.h"

struct top_opts {
	struct collector_opts co;
	double interval_s;		/* --interval: a snapshot every SEC */
	unsigned long iterations;	/* -n: snapshots before the end; 0: none */
	bool batch;			/* -b, or stdout not a terminal */
	unsigned int rows;		/* --rows: rows per table in a snapshot */
	unsigned int stack_flags;	/* --native: STACKS_FLAG_NATIVE */
	struct record_output out;	/* -o, NULL path: no profile at the end */
	char **command;			/* after "--" */
	const char *command_line;	/* latprof's own, for the metadata */
};

/*
 * Run the live view as @o says until q, a signal, -n snapshots or the
 * targets' end, then write -o. 0, -ENOENT or -EACCES when the command cannot
 * be run (bad input), or another -errno (printed).
 */
int top_run(const struct top_opts *o);

#endif
