// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recording (record.h): the session, a live status line on a terminal,
 * the stop on SIGINT/SIGTERM/SIGHUP, the output and its summary.
 */
#include "src/record.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/session.h"
#include "src/sysstats.h"
#include "src/lib/util.h"

static bool stop_now(void *arg)
{
	(void)arg;
	return session_stop_signal();
}

static bool show_status(const struct record_opts *o)
{
	return !o->co.quiet && isatty(STDERR_FILENO);
}

/* The live status line, 4 times a second. */
static int status_line(void *arg)
{
	struct session *s = arg;
	struct collect_stats st;
	uint64_t lost = 0;
	int i;

	collect_get_stats(s->col, &st);
	for (i = 0; i < LP_STAT_NR; i++)
		if (i != LP_STAT_SAMPLES && i != LP_STAT_EVENTS)
			lost += st.stat[i];
	fprintf(stderr, "\r\033[Klatprof: %.1fs  samples %llu  events %llu  lost %llu"
		"  (Ctrl-C to stop)",
		(now_ns() - s->attached_ns) / 1e9, (unsigned long long)st.stat[LP_STAT_SAMPLES],
		(unsigned long long)st.stat[LP_STAT_EVENTS], (unsigned long long)lost);
	return 0;
}

/* ", 1234 syscalls (20 slow)" when the syscall collector ran, else "". */
static void syscall_summary(const struct profile *p, char *buf, size_t size)
{
	int col = profile_type_index(p, PROFILE_TYPE_SYSCALLS);
	struct sys_stats st = { 0 };
	uint64_t calls = 0, slow = 0;
	size_t i;

	buf[0] = 0;
	if (col < 0 || sys_stats_load(p, &st))
		goto out;
	for (i = 0; i < st.nr; i++)
		calls += st.items[i].count;
	for (i = 0; i < p->samples.nr; i++)
		if (p->samples.items[i].values[col] > 0)
			slow += p->samples.items[i].values[col];
	snprintf(buf, size, ", %llu syscalls (%llu slow)", (unsigned long long)calls,
		 (unsigned long long)slow);
out:
	free(st.items);
}

static void print_summary(const struct record_output *out, const struct session *s,
			  const struct profile *p)
{
	uint64_t samples = profile_get_meta_u64(p, "count.samples"), lost = 0;
	uint64_t procs = profile_get_meta_u64(p, "count.processes");
	char sys[96];
	size_t i;

	for (i = 0; i < p->meta.nr; i++)
		if (!strncmp(p->meta.items[i].key, "lost.", 5))
			lost += profile_get_meta_u64(p, p->meta.items[i].key);
	syscall_summary(p, sys, sizeof(sys));
	pr_info("wrote %s: %llu samples%s in %.2f s, %llu process%s, %llu lost%s",
		out->path, (unsigned long long)samples, sys, p->duration_ns / 1e9,
		(unsigned long long)procs, procs == 1 ? "" : "es",
		(unsigned long long)lost, lost ? " (see 'latprof report')" : "");
	if (!s->have_child || s->child_status == -1)
		return;
	if (WIFEXITED(s->child_status))
		pr_info("command exited with status %d", WEXITSTATUS(s->child_status));
	else if (WIFSIGNALED(s->child_status))
		pr_info("command killed by signal %d (%s)", WTERMSIG(s->child_status),
			strsignal(WTERMSIG(s->child_status)));
}

int record_write(const struct record_output *out, struct session *s, const char *command_line)
{
	struct profile *p = NULL;
	int err = session_finish(s, command_line, &p);

	if (err)
		return err;
	err = record_output_write(out, p);
	if (err)
		pr_err("cannot write %s: %s", out->path, strerror(-err));
	else
		print_summary(out, s, p);
	profile_free(p);
	return err;
}

int record_run(const struct record_opts *o)
{
	struct session_config cfg = {
		.kind = SESSION_KIND_PROFILE,
		.co = &o->co,
		.command = o->command,
		.interval_s = o->interval_s,
	};
	struct session_loop loop = {
		.stop = stop_now,
		.tick = show_status(o) ? status_line : NULL,
		.tick_ms = 250,
		.until_targets_exit = true,
	};
	struct session s;
	int err;

	session_init(&s);
	session_catch_stop_signals();
	raise_nofile_limit();
	loop.arg = &s;
	err = session_open(&s, &cfg);
	if (!err) {
		if (o->duration_s > 0)
			loop.deadline_ns = s.attached_ns + (uint64_t)(o->duration_s * 1e9);
		/*
		 * Like strace -p's "attached": a script that starts the load
		 * once this line is out misses none of it. A command is held
		 * until this point anyway.
		 */
		if (!o->command && o->duration_s > 0)
			pr_info("recording for %g s (Ctrl-C stops it sooner), then writing %s",
				o->duration_s, o->out.path);
		else if (!o->command)
			pr_info("recording until Ctrl-C (SIGINT), then writing %s", o->out.path);
		err = session_run(&s, &loop);
		if (loop.tick)
			fputs("\r\033[K", stderr);
	}
	if (!err)
		err = record_write(&o->out, &s, o->command_line);
	session_release(&s);
	return err;
}
