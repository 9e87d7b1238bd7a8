/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Starting a command to trace: it is forked, waits on a pipe until the
 * collectors are attached, and only then execs, so no early sample is lost.
 */
#ifndef LATPROF_COMMAND_H
#define LATPROF_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t pid;
	int release_fd;		/* write end: one byte releases the child */
	int error_fd;		/* read end: errno of a failed exec, EOF on success */
	int nice;		/* the command runs at this niceness (latprof's own
				 * may be raised, session.c) */
};

/* Is @file an executable found like execvp would find it? */
bool command_exists(const char *file);

/* The path of @file found like execvp would find it, into @buf; false if none. */
bool command_path(const char *file, char *buf, size_t size);

/* Fork the child, held before exec. 0 or -errno. */
int child_start(struct child *c, char *const argv[]);

/* Let the child exec; returns 0, or -errno of the failed exec. */
int child_release(struct child *c);

/* Kill and reap a child that was never released. */
void child_abort(struct child *c);

#endif
