// SPDX-License-Identifier: GPL-2.0-only
/* Collector options shared by record and serve (collectopts.h). */
#include "src/collectopts.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/command.h"
#include "src/config.h"
#include "src/syscalls.h"
#include "src/lib/util.h"
#include "src/verbs.h"

const char collectopts_usage_targets[] =
	"  -p, --pid PID[,PID...]   existing processes, their threads and later children\n"
	"  -a, --all                every process on the system\n"
	"      --comm NAME          processes whose name is NAME (repeatable, up to 8)\n";

const char collectopts_usage[] =
	"      --mode LIST          collectors, any of cpu,syscall,offcpu (default cpu,syscall)\n"
	"  -F, --freq HZ            sampling frequency, 1..10000 (default 99)\n"
	"      --syscalls LIST      trace only these syscalls, by name (default: all)\n"
	"      --min-duration USEC  a syscall at least this slow is attributed to its\n"
	"                           user stack (default 1000; 0: every syscall)\n"
	"      --min-block USEC     off-CPU intervals at least this long are recorded\n"
	"                           with their stacks (default 1000)\n"
	"      --stall-min USEC     a thread that waits in epoll (or poll on several fds)\n"
	"                           and runs this long between two waits stalled its\n"
	"                           event loop: listed, with what ran (default 10000;\n"
	"                           0: off)\n"
	"      --await-hz HZ        walk the asyncio tasks of CPython 3.14+ processes this\n"
	"                           often: each suspended task's time goes to its await\n"
	"                           chain, the 'await' weight (default 100; 0: off)\n"
	"      --requests           follow requests on accepted connections: latency and\n"
	"                           where their time went (CPU, syscalls by category)\n"
	"      --max-requests N     requests kept in the profile (default 100000)\n"
	"      --files              bytes and time per opened file path\n"
	"      --net                bytes and time per network peer (connect/accept)\n"
	"      --unwind MODE        user stacks: dwarf (copy the stack, unwind with .eh_frame),\n"
	"                           fp (frame pointers, in the kernel), auto (default: dwarf)\n"
	"      --no-python          keep CPython's eval loop frames instead of the Python\n"
	"                           functions they run (walked by default, dwarf only)\n"
	"      --stack-size BYTES   user stack bytes copied per sample for dwarf,\n"
	"                           1024..32768 (default 16384)\n"
	"      --debug-dir DIR      also look for separate debuginfo under DIR, like\n"
	"                           /usr/lib/debug: DIR/.build-id/xx/yyyy.debug and the\n"
	"                           .gnu_debuglink file in DIR/<binary's dir>/ (repeatable)\n"
	"      --config FILE        YAML file of these long options (key: value, lists for\n"
	"                           lists); options on the command line override it\n";

void collectopts_init(struct collector_opts *o)
{
	*o = (struct collector_opts){
		.modes = { .cpu = true, .syscall = true },
		.freq_hz = 99,
		.min_duration_us = 1000,
		.min_block_us = 1000,
		.stall_min_us = 10000,
		.await_hz = 100,
		.unwind_dwarf = true,
		.stack_size = 16384,
		.max_requests = 100000,
	};
}

void collectopts_release(struct collector_opts *o)
{
	free(o->pids.items);
	free(o->comms.items);
	free(o->syscalls.items);
	while (o->debug_dirs.nr)
		free(o->debug_dirs.items[--o->debug_dirs.nr]);
	free(o->debug_dirs.items);
	collectopts_init(o);
}

int collectopts_parse_pids(const char *arg, struct pid_list *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t pid;
	int err = copy ? 0 : -ENOMEM;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_u64(tok, 1, 4194304, &pid)) {
			pr_err("invalid pid '%s'", tok);
			err = -EINVAL;
		} else if (kill(pid, 0) && errno == ESRCH) {
			pr_err("no such process: %s", tok);
			err = -ESRCH;
		} else if (array_grow(out, out->nr + 1)) {
			err = -ENOMEM;
		} else {
			out->items[out->nr++] = pid;
		}
	}
	free(copy);
	return err;
}

int collectopts_add_comm(const char *arg, struct comm_list *out)
{
	if (!*arg || out->nr >= LP_MAX_COMMS || array_grow(out, out->nr + 1)) {
		pr_err("invalid --comm '%s' (non-empty, at most %d)", arg, LP_MAX_COMMS);
		return -EINVAL;
	}
	if (strlen(arg) >= LP_COMM_LEN)
		pr_warn("--comm '%s' is longer than the kernel's %d-character process names: "
			"matching '%.*s'", arg, LP_COMM_LEN - 1, LP_COMM_LEN - 1, arg);
	out->items[out->nr++] = arg;
	return 0;
}

int collectopts_parse_mode(const char *arg, struct collector_modes *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = copy ? 0 : -ENOMEM;

	*out = (struct collector_modes){ 0 };
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cpu"))
			out->cpu = true;
		else if (!strcmp(tok, "syscall"))
			out->syscall = true;
		else if (!strcmp(tok, "offcpu"))
			out->offcpu = true;
		else
			err = -EINVAL;
	}
	if (!err && !out->cpu && !out->syscall && !out->offcpu)
		err = -EINVAL;
	if (err == -EINVAL)
		pr_err("invalid --mode '%s': want a list of cpu, syscall, offcpu", arg);
	free(copy);
	return err;
}

int collectopts_parse_syscalls(const char *arg, struct syscall_list *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = copy ? 0 : -ENOMEM, nr;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		nr = syscall_number(tok);
		if (nr < 0 || nr >= LP_MAX_SYSCALL_NR) {
			pr_err("unknown syscall '%s' in --syscalls (names as in docs/syscalls.md)",
			       tok);
			err = -EINVAL;
		} else if (array_grow(out, out->nr + 1)) {
			err = -ENOMEM;
		} else {
			out->items[out->nr++] = nr;
		}
	}
	if (!err && !out->nr) {
		pr_err("empty --syscalls list");
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/*
 * auto means dwarf for every process: Debian's glibc has no frame pointers,
 * so any stack that passes through it (every syscall wrapper, qsort
 * callbacks) loses frames with fp.
 */
static int parse_unwind(const char *arg, bool *dwarf)
{
	if (!strcmp(arg, "dwarf") || !strcmp(arg, "auto"))
		*dwarf = true;
	else if (!strcmp(arg, "fp"))
		*dwarf = false;
	else {
		pr_err("invalid --unwind '%s': want fp, dwarf or auto", arg);
		return -EINVAL;
	}
	return 0;
}

/*
 * A debuginfo root, made absolute now: libdwfl reads a relative directory
 * as relative to each binary, and ':' separates its search list.
 */
static int parse_debug_dir(const char *arg, struct debug_dir_list *out)
{
	char *dir = realpath(arg, NULL);
	struct stat st;
	int err = 0;

	if (!dir || stat(dir, &st))
		err = -errno;
	else if (!S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err) {
		pr_err("invalid --debug-dir '%s': %s", arg, strerror(-err));
	} else if (strchr(dir, ':')) {
		pr_err("invalid --debug-dir '%s': a directory name with ':' cannot be searched",
		       arg);
		err = -EINVAL;
	} else if (array_grow(out, out->nr + 1)) {
		err = -ENOMEM;
	} else {
		out->items[out->nr++] = dir;
		dir = NULL;
	}
	free(dir);
	return err;
}

/* A number option within [@min, @max], or its one error line ending in @want. */
static int parse_number(const char *arg, uint64_t min, uint64_t max, const char *what,
			const char *want, uint64_t *out)
{
	if (!parse_u64(arg, min, max, out))
		return 0;
	pr_err("invalid %s '%s': want %s", what, arg, want);
	return -EINVAL;
}

#define WANT_US "microseconds, 0..3600000000"

int collectopts_parse(struct collector_opts *o, int c, const char *arg)
{
	uint64_t v;
	int err;

	switch (c) {
	case 'p':
		return collectopts_parse_pids(arg, &o->pids) ? -EINVAL : 0;
	case 'a':
		o->all = true;
		return 0;
	case COLLECTOPTS_COMM:
		return collectopts_add_comm(arg, &o->comms);
	case 'F':
		err = parse_number(arg, 1, 10000, "frequency", "1..10000 Hz", &v);
		o->freq_hz = err ? o->freq_hz : v;
		return err;
	case COLLECTOPTS_MODE:
		return collectopts_parse_mode(arg, &o->modes) ? -EINVAL : 0;
	case COLLECTOPTS_SYSCALLS:
		o->syscalls_arg = arg;
		return collectopts_parse_syscalls(arg, &o->syscalls) ? -EINVAL : 0;
	case COLLECTOPTS_MIN_DURATION:
		/* an hour: longer thresholds are a typo */
		err = parse_number(arg, 0, 3600000000ULL, "--min-duration", WANT_US, &v);
		o->min_duration_us = err ? o->min_duration_us : v;
		return err;
	case COLLECTOPTS_MIN_BLOCK:
		err = parse_number(arg, 0, 3600000000ULL, "--min-block", WANT_US, &v);
		o->min_block_us = err ? o->min_block_us : v;
		return err;
	case COLLECTOPTS_STALL_MIN:
		/*
		 * 0 is off. Each stall is an event on the lifecycle ring: below
		 * 1 ms a busy loop could crowd out the processes' events. The
		 * thread's stamps measure stretches up to 36 minutes.
		 */
		err = parse_number(arg, 0, 2000000000ULL, "--stall-min",
				   "microseconds, 0 (off) or 1000..2000000000", &v);
		if (!err && v && v < 1000)
			err = parse_number(arg, 1000, 2000000000ULL, "--stall-min",
					   "microseconds, 0 (off) or 1000..2000000000", &v);
		o->stall_min_us = err ? o->stall_min_us : v;
		return err;
	case COLLECTOPTS_AWAIT_HZ:
		err = parse_number(arg, 0, 1000, "--await-hz", "0 (off) or 1..1000", &v);
		o->await_hz = err ? o->await_hz : v;
		o->await_hz_given |= !err;
		return err;
	case COLLECTOPTS_UNWIND:
		return parse_unwind(arg, &o->unwind_dwarf);
	case COLLECTOPTS_STACK_SIZE:
		err = parse_number(arg, 1024, LP_MAX_STACK_COPY, "--stack-size",
				   "1024..32768 bytes", &v);
		o->stack_size = err ? o->stack_size : v;
		return err;
	case COLLECTOPTS_NO_PYTHON:
		o->no_python = true;
		return 0;
	case COLLECTOPTS_DEBUG_DIR:
		return parse_debug_dir(arg, &o->debug_dirs) ? -EINVAL : 0;
	case COLLECTOPTS_REQUESTS:
		o->requests = true;
		return 0;
	case COLLECTOPTS_MAX_REQUESTS:
		err = parse_number(arg, 1, 100000000, "--max-requests", "1..100000000", &v);
		o->max_requests = err ? o->max_requests : v;
		return err;
	case COLLECTOPTS_FILES:
		o->files = true;
		return 0;
	case COLLECTOPTS_NET:
		o->net = true;
		return 0;
	case 'q':
		o->quiet = true;
		log_level = LOG_LEVEL_ERROR;
		return 0;
	case 'v':
		if (log_level < LOG_LEVEL_TRACE)
			log_level++;
		return 0;
	default:
		return COLLECTOPTS_NOT_MINE;
	}
}

int collectopts_check(struct collector_opts *o, bool has_command, bool need_target)
{
	int ntargets = !!o->pids.nr + !!o->comms.nr + o->all + has_command;

	if (o->syscalls.nr && !o->modes.syscall && !o->modes.offcpu)
		pr_warn("--syscalls has no effect without --mode syscall");
	if (o->await_hz_given && o->await_hz && (!o->unwind_dwarf || o->no_python))
		pr_warn("--await-hz has no effect without Python frames (--unwind dwarf, "
			"no --no-python)");
	if (ntargets > 1 || (need_target && !ntargets)) {
		pr_err(ntargets ? "give only one kind of target (-p, --comm, -a or -- COMMAND)"
				: "no target: give -p PID, --comm NAME, -a or -- COMMAND");
		return -EINVAL;
	}
	if (!ntargets)
		o->all = true;	/* serve's default */
	return 0;
}

const char *collectopts_mode_name(const struct collector_modes *m)
{
	static const char *const names[8] = {
		"", "cpu", "syscall", "cpu,syscall", "offcpu", "cpu,offcpu", "syscall,offcpu",
		"cpu,syscall,offcpu",
	};

	return names[m->cpu | m->syscall << 1 | m->offcpu << 2];
}

const char *collectopts_track_name(const struct collector_opts *o)
{
	static const char *const names[8] = {
		"", "requests", "files", "requests,files", "net", "requests,net", "files,net",
		"requests,files,net",
	};

	return names[o->requests | o->files << 1 | o->net << 2];
}

bool collectopts_needs_syscalls(const struct collector_opts *o)
{
	return o->modes.syscall || o->modes.offcpu || o->requests || o->files || o->net;
}

/* The FILE of the first --config before "--", or NULL. */
static const char *config_path(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
		if (!strcmp(argv[i], "--config"))
			return i + 1 < argc ? argv[i + 1] : NULL;
	}
	return NULL;
}

/* Keys a --config file may not use, and those given once per list item. */
static const char *const config_refused[] = { "config", "help", NULL };
static const char *const config_repeated[] = { "comm", "debug-dir", "trigger", NULL };

int collectopts_expand_config(int argc, char **argv, const struct option *longopts,
			      struct config_args *cfg, char ***av, int *ac)
{
	const char *path = config_path(argc, argv);
	struct config_error e;
	char *buf = NULL;
	size_t len = 0;
	int err, fd, i;

	*av = NULL;
	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : read_fd(fd, CONFIG_MAX_BYTES, &buf, &len);
	if (err) {
		pr_err("cannot read --config %s: %s", path, strerror(-err));
		return -EINVAL;
	}
	err = config_parse(buf, len, longopts, config_refused, config_repeated, cfg, &e);
	free(buf);
	if (err == -EINVAL)
		pr_err("--config %s:%zu: %s", path, e.line, e.reason);
	if (!err)
		*av = calloc(argc + cfg->nr + 1, sizeof(**av));
	if (!err && !*av)
		err = -ENOMEM;
	if (err)
		return -EINVAL;
	(*av)[0] = argv[0];
	memcpy(*av + 1, cfg->items, cfg->nr * sizeof(**av));
	for (i = 1; i < argc; i++)
		(*av)[cfg->nr + i] = argv[i];
	*ac = argc + cfg->nr;
	return 0;
}

int collectopts_run_verb(int argc, char **argv, const struct option *longopts,
			 int (*parse)(int argc, char **argv, void *opts),
			 int (*run)(void *opts, const char *command_line), void *opts)
{
	struct config_args cfg = { 0 };
	char **cargv = NULL, *cmdline = NULL;
	int err, cargc = 0, status = EXIT_STATUS_USAGE;

	if (collectopts_expand_config(argc, argv, longopts, &cfg, &cargv, &cargc))
		goto out;
	err = parse(cargv ? cargc : argc, cargv ? cargv : argv, opts);
	if (err) {
		status = err == 1 ? EXIT_STATUS_OK : EXIT_STATUS_USAGE;
		goto out;
	}
	status = EXIT_STATUS_FAILURE;
	cmdline = join_args(argc, argv);
	if (!cmdline)
		goto out;
	err = run(opts, cmdline);
	if (err == -ENOENT || err == -EACCES)
		status = EXIT_STATUS_USAGE;
	else if (!err)
		status = EXIT_STATUS_OK;
out:
	free(cmdline);
	free(cargv);
	config_args_release(&cfg);
	return status;
}

int collectopts_parse_seconds(const char *arg, const char *what, double min, bool min_open,
			      double max, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (!errno && !*end && (min_open ? d > min : d >= min) && d <= max) {
		*out = d;
		return 0;
	}
	if (min_open)
		pr_err("invalid %s '%s': want seconds > %g", what, arg, min);
	else
		pr_err("invalid %s '%s': want %g..%g seconds", what, arg, min, max);
	return -EINVAL;
}

int collectopts_finish(struct collector_opts *o, int argc, char **argv, char ***command)
{
	*command = optind < argc ? argv + optind : NULL;
	if (collectopts_check(o, *command, true))
		return -EINVAL;
	if (*command && !command_exists((*command)[0])) {
		pr_err("cannot run '%s': command not found", (*command)[0]);
		return -ENOENT;
	}
	return 0;
}
