// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof top` (top.h): the session, a look at it every interval into the
 * model, the screen or the snapshots, the stop, and -o at the end.
 */
#include "src/top.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "src/record.h"
#include "src/session.h"
#include "src/top_model.h"
#include "src/top_screen.h"
#include "src/top_text.h"
#include "src/lib/util.h"

/* How often keys are read, and a look is due at most this late. */
#define TOP_KEYS_MS 50
/* An ended process's samples are all read this long after its end. */
#define TOP_ENDED_GRACE_NS 1000000000ULL
/* Processes whose threads the header counts, at most (-a has thousands). */
#define TOP_THREADS_PROCS 256

struct top {
	const struct top_opts *o;
	struct session s;
	struct top_model m;
	struct top_screen screen;
	uint64_t next_look_ns;
	uint64_t prev_look_ns;		/* CLOCK_MONOTONIC of the previous look, 0: none */
	uint64_t self_cpu_ns;		/* latprof's CPU at the last look */
	unsigned long looks;
	bool quit;
};

static uint64_t self_cpu_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* Threads of process @pid from /proc, 0 when it is gone. */
static unsigned int threads_of(uint32_t pid)
{
	char path[64], line[128];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The header's counters that are not in the look: losses, processes, latprof's CPU. */
static void header_counters(struct top *t)
{
	struct top_header *h = &t->m.hdr;
	struct proc_tree *tree = collect_procs(t->s.col);
	struct collect_stats st;
	uint64_t cpu = self_cpu_now(), lost = 0;
	size_t i, counted = 0;
	int k;

	collect_get_stats(t->s.col, &st);
	for (k = 0; k < LP_STAT_NR; k++)
		if (k != LP_STAT_SAMPLES && k != LP_STAT_EVENTS)
			lost += st.stat[k];
	h->lost = lost - h->lost_all;
	h->lost_all = lost;
	h->samples_all = st.stat[LP_STAT_SAMPLES];
	h->processes = h->threads = 0;
	for (i = 0; tree && i < tree->procs.nr; i++) {
		if (tree->procs.items[i].ended)
			continue;
		h->processes++;
		if (counted++ < TOP_THREADS_PROCS)
			h->threads += threads_of(tree->procs.items[i].pid);
	}
	h->self_cpu = h->interval_ns ? (double)(cpu - t->self_cpu_ns) / h->interval_ns : 0;
	t->self_cpu_ns = cpu;
	h->min_duration_us = t->o->co.min_duration_us;
}

/*
 * A look keeps the samples of a process unless it had ended a second
 * before the previous look: that look read its last samples and counted
 * them since the start, which keeps them (top_model.h), so with processes
 * coming and going a look costs the live ones, not all there were. (From
 * the previous look, not this one: a frozen screen or a slow look leaves
 * no process out before one look has held all it did.)
 */
static bool look_keeps(void *arg, uint32_t pid)
{
	struct top *t = arg;
	const struct proc_info *pi = proc_tree_find(collect_procs(t->s.col), pid);

	return !pi || !pi->ended || pi->end_ns + TOP_ENDED_GRACE_NS > t->prev_look_ns;
}

/* A look at the session into the model, then the snapshot or the screen. */
static int look(struct top *t, uint64_t now)
{
	uint64_t c0 = thread_cpu_ns(), c1, c2;
	struct profile *p = profile_new();
	struct sys_stats sys = { 0 };
	int err;

	err = p ? collect_peek_profile(t->s.col, p, look_keeps, t, &sys) : -ENOMEM;
	if (err) {
		profile_free(p);
		free(sys.items);
		top_screen_close(&t->screen);	/* the message on a terminal as it was */
		pr_err("cannot read the session: %s", strerror(-err));
		return err;
	}
	/* without -o, what the looks leave out is never needed again */
	if (!t->o->out.path)
		collect_forget(t->s.col, look_keeps, t);
	t->prev_look_ns = now;
	c1 = thread_cpu_ns();
	top_model_push(&t->m, p, &sys, now - t->s.attached_ns);
	header_counters(t);
	err = top_model_compute(&t->m);
	if (err) {
		top_screen_close(&t->screen);
		pr_err("cannot compute the views: %s", strerror(-err));
		return err;
	}
	c2 = thread_cpu_ns();
	t->looks++;
	if (t->screen.open) {
		top_screen_draw(&t->screen, &t->m, true);
	} else {
		top_text_print(stdout, &t->m, t->o->rows);
		if (ferror(stdout) && (errno == EPIPE || errno == EINTR)) {
			/* the reader went away (| head), or a stop signal came: the end */
			t->quit = true;
		} else if (ferror(stdout)) {
			pr_err("cannot write the snapshot: %s", strerror(errno));
			return -EIO;
		}
	}
	if (t->o->iterations && t->looks >= t->o->iterations)
		t->quit = true;
	pr_debug("look %lu: %" PRIu64 " samples; CPU: %.2f ms reading, %.2f ms computing, "
		 "%.2f ms showing", t->looks, (uint64_t)t->m.cur->samples.nr, (c1 - c0) / 1e6,
		 (c2 - c1) / 1e6, (thread_cpu_ns() - c2) / 1e6);
	return 0;
}

static bool top_stop(void *arg)
{
	struct top *t = arg;

	return t->quit || session_stop_signal();
}

/* Every TOP_KEYS_MS: the keys, then a look when one is due. */
static int top_tick(void *arg)
{
	struct top *t = arg;
	uint64_t now = now_ns(), step = (uint64_t)(t->o->interval_s * 1e9);
	unsigned int keys = top_screen_keys(&t->screen, &t->m);
	int err = 0;

	if (keys & TOP_KEY_QUIT) {
		t->quit = true;
		return 0;
	}
	if (keys & TOP_KEY_THAW)
		t->next_look_ns = now;
	if (!t->screen.frozen && now >= t->next_look_ns) {
		/* the next look at its own time, however late this one came */
		t->next_look_ns += step;
		if (t->next_look_ns <= now)
			t->next_look_ns = now + step;
		return look(t, now);
	}
	if (keys & TOP_KEY_COMPUTE)
		err = top_model_compute(&t->m);
	if (!err && (keys & (TOP_KEY_REDRAW | TOP_KEY_COMPUTE)))
		top_screen_draw(&t->screen, &t->m, false);
	return err;
}

int top_run(const struct top_opts *o)
{
	struct session_config cfg = {
		.kind = SESSION_KIND_PROFILE,
		.co = &o->co,
		.command = o->command,
		.interval_s = o->interval_s,
	};
	struct top t = { .o = o };
	struct session_loop loop = {
		.stop = top_stop,
		.tick = top_tick,
		.tick_ms = TOP_KEYS_MS,
		.until_targets_exit = true,
		.arg = &t,
	};
	bool opened;
	int err, err2 = 0;

	session_init(&t.s);
	session_catch_stop_signals();
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe ends the snapshots (look) */
	raise_nofile_limit();
	err = top_model_init(&t.m, o->stack_flags);
	if (!err)
		err = session_open(&t.s, &cfg);
	opened = !err;
	/* after the session's own messages, which would be drawn over */
	if (!err && !o->batch && top_screen_open(&t.screen))
		pr_info("no terminal: plain snapshots every %.2f s, as with -b", o->interval_s);
	if (!err) {
		t.self_cpu_ns = self_cpu_now();
		t.next_look_ns = t.s.attached_ns + (uint64_t)(o->interval_s * 1e9);
		err = session_run(&t.s, &loop);
	}
	/* the last partial interval of targets that ended, on paper */
	if (!err && t.s.targets_ended && !t.screen.open &&
	    (!o->iterations || t.looks < o->iterations))
		err = look(&t, now_ns());
	top_screen_close(&t.screen);
	if (!err && t.s.targets_ended)
		pr_info("the targets exited");
	/* what was recorded is written whatever ended the view */
	if (opened && o->out.path)
		err2 = record_write(&o->out, &t.s, o->command_line);
	else
		session_stop(&t.s);	/* a command still running ends as with -o */
	if (!err)
		err = err2;
	session_release(&t.s);
	top_model_release(&t.m);
	return err;
}
