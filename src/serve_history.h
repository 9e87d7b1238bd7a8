/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve's flight recorder: the agent's one session (a SESSION_KIND_RECORDER
 * one, session.h) cut into windows (session_cut) at each window's end,
 * which go into the history (history.h) and are then handed to @on_window
 * (the triggers). Runs on the thread that polls the session, from the
 * agent's loop tick, so a cut never races with the unwound stacks it
 * empties. A window also holds the per-syscall statistics the agent's
 * drains took during it (serve_history_add_sys), as record stores them.
 */
#ifndef LATPROF_SERVE_HISTORY_H
#define LATPROF_SERVE_HISTORY_H

#include <stdint.h>

#include "src/history.h"
#include "src/profile.h"
#include "src/session.h"
#include "src/sysstats.h"

/* A window just kept, borrowed for the call; called on the polling thread. */
typedef void (*serve_window_fn)(void *arg, const struct profile *window);

struct serve_history_config {
	const char *command_line;	/* latprof's own, for the windows' metadata */
	uint64_t window_ns;
	struct history *history;	/* borrowed */
	serve_window_fn on_window;	/* NULL: none */
	/* before each cut: the agent drains, so the window's statistics reach its end */
	void (*drain)(void *arg);
	void *arg;
};

struct serve_history;

/*
 * A recorder whose first window starts now (the session just attached).
 * NULL with errno set. @cfg is copied.
 */
struct serve_history *serve_history_new(const struct serve_history_config *cfg);

/* NULL is a no-op. */
void serve_history_free(struct serve_history *sh);

/*
 * The agent's tick: when the window has ended, cut it out of @s, keep it
 * (a window that cannot be built or kept is lost, said once) and hand it
 * on. 0, or -EAGAIN when the session keeps so many processes gone that a
 * fresh one should take over (session_reopen, then serve_history_restart).
 */
int serve_history_tick(struct serve_history *sh, struct session *s);

/* The session was reopened: the next window starts now. */
void serve_history_restart(struct serve_history *sh);

/*
 * Statistics of (@st->pid, @st->name) the agent drained, for the window
 * being recorded; any thread. 0 or -ENOMEM (they are then not in it).
 */
int serve_history_add_sys(struct serve_history *sh, const struct sys_stat *st);

#endif
