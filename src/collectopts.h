/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collector options that `record` and `serve` share, declared once
 * (COLLECTOPTS_LONGOPTS, embedded in each verb's getopt table) and parsed
 * once (collectopts_parse), so both verbs take the same options with the
 * same limits and messages, in a --config file too: targets (-p, --comm,
 * -a), collectors (--mode), the syscall filter, thresholds, unwinding,
 * Python frames, debuginfo directories, request/file/network tracking and
 * the log level. Each parser prints its one error line (naming the option
 * and the bad value) and returns -EINVAL for bad input, -ESRCH for a pid
 * that does not exist, or -ENOMEM.
 */
#ifndef LATPROF_COLLECTOPTS_H
#define LATPROF_COLLECTOPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct pid_list {
	pid_t *items;
	size_t nr, alloc;
};

struct comm_list {
	const char **items;	/* borrowed from argv */
	size_t nr, alloc;
};

struct syscall_list {
	int *items;		/* syscall numbers */
	size_t nr, alloc;
};

struct collector_modes {
	bool cpu, syscall, offcpu;
};

struct debug_dir_list {
	char **items;		/* owned, absolute */
	size_t nr, alloc;
};

/* Everything a BPF session is configured with from the command line. */
struct collector_opts {
	struct pid_list pids;		/* -p */
	struct comm_list comms;		/* --comm */
	bool all;			/* -a */
	struct collector_modes modes;	/* --mode */
	struct syscall_list syscalls;	/* --syscalls */
	const char *syscalls_arg;	/* as given, for the run metadata */
	unsigned int freq_hz;		/* -F */
	uint64_t min_duration_us;	/* --min-duration */
	uint64_t min_block_us;		/* --min-block */
	uint64_t stall_min_us;		/* --stall-min */
	unsigned int await_hz;		/* --await-hz: asyncio task walks per second, 0 off */
	bool await_hz_given;		/* on the command line or in the config */
	bool unwind_dwarf;		/* --unwind */
	unsigned int stack_size;	/* --stack-size, bytes */
	bool no_python;			/* --no-python */
	struct debug_dir_list debug_dirs;	/* --debug-dir */
	bool requests, files, net;	/* --requests, --files, --net */
	uint32_t max_requests;		/* --max-requests */
	bool quiet;			/* -q */
};

/* The long-only options' codes, above every character. */
enum collectopts_code {
	COLLECTOPTS_COMM = 256,
	COLLECTOPTS_MODE,
	COLLECTOPTS_SYSCALLS,
	COLLECTOPTS_MIN_DURATION,
	COLLECTOPTS_MIN_BLOCK,
	COLLECTOPTS_STALL_MIN,
	COLLECTOPTS_AWAIT_HZ,
	COLLECTOPTS_UNWIND,
	COLLECTOPTS_STACK_SIZE,
	COLLECTOPTS_NO_PYTHON,
	COLLECTOPTS_DEBUG_DIR,
	COLLECTOPTS_REQUESTS,
	COLLECTOPTS_MAX_REQUESTS,
	COLLECTOPTS_FILES,
	COLLECTOPTS_NET,
	COLLECTOPTS_VERB = 512,		/* a verb's own long-only codes start here */
};

/* The short options of the set, for the start of a getopt string. */
#define COLLECTOPTS_SHORT "p:aF:qv"

/* The long options of the set: the first entries of a verb's table. */
#define COLLECTOPTS_LONGOPTS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "all", no_argument, NULL, 'a' }, \
	{ "comm", required_argument, NULL, COLLECTOPTS_COMM }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "mode", required_argument, NULL, COLLECTOPTS_MODE }, \
	{ "syscalls", required_argument, NULL, COLLECTOPTS_SYSCALLS }, \
	{ "min-duration", required_argument, NULL, COLLECTOPTS_MIN_DURATION }, \
	{ "await-hz", required_argument, NULL, COLLECTOPTS_AWAIT_HZ }, \
	{ "min-block", required_argument, NULL, COLLECTOPTS_MIN_BLOCK }, \
	{ "stall-min", required_argument, NULL, COLLECTOPTS_STALL_MIN }, \
	{ "unwind", required_argument, NULL, COLLECTOPTS_UNWIND }, \
	{ "stack-size", required_argument, NULL, COLLECTOPTS_STACK_SIZE }, \
	{ "no-python", no_argument, NULL, COLLECTOPTS_NO_PYTHON }, \
	{ "debug-dir", required_argument, NULL, COLLECTOPTS_DEBUG_DIR }, \
	{ "requests", no_argument, NULL, COLLECTOPTS_REQUESTS }, \
	{ "max-requests", required_argument, NULL, COLLECTOPTS_MAX_REQUESTS }, \
	{ "files", no_argument, NULL, COLLECTOPTS_FILES }, \
	{ "net", no_argument, NULL, COLLECTOPTS_NET }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "verbose", no_argument, NULL, 'v' }

/* The help lines of the set's options, for a verb's usage text. */
extern const char collectopts_usage_targets[];
extern const char collectopts_usage[];

/* The defaults: cpu,syscall at 99 Hz, DWARF unwinding, 1 ms thresholds. */
void collectopts_init(struct collector_opts *o);

/* Free what @o owns; it is empty afterwards. */
void collectopts_release(struct collector_opts *o);

/* A getopt result of the set, or not: a verb's own option. */
#define COLLECTOPTS_NOT_MINE 1

/*
 * Apply option @c with argument @arg (getopt's optarg) to @o. Returns 0,
 * COLLECTOPTS_NOT_MINE for an option of the verb's own, or -errno after
 * printing the one error line.
 */
int collectopts_parse(struct collector_opts *o, int c, const char *arg);

/*
 * After the command line: at most one kind of target (@has_command: a
 * -- COMMAND was given; @need_target: none is an error, else none means
 * every process), and warnings for options that do nothing. 0 or -EINVAL
 * after printing why.
 */
int collectopts_check(struct collector_opts *o, bool has_command, bool need_target);

/*
 * The end of a recording verb's command line (record, top): the -- COMMAND
 * left at argv[optind] into *@command (NULL: none), collectopts_check with
 * a target needed, and the command looked up in PATH. 0, -EINVAL, or
 * -ENOENT for a command not found, after printing why.
 */
int collectopts_finish(struct collector_opts *o, int argc, char **argv, char ***command);

/* "cpu,syscall": the collectors of @m in their fixed order. */
const char *collectopts_mode_name(const struct collector_modes *m);

/* "requests,files": what --requests/--files/--net turned on, "" for none. */
const char *collectopts_track_name(const struct collector_opts *o);

/* Does @o need the syscall hooks (any collector or tracker built on them)? */
bool collectopts_needs_syscalls(const struct collector_opts *o);

/*
 * With --config FILE in @argv (before any "--"): a new argv in *@av, the
 * options the file stands for (keys: the long options of @longopts, except
 * config and help) placed before the command line's own, which therefore
 * override them; lists such as --pid accumulate. Strings are owned by @cfg,
 * the array by the caller; *@av is NULL without --config. 0, or -EINVAL
 * after printing where the file is wrong.
 */
struct config_args;
int collectopts_expand_config(int argc, char **argv, const struct option *longopts,
			      struct config_args *cfg, char ***av, int *ac);

/*
 * The frame of a verb that records (record, serve): --config FILE expanded
 * as above, the arguments parsed by @parse into @opts (0, 1 after -h, or
 * -errno after printing why), then @run(@opts, COMMAND_LINE) with latprof's
 * own argv joined (the run metadata's command line, owned here), which
 * returns 0 or -errno. Returns the verb's exit status (verbs.h): OK after -h
 * or a run that succeeded; USAGE for bad options, an unreadable --config or
 * a command that cannot be exec'ed (@run's -ENOENT or -EACCES: bad input,
 * like a bad pid); FAILURE for any other error.
 */
int collectopts_run_verb(int argc, char **argv, const struct option *longopts,
			 int (*parse)(int argc, char **argv, void *opts),
			 int (*run)(void *opts, const char *command_line), void *opts);

/* Append the comma-separated pids of @arg (each must exist) to @out. */
int collectopts_parse_pids(const char *arg, struct pid_list *out);

/*
 * Seconds within [@min, @max] ((@min, @max] with @min_open) for option
 * @what into *@out. 0, or -EINVAL after the one error line.
 */
int collectopts_parse_seconds(const char *arg, const char *what, double min, bool min_open,
			      double max, double *out);

/*
 * Append process name @arg (--comm, repeatable up to LP_MAX_COMMS) to @out;
 * warns when it is longer than the kernel keeps.
 */
int collectopts_add_comm(const char *arg, struct comm_list *out);

/* Set @out from "cpu,syscall,offcpu" (any non-empty subset). */
int collectopts_parse_mode(const char *arg, struct collector_modes *out);

/* Append the syscall numbers of the comma-separated names of @arg to @out. */
int collectopts_parse_syscalls(const char *arg, struct syscall_list *out);

#endif
