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

/* The loop's tick, every window: cut, keep, hand on. 0, or -errno ends the recorder. */
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
	return err == -ENOMEM ? 0 : err;	/* a window lost, not the recorder */
}

static void *recorder_main(void *arg)
{
	struct serve_history *sh = arg;
	struct session_config cfg = {
		.kind = SESSION_KIND_PROFILE, .co = &sh->co, .interval_s = 1,
	};
	struct session_loop loop = {
		.stop = recorder_stop, .tick = recorder_tick,
		.tick_ms = sh->cfg.window_ns / 1000000, .arg = sh,
	};
	int err = session_open(&sh->sess, &cfg);

	if (!err) {
		pr_info("history: windows of %.0f s", sh->cfg.window_ns / 1e9);
		err = session_run(&sh->sess, &loop);
	}
	if (err)
		pr_warn("history stopped: %s", strerror(-err));
	session_release(&sh->sess);
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
	sh->first_tick = true;
	if (cfg->command_pid) {
		sh->pid = cfg->command_pid;
		sh->co.pids = (struct pid_list){ .items = &sh->pid, .nr = 1 };
		sh->co.comms = (struct comm_list){ 0 };
		sh->co.all = false;
	}
	session_init(&sh->sess);
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
