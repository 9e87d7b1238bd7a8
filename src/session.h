/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One BPF session, as record, serve's metrics and serve's profiles all run
 * it: the symbolizer, the collectors sized by one policy, a -- COMMAND
 * started held and released once the programs are attached, the
 * timeline's intervals (intervals.h); one poll loop with a stop condition
 * and a tick; one finish that detaches, stops the command, builds the
 * profile and writes the same run metadata (runmeta.h) wherever the
 * profile is made. The only caller of
 * collect_open() and collect_attach(). Prints each failure once, with its
 * context.
 */
#ifndef LATPROF_SESSION_H
#define LATPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "src/collect.h"
#include "src/collectopts.h"
#include "src/profile.h"
#include "src/intervals.h"
#include "src/command.h"
#include "symbolize/symbolize.h"

enum session_kind {
	/* stacks kept and symbolized into a profile: record, serve's profiles */
	SESSION_KIND_PROFILE,
	/* counters only, drained into metrics; lifecycle events to proc_fn */
	SESSION_KIND_METRICS,
	/*
	 * serve with a history: both in one session, so every hook runs once.
	 * Its stacks are cut into windows (session_cut) and the counters the
	 * metrics read are drained (collect_drain, task_counts) meanwhile;
	 * lifecycle events and stalls go to proc_fn and stall_fn. No wait
	 * rule and no timeline, which only a whole recording stores; the
	 * statistics go to the drain, not into the cut.
	 */
	SESSION_KIND_RECORDER,
};

struct session_config {
	enum session_kind kind;
	const struct collector_opts *co;	/* borrowed for the session's life */
	char **command;			/* -- COMMAND to start held, or NULL */
	double interval_s;		/* the timeline's interval (profiles) */
	collect_proc_fn proc_fn;	/* metrics, recorder: lifecycle events */
	collect_stall_fn stall_fn;	/* metrics, recorder: event-loop stalls (with proc_arg) */
	void *proc_arg;
};

struct session {
	struct session_config cfg;
	struct symbolizer *sym;
	struct collect *col;
	struct child child;
	bool have_child;
	int child_status;		/* wait status, -1 while it runs */
	struct intervals intervals;
	bool sampling;
	uint64_t start_ns;		/* session_init: latprof's start */
	uint64_t attached_ns, end_ns;	/* CLOCK_MONOTONIC */
	uint64_t start_wall_ns;		/* wall clock at attach */
	int nice;			/* latprof's niceness as started */
	bool targets_ended;		/* the loop ended because they did */
	bool stopped;			/* session_stop ran */
	/* session_reopen: the options with the targets it took over (owned) */
	struct collector_opts *reopen_co;
	struct pid_list reopen_pids;
};

/*
 * A session started at the default niceness (0) runs at SESSION_NICE, root
 * only: on a saturated machine its reader must keep up with the kernel or
 * lose records (docs/troubleshooting.md); a niceness the user chose is kept.
 * A command latprof runs gets the one latprof was started with.
 */
#define SESSION_NICE (-10)

/* Zero @s and note the start time (for the start-up metadata). */
void session_init(struct session *s);

/*
 * Open, load and attach the collectors of @cfg, start and then release its
 * command. 0 or -errno after printing why; -ENOENT or -EACCES: the command
 * cannot be run (bad input).
 */
int session_open(struct session *s, const struct session_config *cfg);

/* What the loop asks of its caller; each callback may be NULL. */
struct session_loop {
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0: none */
	bool (*stop)(void *arg);	/* true: end now */
	int (*tick)(void *arg);		/* every tick_ms; 0 or -errno ends the loop */
	unsigned int tick_ms;
	bool until_targets_exit;	/* end when the command or every -p pid is gone */
	void *arg;
};

/*
 * Poll the session (lifecycle events, the timeline's boundaries) until the
 * deadline, @l->stop or (with until_targets_exit) the targets' end. 0 or
 * -errno (printed).
 */
int session_run(struct session *s, const struct session_loop *l);

/*
 * Detach, end a command still running (SIGTERM after 50 ms), and build the
 * profile of a SESSION_KIND_PROFILE session into *@out (owned by the
 * caller): samples, processes, timeline and the run metadata, with
 * @command_line as latprof's own. On success the collectors and the
 * symbolizer are freed (the profile holds its own strings): only the child's
 * status is left to read. 0 or -errno (printed).
 */
int session_finish(struct session *s, const char *command_line, struct profile **out);

/*
 * The first half of session_finish, for a session whose profile is not
 * wanted (top without -o): detach, and end a command still running.
 * Idempotent.
 */
void session_stop(struct session *s);

/*
 * Without stopping: the profile of what a running SESSION_KIND_PROFILE
 * session collected since its last cut (collect_cut_profile: samples, no
 * syscall statistics) into *@out (owned by the caller), with the run
 * metadata of session_finish, its time from @since_wall_ns (wall clock) to
 * now. serve's history cuts its session into windows this way. 0 or -errno
 * (printed).
 */
int session_cut(struct session *s, const char *command_line, uint64_t since_wall_ns,
		struct profile **out);

/*
 * A fresh session in place of @s (a SESSION_KIND_RECORDER one, which keeps
 * the maps and images of every process it saw, gone ones too, for as long
 * as it runs): the same options, its targets as they are now (a command it
 * started stays its child, and the live processes it and the -p pids
 * started stay targets; -a and --comm find theirs), nothing collected
 * kept. The fresh one is opened and attached while @s still runs, then
 * @before_release (NULL: none) is called with @s, for a last look at what
 * it counted, and @s is released: nothing happens unseen between them
 * (what happens while both run is seen by both). 0, or -errno (printed)
 * with @s left as it was.
 */
int session_reopen(struct session *s, void (*before_release)(void *arg, struct session *old),
		   void *arg);

/* Free everything; a command never released is killed. */
void session_release(struct session *s);

/*
 * SIGINT, SIGTERM and SIGHUP noted instead of ending latprof, so a run
 * stops cleanly (record, top): session_stop_signal() then says which came,
 * 0 until one does.
 */
void session_catch_stop_signals(void);
int session_stop_signal(void);

/* Are the targets still there (the command, or one of the -p pids)? */
bool session_targets_alive(struct session *s);

#endif
