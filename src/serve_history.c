// SPDX-License-Identifier: GPL-2.0-only
/* serve's recorder of history windows (serve_history.h). */
#include "src/serve_history.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

/*
 * A session keeps what it read of every process it saw, exited ones too,
 * so that their samples still symbolize: right for a recording, unbounded
 * for an agent that runs for weeks on a machine starting processes all the
 * time. Past this many images of processes gone (exited, or exec'd since:
 * a fork and exec leaves two), the agent opens a fresh session at a
 * window's end and releases this one (session_reopen), which gives the
 * memory back. An image gone costs some 2.5 KB once trimmed (/bin/true
 * started 40 times a second: 11 MB in 55 s without reopening), so this
 * bounds them near 10 MB; at 256, that churn reopened every 4 s, each
 * reopening a BPF load and a snapshot of every target. Live processes do
 * not count: a machine of a thousand steady ones would reopen at every
 * window. LATPROF_DEBUG_RECYCLE_ENDED=N (hidden) sets it, for a test that
 * cannot start thousands of processes without losing their events.
 */
#define RECORDER_RECYCLE_ENDED 4096

struct serve_history {
	struct serve_history_config cfg;
	uint64_t since_wall_ns;		/* the window being recorded began */
	uint64_t due_ns;		/* CLOCK_MONOTONIC: it ends */
	uint64_t recycle_ended;		/* RECORDER_RECYCLE_ENDED */
	pthread_mutex_t lock;
	struct sys_sum sys;		/* the window's syscall statistics, summed */
	bool sys_lost;			/* one could not be kept: said once */
};

struct serve_history *serve_history_new(const struct serve_history_config *cfg)
{
	const char *debug = getenv("LATPROF_DEBUG_RECYCLE_ENDED");
	struct serve_history *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	pthread_mutex_init(&sh->lock, NULL);
	sh->cfg = *cfg;
	sh->recycle_ended = debug ? strtoull(debug, NULL, 10) : RECORDER_RECYCLE_ENDED;
	serve_history_restart(sh);
	pr_info("history: windows of %.0f s", cfg->window_ns / 1e9);
	return sh;
}

void serve_history_free(struct serve_history *sh)
{
	if (!sh)
		return;
	sys_sum_release(&sh->sys);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

void serve_history_restart(struct serve_history *sh)
{
	sh->since_wall_ns = wall_ns();
	sh->due_ns = now_ns() + sh->cfg.window_ns;
}

int serve_history_add_sys(struct serve_history *sh, const struct sys_stat *st)
{
	int err;

	pthread_mutex_lock(&sh->lock);
	err = sys_sum_add(&sh->sys, st);
	if (err && !sh->sys_lost) {
		sh->sys_lost = true;
		pr_warn("history: a window's syscall statistics incomplete: %s", strerror(-err));
	}
	pthread_mutex_unlock(&sh->lock);
	return err;
}

/*
 * The window's statistics, taken (the caller releases them): the next
 * window's start empty, its memory as large as it needs, not as the
 * largest window's.
 */
static struct sys_sum window_sys_take(struct serve_history *sh)
{
	struct sys_sum sum;

	pthread_mutex_lock(&sh->lock);
	sum = sh->sys;
	sh->sys = (struct sys_sum){ 0 };
	pthread_mutex_unlock(&sh->lock);
	return sum;
}

/* Does the session keep so many processes gone that a fresh one should take over? */
static bool recorder_worn(const struct serve_history *sh, struct session *s)
{
	struct collect_stats st;

	collect_get_stats(s->col, &st);
	return st.images_ended > sh->recycle_ended;
}

int serve_history_tick(struct serve_history *sh, struct session *s)
{
	struct profile *p = NULL;
	uint64_t t = now_ns(), wall = wall_ns();
	struct sys_sum sys;
	int err;

	if (t < sh->due_ns)
		return 0;
	/* the next window is due a window after this one was, whatever this cut takes */
	sh->due_ns += sh->cfg.window_ns;
	if (sh->due_ns <= t)
		sh->due_ns = t + sh->cfg.window_ns;
	if (sh->cfg.drain)
		sh->cfg.drain(sh->cfg.arg);
	/* what drains during the cut (a scrape's) is the next window's */
	sys = window_sys_take(sh);
	err = session_cut(s, sh->cfg.command_line, sh->since_wall_ns, &p);	/* printed */
	sh->since_wall_ns = wall;
	if (!err && sys_sum_store(&sys, p))
		pr_warn("history: a window without its syscall statistics: %s", strerror(ENOMEM));
	sys_sum_release(&sys);
	if (!err) {
		err = history_add(sh->cfg.history, p, wall);
		if (err)
			pr_warn("cannot keep a history window: %s", strerror(-err));
		if (sh->cfg.on_window)
			sh->cfg.on_window(sh->cfg.arg, p);
	}
	profile_free(p);
	/* a window's symbolizing allocates and frees: give it back */
	malloc_trim(0);
	return recorder_worn(sh, s) ? -EAGAIN : 0;
}
