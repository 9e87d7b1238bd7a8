// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve's recorder of history windows (serve_history.h). The session's
 * loop ticks at each window's end, on the thread that reads the rings, so a
 * cut never races with the unwound stacks it empties.
 */
#include "src/serve_history.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "src/session.h"
#include "src/lib/util.h"

/*
 * A session keeps what it read of every process it saw, exited ones too,
 * so that their samples still symbolize: right for a recording, unbounded
 * for a recorder that runs for weeks on a machine starting processes all
 * the time. Past this many images of processes gone (exited, or exec'd
 * since), the recorder ends its session at a window's end and opens a new
 * one: the history has a gap of the reopening (its windows say where), and
 * the memory goes back to a fresh session's. Live processes do not count:
 * a machine of a thousand steady ones would reopen at every window.
 */
#define RECORDER_RECYCLE_ENDED 256

struct serve_history {
	struct serve_history_config cfg;
	struct collector_opts co;	/* the agent's, the command as its target */
	pid_t pid;
	pthread_t thread;
	struct session sess;
	uint64_t since_wall_ns;		/* the window being recorded began */
	bool first_tick;
};

static bool recorder_stop(void *arg)
{
	const struct serve_history *sh = arg;

	return *sh->cfg.stop;
}

/* Does the session keep so many processes gone that a fresh one should take over? */
static bool recorder_worn(struct serve_history *sh)
{
	struct collect_stats st;

	collect_get_stats(sh->sess.col, &st);
	return st.images_ended > RECORDER_RECYCLE_ENDED;
}

/*
 * The loop's tick, every window: cut, keep, hand on. 0; -EAGAIN: reopen
 * the session; another -errno ends the recorder.
 */
static int recorder_tick(void *arg)
{
	struct serve_history *sh = arg;
	struct profile *p = NULL;
	uint64_t t = wall_ns();
	int err;

	if (sh->first_tick) {	/* the loop ticks at once: the first window starts */
		sh->first_tick = false;
		sh->since_wall_ns = t;
		return 0;
	}
	err = session_cut(&sh->sess, sh->cfg.command_line, sh->since_wall_ns, &p);
	sh->since_wall_ns = t;
	if (!err) {
		err = history_add(sh->cfg.history, p, t);
		if (err)
			pr_warn("cannot keep a history window: %s", strerror(-err));
		if (sh->cfg.on_window)
			sh->cfg.on_window(sh->cfg.arg, p);
	}
	profile_free(p);
	/* a window's symbolizing allocates and frees: give it back */
	malloc_trim(0);
	if (err && err != -ENOMEM)
		return err;	/* -ENOMEM: a window lost, not the recorder */
	return recorder_worn(sh) ? -EAGAIN : 0;
}

static void *recorder_main(void *arg)
{
	struct serve_history *sh = arg;
	struct session_config cfg = {
		.kind = SESSION_KIND_PROFILE, .co = &sh->co, .interval_s = 1,
		.windows_only = true,
	};
	struct session_loop loop = {
		.stop = recorder_stop, .tick = recorder_tick,
		.tick_ms = sh->cfg.window_ns / 1000000, .arg = sh,
	};
	bool first = true;
	int err;

	do {
		session_init(&sh->sess);
		sh->first_tick = true;
		err = session_open(&sh->sess, &cfg);
		if (err) {
			session_release(&sh->sess);
			break;	/* printed; an -EAGAIN of its own is no reason to loop */
		}
		if (first)
			pr_info("history: windows of %.0f s", sh->cfg.window_ns / 1e9);
		else
			pr_debug("history: a fresh session after %d processes gone",
				 RECORDER_RECYCLE_ENDED);
		first = false;
		err = session_run(&sh->sess, &loop);
		session_release(&sh->sess);
		malloc_trim(0);
	} while (err == -EAGAIN && !*sh->cfg.stop);
	if (err && err != -EAGAIN)
		pr_warn("history stopped: %s", strerror(-err));
	return NULL;
}

struct serve_history *serve_history_start(const struct serve_history_config *cfg)
{
	struct serve_history *sh = calloc(1, sizeof(*sh));
	int err;

	if (!sh)
		return NULL;
	sh->cfg = *cfg;
	sh->co = *cfg->co;
	/* files and peers: a window keeps none (requests: their p99, for triggers) */
	sh->co.files = sh->co.net = false;
	if (cfg->command_pid) {
		sh->pid = cfg->command_pid;
		sh->co.pids = (struct pid_list){ .items = &sh->pid, .nr = 1 };
		sh->co.comms = (struct comm_list){ 0 };
		sh->co.all = false;
	}
	err = pthread_create(&sh->thread, NULL, recorder_main, sh);
	if (err) {
		free(sh);
		errno = err;
		return NULL;
	}
	return sh;
}

void serve_history_stop(struct serve_history *sh)
{
	if (!sh)
		return;
	pthread_join(sh->thread, NULL);
	free(sh);
}
