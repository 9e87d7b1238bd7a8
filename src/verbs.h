/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs of the command line, one file each. A verb parses its own
 * options and returns the process exit status (enum exit_status) for main().
 */
#ifndef LATPROF_VERBS_H
#define LATPROF_VERBS_H

enum exit_status {
	EXIT_STATUS_OK = 0,
	EXIT_STATUS_FAILURE = 1,	/* runtime failure */
	EXIT_STATUS_USAGE = 2,		/* bad usage or bad input */
};

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
