/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recording, as `latprof record` runs it: one session (session.h) until
 * the command exits, the targets vanish, -d elapses or a signal comes, then
 * the profile written to -o (record_output.h) and a one-line summary.
 */
#ifndef LATPROF_RECORD_H
#define LATPROF_RECORD_H

#include "src/collectopts.h"
#include "src/record_output.h"

struct record_opts {
	struct collector_opts co;
	double duration_s;		/* -d, 0: none */
	double interval_s;		/* --interval: timeline and memory */
	struct record_output out;	/* -o, its format and --weight */
	char **command;			/* after "--" */
	const char *command_line;	/* latprof's own, for the metadata */
};

/*
 * Record as @o says and write the profile. Returns 0, -ENOENT or -EACCES
 * when the command cannot be run (bad input), or another -errno (printed).
 */
int record_run(const struct record_opts *o);

struct session;
/*
 * The end of a session that records (record, top -o): finish it, write its
 * profile to @out and say what was written in one line, and how the
 * command ended. 0 or -errno (printed).
 */
int record_write(const struct record_output *out, struct session *s, const char *command_line);

#endif
