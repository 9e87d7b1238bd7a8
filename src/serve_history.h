/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve's flight recorder: a profile session of its own (session.h) on a
 * thread of its own, cut into windows (session_cut) that go into the
 * history (history.h), each then handed to @on_window (the triggers). It
 * runs beside the metrics session, with the agent's collector options and
 * targets, from serve_history_start until serve_history_stop.
 */
#ifndef LATPROF_SERVE_HISTORY_H
#define LATPROF_SERVE_HISTORY_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/collectopts.h"
#include "src/history.h"
#include "src/profile.h"

/* A window just kept, borrowed for the call; called on the recorder's thread. */
typedef void (*serve_window_fn)(void *arg, const struct profile *window);

struct serve_history_config {
	const struct collector_opts *co;	/* borrowed for the recorder's life */
	pid_t command_pid;		/* the agent's -- COMMAND (its target), 0 without */
	const char *command_line;	/* latprof's own, for the windows' metadata */
	uint64_t window_ns;
	struct history *history;	/* borrowed */
	volatile sig_atomic_t *stop;	/* set: the recorder ends */
	serve_window_fn on_window;	/* NULL: none */
	void *arg;
};

struct serve_history;

/*
 * Start the recorder's thread, which opens its session (a failure is
 * printed there, and the history stays empty). Returns the recorder, or
 * NULL with errno set. @cfg is copied.
 */
struct serve_history *serve_history_start(const struct serve_history_config *cfg);

/* Wait for the recorder to end (*stop set first) and free it. NULL is a no-op. */
void serve_history_stop(struct serve_history *sh);

#endif
