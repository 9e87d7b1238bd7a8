/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve's triggers: rules checked at the end of every history window
 * (history.h) that, when they hold, save the history around the moment as
 * a profile file in a directory, in the format `record -o` writes, with
 * the rule in its metadata (trigger.*). A rule is one option value,
 * comma-separated KEY=VALUE (the --config file's mapping becomes the same):
 *
 *	name=NAME          the files' prefix and the counter's label (required)
 *	syscall=NAME       with p99_ms: that syscall's calls (every process's)
 *	p99_ms=MS          the syscall's p99 in a window over MS ...
 *	requests_p99_ms=MS ... or the p99 of the requests that ended in it
 *	                   (serve --requests) over MS ...
 *	cpu_pct=PCT        ... or a process's CPU in a window over PCT% of a CPU
 *	slow_calls=N       ... or N slow calls or more at one site (one stack)
 *	comm=NAME          only the processes named NAME
 *	windows=K          K windows in a row (default 1)
 *	before_s=S         the seconds saved before the firing (default 60)
 *	after_s=S          and after it (default 10): the file comes then
 *	every_s=S          one file at most every S seconds (default 300)
 *
 * A rule fires once when its condition starts to hold and again only after
 * a window where it did not; a firing within every_s of the previous file
 * is counted as suppressed and saves nothing, and the directory keeps at
 * most max_files of this agent's files (the oldest removed), so a flapping
 * rule cannot fill a disk. Thread-safe: windows come from the recorder's
 * thread, the listings from HTTP requests.
 */
#ifndef LATPROF_TRIGGER_H
#define LATPROF_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "src/history.h"
#include "src/profile.h"
#include "src/sysstats.h"

#define TRIGGER_NAME_LEN 48
#define TRIGGER_DEFAULT_BEFORE_S 60
#define TRIGGER_DEFAULT_AFTER_S 10
#define TRIGGER_DEFAULT_EVERY_S 300
#define TRIGGER_DEFAULT_MAX_FILES 100
#define TRIGGER_MAX_RULES 32

enum trigger_kind {
	TRIGGER_KIND_SYSCALL_P99,	/* threshold: ns */
	TRIGGER_KIND_CPU,		/* threshold: hundredths of a percent of a CPU */
	TRIGGER_KIND_SLOW_CALLS,	/* threshold: calls */
	TRIGGER_KIND_REQUESTS_P99,	/* threshold: ns */
};

struct trigger_rule {
	char name[TRIGGER_NAME_LEN];
	enum trigger_kind kind;
	char syscall[32];		/* "" for none */
	char comm[16];			/* "" for any */
	uint64_t threshold;
	unsigned int windows;
	uint64_t before_ns, after_ns, every_ns;
	char text[256];			/* as given */
};

/*
 * Parse rule @arg (the syntax above) into @r. 0, or -EINVAL with a one-line
 * reason in @why[@size]. Cannot fail otherwise.
 */
int trigger_rule_parse(const char *arg, struct trigger_rule *r, char *why, size_t size);

/* What a window brings to the rules. */
struct trigger_window {
	uint64_t start_ns, end_ns;	/* wall clock */
	const struct profile *p;	/* its samples */
	/*
	 * The cumulative statistics of @syscall of the processes named @comm
	 * (NULL: any) so far into @out; false: none yet.
	 */
	bool (*sys_total)(void *arg, const char *syscall, const char *comm, struct sys_stat *out);
	void *arg;
};

struct triggers;

/*
 * Rules @rules[@nr] (copied) saving into directory @dir (made if missing)
 * from history @h (borrowed), at most @max_files files. NULL with errno set.
 */
struct triggers *triggers_new(const struct trigger_rule *rules, size_t nr, const char *dir,
			      unsigned int max_files, struct history *h);
/* NULL is a no-op; the files stay. */
void triggers_free(struct triggers *t);

/*
 * Check every rule against window @w (just added to the history), and
 * save the files now due. Firings and saves are said at info level, a
 * failed save at warning level. Cannot fail.
 */
void triggers_window(struct triggers *t, const struct trigger_window *w);

/*
 * The saved files as a JSON array, newest last: name, rule, fired_ns (wall
 * clock), start_ns, end_ns, bytes. 0 or -errno.
 */
int triggers_write_list(struct triggers *t, FILE *out);

/*
 * The contents of saved file @name into *@buf (owned by the caller).
 * 0, -ENOENT (no such file of this agent) or -errno.
 */
int triggers_read(struct triggers *t, const char *name, char **buf, size_t *len);

/*
 * The rules' names and counters, @n of them at most, into the arrays;
 * returns how many. Cannot fail.
 */
size_t triggers_get_counts(struct triggers *t, const char **names, uint64_t *firings,
			   uint64_t *suppressed, size_t n);

#endif
