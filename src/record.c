// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof record`: parse targets and options, start the BPF session, run
 * until the command exits, the targets vanish, -d elapses or a signal comes,
 * then symbolize and write the profile (temporary name + rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/collect.h"
#include "src/collectopts.h"
#include "src/config.h"
#include "src/record_output.h"
#include "src/pprof.h"
#include "src/sampler.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/target.h"
#include "src/util.h"
#include "src/verbs.h"

#define DEFAULT_OUTPUT "latprof.pb.gz"

struct record_opts {
	struct pid_list pids;
	struct comm_list comms;
	bool all;
	const char *mode;		/* as given, for the metadata */
	uint64_t min_duration_us;
	uint64_t min_block_us;
	struct syscall_list syscalls;
	const char *syscalls_arg;
	unsigned int freq_hz;
	double duration_s;
	struct record_output out;	/* -o, its format and --weight */
	struct collector_modes modes;
	double interval_s;		/* --interval: timeline and memory */
	bool quiet;
	bool unwind_dwarf;
	bool no_python;		/* --no-python */
	unsigned int stack_size;
	bool requests, files, net;	/* --requests, --files, --net */
	uint32_t max_requests;
	struct { char **items; size_t nr, alloc; } debug_dirs;	/* owned, absolute */
	char **command;		/* after "--" */
};

struct record_run {
	struct record_opts *o;
	struct collect *col;
	struct symbolizer *sym;
	struct child child;
	struct sampler sampler;
	bool sampling;
	bool have_child;
	int child_status;	/* wait status, -1 while running */
	uint64_t start_ns, attached_ns, end_ns;
	uint64_t start_wall_ns;
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

static const char record_usage[] =
	"usage: latprof record [TARGET] [OPTIONS] [-o FILE]\n"
	"\n"
	"Sample on-CPU stacks (user + kernel), time every syscall and charge the\n"
	"slow ones to the user stack that made them, measure time off CPU, with\n"
	"BPF; write a symbolized pprof profile.\n"
	"\n"
	"targets (one of):\n"
	"  -p, --pid PID[,PID...]   existing processes, their threads and later children\n"
	"  -- COMMAND [ARGS...]     run COMMAND, trace it and its descendants until it exits\n"
	"  -a, --all                every process on the system\n"
	"      --comm NAME          processes whose name is NAME (repeatable, up to 8)\n"
	"\n"
	"options:\n"
	"      --mode LIST          collectors, any of cpu,syscall,offcpu (default cpu,syscall)\n"
	"  -F, --freq HZ            sampling frequency, 1..10000 (default 99)\n"
	"      --syscalls LIST      trace only these syscalls, by name (default: all)\n"
	"      --min-duration USEC  a syscall at least this slow is attributed to its\n"
	"                           user stack (default 1000; 0: every syscall)\n"
	"      --min-block USEC     off-CPU intervals at least this long are recorded\n"
	"                           with their stacks (default 1000)\n"
	"      --requests           follow requests on accepted connections: latency and\n"
	"                           where their time went (CPU, syscalls by category)\n"
	"      --max-requests N     requests kept in the profile (default 100000)\n"
	"      --files              bytes and time per opened file path\n"
	"      --net                bytes and time per network peer (connect/accept)\n"
	"  -d, --duration SEC       stop after SEC seconds (a started COMMAND gets SIGTERM)\n"
	"      --interval SEC       timeline and memory (RSS, PSS) sampling interval,\n"
	"                           0.05..3600 (default 1)\n"
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
	"                           lists); options on the command line override it\n"
	"  -o, --output FILE        output (default latprof.pb.gz); the extension picks the\n"
	"                           format: .pb.gz (the full profile), .folded,\n"
	"                           .speedscope.json, .json, .prom (as 'latprof export')\n"
	"      --weight W           what stacks are weighted by in those formats (default\n"
	"                           cpu; latency without --mode cpu; offcpu with offcpu only)\n"
	"  -q, --quiet              no live status line, errors only\n"
	"  -v, --verbose            more messages (repeat for debug)\n"
	"  -h, --help               this help\n"
	"\n"
	"Separate debuginfo is also fetched from debuginfod when DEBUGINFOD_URLS is set.\n"
	"Stops cleanly on SIGINT/SIGTERM. Needs root or CAP_BPF + CAP_PERFMON.\n";

static int parse_duration(const char *arg, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (errno || *end || !(d > 0) || d > 31536000) {
		pr_err("invalid duration '%s': want seconds > 0", arg);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

static int parse_interval(const char *arg, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (errno || *end || !(d >= 0.05) || d > 3600) {
		pr_err("invalid --interval '%s': want 0.05..3600 seconds", arg);
		return -EINVAL;
	}
	*out = d;
	return 0;
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
static int parse_debug_dir(struct record_opts *o, const char *arg)
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
	} else if (array_grow(&o->debug_dirs, o->debug_dirs.nr + 1)) {
		err = -ENOMEM;
	} else {
		o->debug_dirs.items[o->debug_dirs.nr++] = dir;
		dir = NULL;
	}
	free(dir);
	return err;
}

/* Refuse an output we could not write before recording anything. */
static int check_output(const char *path)
{
	int err = output_check(path);

	if (err)
		pr_err("cannot write %s: %s", path, strerror(-err));
	return err;
}

static const struct option record_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "comm", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "unwind", required_argument, NULL, 'U' },
	{ "stack-size", required_argument, NULL, 'S' },
	{ "no-python", no_argument, NULL, 'n' },
	{ "mode", required_argument, NULL, 'M' },
	{ "syscalls", required_argument, NULL, 'Y' },
	{ "min-duration", required_argument, NULL, 'D' },
	{ "min-block", required_argument, NULL, 'B' },
	{ "debug-dir", required_argument, NULL, 'G' },
	{ "weight", required_argument, NULL, 'W' },
	{ "interval", required_argument, NULL, 'I' },
	{ "requests", no_argument, NULL, 'R' },
	{ "max-requests", required_argument, NULL, 'X' },
	{ "files", no_argument, NULL, 'L' },
	{ "net", no_argument, NULL, 'N' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "config", required_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Keys a --config file may not use, and those given once per list item. */
static const char *const config_refused[] = { "config", "help", NULL };
static const char *const config_repeated[] = { "comm", "debug-dir", NULL };

static int parse_record_args(int argc, char **argv, struct record_opts *o)
{
	uint64_t v;
	int c, ntargets;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:aF:d:o:qvh", record_longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (collectopts_parse_pids(optarg, &o->pids))
				return -EINVAL;
			break;
		case 'a':
			o->all = true;
			break;
		case 'c':
			if (collectopts_add_comm(optarg, &o->comms))
				return -EINVAL;
			break;
		case 'F':
			if (parse_u64(optarg, 1, 10000, &v)) {
				pr_err("invalid frequency '%s': want 1..10000 Hz", optarg);
				return -EINVAL;
			}
			o->freq_hz = v;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration_s))
				return -EINVAL;
			break;
		case 'o':
			o->out.path = optarg;
			break;
		case 'U':
			if (parse_unwind(optarg, &o->unwind_dwarf))
				return -EINVAL;
			break;
		case 'n':
			o->no_python = true;
			break;
		case 'S':
			if (parse_u64(optarg, 1024, LP_MAX_STACK_COPY, &v)) {
				pr_err("invalid --stack-size '%s': want 1024..%d bytes", optarg,
				       LP_MAX_STACK_COPY);
				return -EINVAL;
			}
			o->stack_size = v;
			break;
		case 'M':
			if (collectopts_parse_mode(optarg, &o->modes))
				return -EINVAL;
			o->mode = optarg;
			break;
		case 'Y':
			if (collectopts_parse_syscalls(optarg, &o->syscalls))
				return -EINVAL;
			o->syscalls_arg = optarg;
			break;
		case 'D':
		case 'B':
			/* an hour: longer thresholds are a typo */
			if (parse_u64(optarg, 0, 3600000000ULL, &v)) {
				pr_err("invalid --%s '%s': want microseconds, 0..3600000000",
				       c == 'D' ? "min-duration" : "min-block", optarg);
				return -EINVAL;
			}
			*(c == 'D' ? &o->min_duration_us : &o->min_block_us) = v;
			break;
		case 'G':
			if (parse_debug_dir(o, optarg))
				return -EINVAL;
			break;
		case 'W':
			o->out.weight = optarg;
			break;
		case 'I':
			if (parse_interval(optarg, &o->interval_s))
				return -EINVAL;
			break;
		case 'R':
			o->requests = true;
			break;
		case 'X':
			if (parse_u64(optarg, 1, 100000000, &v)) {
				pr_err("invalid --max-requests '%s': want 1..100000000", optarg);
				return -EINVAL;
			}
			o->max_requests = v;
			break;
		case 'L':
			o->files = true;
			break;
		case 'N':
			o->net = true;
			break;
		case 'C':
			break;	/* read before the command line (expand_config) */
		case 'q':
			o->quiet = true;
			log_level = LOG_LEVEL_ERROR;
			break;
		case 'v':
			if (log_level < LOG_LEVEL_TRACE)
				log_level++;
			break;
		case 'h':
			fputs(record_usage, stdout);
			exit(EXIT_STATUS_OK);
		default:
			pr_option_error("record", argv, c);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->syscalls.nr && !o->modes.syscall && !o->modes.offcpu)
		pr_warn("--syscalls has no effect without --mode syscall");
	ntargets = !!o->pids.nr + !!o->comms.nr + o->all + !!o->command;
	if (ntargets != 1) {
		pr_err(ntargets ? "give only one kind of target (-p, --comm, -a or -- COMMAND)"
				: "no target: give -p PID, --comm NAME, -a or -- COMMAND");
		return -EINVAL;
	}
	if (o->command && !command_exists(o->command[0])) {
		pr_err("cannot run '%s': command not found", o->command[0]);
		return -ENOENT;
	}
	o->out.cpu = o->modes.cpu;
	o->out.syscall = o->modes.syscall;
	o->out.offcpu = o->modes.offcpu;
	if (record_output_check(&o->out))
		return -EINVAL;
	return check_output(o->out.path);
}

/* Name the privileges that are missing, or return 0 when we have them. */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	bool bpf, perfmon, admin;

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
#define HAS_CAP(c) (data[(c) / 32].effective & (1U << ((c) % 32)))
	admin = HAS_CAP(CAP_SYS_ADMIN);
	bpf = admin || HAS_CAP(CAP_BPF);
	perfmon = admin || HAS_CAP(CAP_PERFMON);
#undef HAS_CAP
	if (bpf && perfmon)
		return 0;
	pr_err("record needs root or CAP_BPF and CAP_PERFMON; missing: %s%s%s",
	       bpf ? "" : "CAP_BPF", !bpf && !perfmon ? ", " : "", perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void status_line(struct record_run *r, bool final)
{
	struct collect_stats st;
	uint64_t lost = 0;
	int i;

	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	collect_get_stats(r->col, &st);
	for (i = 0; i < LP_STAT_NR; i++)
		if (i != LP_STAT_SAMPLES && i != LP_STAT_EVENTS)
			lost += st.stat[i];
	fprintf(stderr, "\r\033[Klatprof: %.1fs  samples %llu  events %llu  lost %llu"
		"  (Ctrl-C to stop)",
		(now_ns() - r->attached_ns) / 1e9, (unsigned long long)st.stat[LP_STAT_SAMPLES],
		(unsigned long long)st.stat[LP_STAT_EVENTS], (unsigned long long)lost);
}

static bool targets_alive(struct record_run *r)
{
	size_t i;

	if (r->have_child) {
		if (r->child_status != -1)
			return false;
		if (waitpid(r->child.pid, &r->child_status, WNOHANG) == r->child.pid)
			return false;
		r->child_status = -1;
		return true;
	}
	if (!r->o->pids.nr)
		return true;	/* -a / --comm: until -d or a signal */
	for (i = 0; i < r->o->pids.nr; i++)
		if (!kill(r->o->pids.items[i], 0) || errno != ESRCH)
			return true;
	return false;
}

static int record_loop(struct record_run *r)
{
	uint64_t deadline = r->o->duration_s > 0 ?
		r->attached_ns + (uint64_t)(r->o->duration_s * 1e9) : 0;
	uint64_t next_status = 0, t;
	int err = 0;

	while (!stop_requested && !err && targets_alive(r)) {
		t = now_ns();
		if (deadline && t >= deadline)
			break;
		if (t >= next_status) {
			status_line(r, false);
			next_status = t + NSEC_PER_SEC / 4;
		}
		err = sampler_tick(&r->sampler, t, false);
		if (err)
			pr_err("cannot sample the timeline: %s", strerror(-err));
		else
			err = collect_poll(r->col, sampler_wait_ms(&r->sampler, t, 100));
	}
	status_line(r, true);
	return err;
}

static int start_command(struct record_run *r)
{
	int err = child_start(&r->child, r->o->command);

	if (err) {
		pr_err("cannot start '%s': %s", r->o->command[0], strerror(-err));
		return err;
	}
	r->have_child = true;
	r->child_status = -1;
	return 0;
}

static int release_command(struct record_run *r)
{
	int err = child_release(&r->child);

	if (err) {
		pr_err("cannot run '%s': %s", r->o->command[0], strerror(-err));
		waitpid(r->child.pid, &r->child_status, 0);
		r->have_child = false;
	}
	return err;
}

static int open_session(struct record_run *r)
{
	bool sys = r->o->modes.syscall || r->o->modes.offcpu || r->o->requests || r->o->files ||
		   r->o->net;
	struct collect_opts co = {
		.mode_cpu = r->o->modes.cpu,
		.mode_syscall = r->o->modes.syscall,
		.mode_offcpu = r->o->modes.offcpu,
		.min_duration_ns = r->o->min_duration_us * 1000,
		.min_block_ns = r->o->min_block_us * 1000,
		.syscalls = r->o->syscalls.items,
		.nr_syscalls = r->o->syscalls.nr,
		.max_sys_stats = 16384,
		.freq_hz = r->o->freq_hz,
		.all = r->o->all,
		.comms = r->o->comms.items,
		.nr_comms = r->o->comms.nr,
		.pids = r->o->pids.items,
		.nr_pids = r->o->pids.nr,
		/* with dwarf the map holds kernel stacks only, far fewer */
		.max_stacks = r->o->unwind_dwarf ? 4096 : 16384,
		.max_samples = 65536,
		.max_procs = 32768,
		.unwind_dwarf = r->o->unwind_dwarf,
		.no_python = r->o->no_python,
		.debug_dirs = (const char *const *)r->o->debug_dirs.items,
		.nr_debug_dirs = r->o->debug_dirs.nr,
		.stack_size = r->o->stack_size,
		/* 4 MiB holds ~250 copied stacks, 1/8 s at 999 Hz on 2 CPUs; the
		 * pages we read stay resident, so it is not larger than that */
		.ustack_ring_bytes = r->o->unwind_dwarf ? 4 * 1024 * 1024 :
				     sys ? 1024 * 1024 : 4096,
		.verbose = log_level >= LOG_LEVEL_DEBUG,
		/* the fallback for kernels without tp_btf, forced to test it */
		.raw_tp = getenv("LATPROF_RAW_TP") && *getenv("LATPROF_RAW_TP"),
		.requests = r->o->requests,
		.files = r->o->files,
		.net = r->o->net,
		.max_requests = r->o->max_requests,
	};
	struct symbolizer_opts so = {
		.debug_dirs = (const char *const *)r->o->debug_dirs.items,
		.nr_debug_dirs = r->o->debug_dirs.nr,
	};
	const char *why;
	int err;

	r->sym = symbolizer_new(&so);
	if (!r->sym) {
		pr_err("cannot create symbolizer: %s", strerror(errno));
		return -errno;
	}
	r->col = collect_open(&co, r->sym, &err, &why);
	if (!r->col) {
		pr_err("%s: %s", why, strerror(-err));
		return err;
	}
	if (r->o->command) {
		err = start_command(r);
		if (!err)
			err = collect_add_command(r->col, r->child.pid, r->o->command[0]);
		if (err)
			return err;
	}
	err = collect_attach(r->col);
	if (err) {
		pr_err("cannot attach BPF programs: %s", strerror(-err));
		return err;
	}
	r->attached_ns = now_ns();
	/* the profile's time and duration describe the same window: from here */
	r->start_wall_ns = wall_ns();
	pr_debug("attached after %.1f ms", (r->attached_ns - r->start_ns) / 1e6);
	err = sampler_start(&r->sampler, r->col, (uint64_t)(r->o->interval_s * 1e9),
			    r->attached_ns, r->o->modes.cpu, r->o->modes.syscall);
	if (err) {
		pr_err("cannot start the timeline: %s", strerror(-err));
		return err;
	}
	r->sampling = true;
	return r->o->command ? release_command(r) : 0;
}

/* "requests", "files,net", ... : what --requests/--files/--net turned on. */
static const char *track_names(const struct record_opts *o)
{
	static const char *const names[8] = {
		"", "requests", "files", "requests,files", "net", "requests,net", "files,net",
		"requests,files,net",
	};

	return names[o->requests | o->files << 1 | o->net << 2];
}

static int set_run_meta(struct record_run *r, struct profile *p, int argc, char **argv)
{
	struct utsname u;
	char *cmdline = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&cmdline, &len);
	int err = 0;

	for (i = 0; f && i < (size_t)argc; i++)
		fprintf(f, "%s%s", i ? " " : "", argv[i]);
	if (!f || fclose(f))
		return -ENOMEM;
	p->time_ns = r->start_wall_ns;
	p->duration_ns = r->end_ns - r->attached_ns;
	err = profile_set_meta(p, "version", LATPROF_VERSION);
	if (!err)
		err = profile_set_meta(p, "command_line", cmdline);
	if (!err && !uname(&u))
		err = profile_set_meta(p, "kernel", u.release);
	if (!err)
		err = profile_set_meta_u64(p, "freq_hz", r->o->freq_hz);
	if (!err)
		err = profile_set_meta(p, "unwind", r->o->unwind_dwarf ? "dwarf" : "fp");
	if (!err)
		err = profile_set_meta(p, "mode", r->o->mode);
	if (!err && (r->o->modes.syscall || r->o->modes.offcpu || r->o->requests || r->o->files ||
		     r->o->net))
		err = profile_set_meta(p, "syscall_hooks", collect_raw_tp(r->col) ? "raw_tp" : "tp_btf");
	if (!err && r->o->modes.syscall)
		err = profile_set_meta_u64(p, "min_duration_us", r->o->min_duration_us);
	if (!err && r->o->modes.offcpu)
		err = profile_set_meta_u64(p, "min_block_us", r->o->min_block_us);
	if (!err && r->o->syscalls_arg)
		err = profile_set_meta(p, "syscalls", r->o->syscalls_arg);
	if (!err && (r->o->requests || r->o->files || r->o->net))
		err = profile_set_meta(p, "track", track_names(r->o));
	if (!err)
		err = profile_set_meta_u64(p, "startup_ns", r->attached_ns - r->start_ns);
	if (!err && r->have_child && r->child_status != -1 && WIFEXITED(r->child_status))
		err = profile_set_meta_u64(p, "exit_status", WEXITSTATUS(r->child_status));
	free(cmdline);
	return err;
}

/*
 * The timeline and the process tree; the command's own wait status stands
 * in for a lost exit event.
 */
static int store_processes(struct record_run *r, struct profile *p)
{
	struct proc_info *pi = r->have_child ? proc_tree_find(collect_procs(r->col),
							      r->child.pid) : NULL;

	if (pi && !pi->has_status && r->child_status != -1) {
		pi->status = r->child_status;
		pi->has_status = true;
	}
	return sampler_store(&r->sampler, p);
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

static void print_summary(struct record_run *r, const struct profile *p)
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
		r->o->out.path, (unsigned long long)samples, sys, p->duration_ns / 1e9,
		(unsigned long long)procs, procs == 1 ? "" : "es",
		(unsigned long long)lost, lost ? " (see 'latprof report')" : "");
	if (!r->have_child || r->child_status == -1)
		return;
	if (WIFEXITED(r->child_status))
		pr_info("command exited with status %d", WEXITSTATUS(r->child_status));
	else if (WIFSIGNALED(r->child_status))
		pr_info("command killed by signal %d (%s)", WTERMSIG(r->child_status),
			strsignal(WTERMSIG(r->child_status)));
}

/*
 * Recording stopped while the command still runs (-d, or a signal sent to
 * latprof alone): end it with SIGTERM as perf does, and give it two seconds.
 * After Ctrl-C the terminal signalled the command too; this only reaps it.
 */
static void stop_command(struct record_run *r)
{
	int i;

	if (!r->have_child || r->child_status != -1)
		return;
	for (i = 0; i < 200; i++) {
		if (waitpid(r->child.pid, &r->child_status, WNOHANG) == r->child.pid)
			return;
		if (i == 5)
			kill(r->child.pid, SIGTERM);
		usleep(10000);
	}
	r->child_status = -1;
	pr_warn("command %d still running after SIGTERM", r->child.pid);
}

static int finish(struct record_run *r, int argc, char **argv)
{
	struct profile *p = profile_new();
	struct rusage ru;
	int err;

	r->end_ns = now_ns();
	collect_detach(r->col);
	stop_command(r);
	if (!p)
		return -ENOMEM;
	/* after detach: syscalls in flight at the stop count in the last interval */
	err = sampler_tick(&r->sampler, r->end_ns, true);
	if (!err)
		err = collect_build_profile(r->col, p);
	if (!err)
		err = set_run_meta(r, p, argc, argv);
	if (!err)
		err = store_processes(r, p);
	if (err) {
		pr_err("cannot build profile: %s", strerror(-err));
	} else {
		err = record_output_write(&r->o->out, p);
		if (err)
			pr_err("cannot write %s: %s", r->o->out.path, strerror(-err));
		else
			print_summary(r, p);
	}
	if (!getrusage(RUSAGE_SELF, &ru))
		pr_debug("peak RSS %ld KiB", ru.ru_maxrss);
	profile_free(p);
	return err;
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

/*
 * With --config FILE: a new argv in @av, the options the file stands for
 * placed before the command line's own, which therefore override them
 * (lists such as --pid accumulate). Strings are owned by @cfg, the array
 * by the caller. 0, or -EINVAL after printing where the file is wrong.
 */
static int expand_config(int argc, char **argv, struct config_args *cfg, char ***av, int *ac)
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
	err = config_parse(buf, len, record_longopts, config_refused, config_repeated, cfg, &e);
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

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .freq_hz = 99, .out.path = DEFAULT_OUTPUT, .unwind_dwarf = true,
				 .stack_size = 16384, .mode = "cpu,syscall",
				 .modes = { .cpu = true, .syscall = true }, .min_duration_us = 1000,
				 .min_block_us = 1000, .interval_s = 1, .max_requests = 100000 };
	struct record_run r = { .o = &o, .child = { .pid = -1, .release_fd = -1,
						    .error_fd = -1 } };
	struct config_args cfg = { 0 };
	char **cargv = NULL;
	int err, cargc = 0, status = EXIT_STATUS_USAGE;

	r.start_ns = now_ns();
	r.start_wall_ns = wall_ns();
	if (expand_config(argc, argv, &cfg, &cargv, &cargc))
		goto out;
	if (parse_record_args(cargv ? cargc : argc, cargv ? cargv : argv, &o))
		goto out;
	status = EXIT_STATUS_FAILURE;
	if (check_privileges())
		goto out;
	install_signals();
	raise_nofile_limit();
	err = open_session(&r);
	if (err) {
		/* a command that cannot be exec'ed is bad input, like a bad pid */
		if (err == -ENOENT || err == -EACCES)
			status = EXIT_STATUS_USAGE;
		if (r.have_child && r.child_status == -1)
			child_abort(&r.child);
		goto out;
	}
	err = record_loop(&r);
	if (!err)
		err = finish(&r, argc, argv);
	if (!err)
		status = EXIT_STATUS_OK;
out:
	if (r.sampling)
		sampler_release(&r.sampler);
	collect_free(r.col);
	symbolizer_free(r.sym);
	free(o.pids.items);
	free(o.comms.items);
	free(cargv);
	config_args_release(&cfg);
	free(o.syscalls.items);
	while (o.debug_dirs.nr)
		free(o.debug_dirs.items[--o.debug_dirs.nr]);
	free(o.debug_dirs.items);
	return status;
}
