// SPDX-License-Identifier: GPL-2.0-only
/*
 * `latprof serve`: options, the always-on metrics session and the main loop
 * (see serve.h). The loop polls the metrics session's lifecycle events and
 * drains its maps once a second, so the kernel's maps never fill whether or
 * not anyone scrapes; a scrape drains once more, so /metrics is current to
 * the request. It ends on SIGINT/SIGTERM, or when a -- COMMAND exits, then
 * stops the HTTP server and detaches every BPF program.
 */
#include "src/serve.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/syscalls.h"
#include "src/target.h"
#include "src/util.h"
#include "src/verbs.h"

volatile sig_atomic_t serve_stop;

/* Distinct process names (and (name, syscall) pairs) with their own series. */
#define SERVE_MAX_SERIES 2000
/* The largest token file read. */
#define SERVE_MAX_SECRET (64 * 1024)

static const char serve_usage[] =
	"usage: latprof serve [--listen ADDR:PORT] [TARGET] [OPTIONS]\n"
	"\n"
	"Run as an agent: Prometheus metrics of syscall latency, CPU and off-CPU\n"
	"time on /metrics, and pprof profiles recorded on request on\n"
	"/debug/pprof/profile (as Go's endpoint: go tool pprof, Parca, Pyroscope).\n"
	"\n"
	"endpoints:\n"
	"  /metrics                          Prometheus text, per process name and syscall\n"
	"  /debug/pprof/profile?seconds=N    gzip pprof, cpu + latency (default 30, max 300)\n"
	"  /debug/pprof/latency?seconds=N    gzip pprof weighted by slow-syscall time\n"
	"  /flamegraph?seconds=N&weight=W    interactive SVG flame graph\n"
	"  /healthz                          \"ok\"\n"
	"  profile parameters: pid, comm, hz (1..1000), min_duration_us, weight\n"
	"\n"
	"targets (default: every process on the system):\n"
	"  -p, --pid PID[,PID...]   existing processes, their threads and later children\n"
	"  -- COMMAND [ARGS...]     run COMMAND and trace it; serve stops when it exits\n"
	"  -a, --all                every process on the system\n"
	"      --comm NAME          processes whose name is NAME (repeatable, up to 8)\n"
	"\n"
	"options:\n"
	"      --listen ADDR:PORT   address to listen on (default 127.0.0.1:6061;\n"
	"                           [ADDR]:PORT for IPv6)\n"
	"      --token-file FILE    every request needs 'Authorization: Bearer TOKEN',\n"
	"                           TOKEN being FILE's first line\n"
	"      --tls-cert FILE      serve HTTPS with this PEM certificate ...\n"
	"      --tls-key FILE       ... and this PEM private key\n"
	"      --max-sessions N     profile requests recorded at once, 1..64 (default 4);\n"
	"                           more get 429\n"
	"      --mode LIST          collectors, any of cpu,syscall,offcpu (default cpu,syscall)\n"
	"  -F, --freq HZ            sampling frequency, 1..1000 (default 99)\n"
	"      --syscalls LIST      trace only these syscalls, by name (default: all)\n"
	"      --min-duration USEC  in profiles, a syscall at least this slow is attributed\n"
	"                           to its user stack (default 1000)\n"
	"      --unwind MODE        user stacks in profiles: dwarf, fp or auto (default dwarf)\n"
	"      --no-python          profiles keep CPython's eval loop frames, not Python's\n"
	"  -q, --quiet              errors only\n"
	"  -v, --verbose            more messages (repeat for debug)\n"
	"  -h, --help               this help\n"
	"\n"
	"Stops cleanly on SIGINT/SIGTERM. Needs root or CAP_BPF + CAP_PERFMON.\n"
	"See docs/serve.md for scrape configurations.\n";

static void on_stop_signal(int sig)
{
	serve_stop = sig;
}

/* A secret file: read whole, at most 64 KiB, never empty. */
static int read_secret(const char *opt, const char *path, bool first_line, char **out)
{
	size_t len = 0;
	int err = read_file(path, out, &len);

	if (err) {
		pr_err("cannot read --%s %s: %s", opt, path, strerror(-err));
		return err;
	}
	if (first_line) {
		(*out)[strcspn(*out, "\r\n")] = 0;
		len = strlen(*out);
	}
	if (!len || len > SERVE_MAX_SECRET) {
		pr_err("invalid --%s %s: %s", opt, path, len ? "larger than 64 KiB" : "empty");
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

static int parse_option(struct serve_opts *o, int c, char **argv)
{
	uint64_t v;

	switch (c) {
	case 'p':
		return collectopts_parse_pids(optarg, &o->pids) ? -EINVAL : 0;
	case 'a':
		return 0;	/* the default */
	case 'c':
		return collectopts_add_comm(optarg, &o->comms);
	case 'F':
		if (parse_u64(optarg, 1, 1000, &v)) {
			pr_err("invalid frequency '%s': want 1..1000 Hz", optarg);
			return -EINVAL;
		}
		o->freq_hz = v;
		return 0;
	case 'M':
		if (collectopts_parse_mode(optarg, &o->modes))
			return -EINVAL;
		o->mode = optarg;
		return 0;
	case 'Y':
		return collectopts_parse_syscalls(optarg, &o->syscalls);
	case 'D':
		if (parse_u64(optarg, 0, 3600000000ULL, &v)) {
			pr_err("invalid --min-duration '%s': want microseconds, 0..3600000000",
			       optarg);
			return -EINVAL;
		}
		o->min_duration_us = v;
		return 0;
	case 'U':
		if (strcmp(optarg, "dwarf") && strcmp(optarg, "auto") && strcmp(optarg, "fp")) {
			pr_err("invalid --unwind '%s': want fp, dwarf or auto", optarg);
			return -EINVAL;
		}
		o->unwind_dwarf = strcmp(optarg, "fp") != 0;
		return 0;
	case 'n':
		o->no_python = true;
		return 0;
	case 'L':
		o->listen = optarg;
		return 0;
	case 'T':
		return read_secret("token-file", optarg, true, &o->token);
	case 'C':
		return read_secret("tls-cert", optarg, false, &o->tls_cert);
	case 'K':
		return read_secret("tls-key", optarg, false, &o->tls_key);
	case 'S':
		if (parse_u64(optarg, 1, 64, &v)) {
			pr_err("invalid --max-sessions '%s': want 1..64", optarg);
			return -EINVAL;
		}
		o->max_sessions = v;
		return 0;
	case 'q':
		log_level = LOG_LEVEL_ERROR;
		return 0;
	case 'v':
		if (log_level < LOG_LEVEL_TRACE)
			log_level++;
		return 0;
	case 'h':
		fputs(serve_usage, stdout);
		exit(EXIT_STATUS_OK);
	default:
		pr_option_error("serve", argv, c);
		return -EINVAL;
	}
}

static int parse_serve_args(int argc, char **argv, struct serve_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, 'c' },
		{ "freq", required_argument, NULL, 'F' },
		{ "mode", required_argument, NULL, 'M' },
		{ "syscalls", required_argument, NULL, 'Y' },
		{ "min-duration", required_argument, NULL, 'D' },
		{ "unwind", required_argument, NULL, 'U' },
		{ "no-python", no_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'L' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_storage ss;
	int c, ntargets;
	bool v6;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:aF:qvh", longopts, NULL)) != -1)
		if (parse_option(o, c, argv))
			return -EINVAL;
	if (optind < argc)
		o->command = argv + optind;
	ntargets = !!o->pids.nr + !!o->comms.nr + !!o->command;
	if (ntargets > 1) {
		pr_err("give only one kind of target (-p, --comm, -a or -- COMMAND)");
		return -EINVAL;
	}
	if (serve_parse_listen(o->listen, &ss, &v6)) {
		pr_err("invalid --listen '%s': want ADDR:PORT or [ADDR6]:PORT", o->listen);
		return -EINVAL;
	}
	if (!o->tls_cert != !o->tls_key) {
		pr_err("--tls-cert and --tls-key go together");
		return -EINVAL;
	}
	if (o->command && !command_exists(o->command[0])) {
		pr_err("cannot run '%s': command not found", o->command[0]);
		return -ENOENT;
	}
	return 0;
}

static void on_proc_event(void *arg, int type, pid_t pid, const char *comm)
{
	struct serve *s = arg;

	pthread_mutex_lock(&s->lock);
	metrics_proc_event(s->metrics, type, pid, comm);
	pthread_mutex_unlock(&s->lock);
}

static int open_metrics_session(struct serve *s)
{
	bool sys = s->o.modes.syscall || s->o.modes.offcpu;
	struct collect_opts co = {
		.mode_cpu = s->o.modes.cpu,
		.mode_syscall = s->o.modes.syscall,
		.mode_offcpu = s->o.modes.offcpu,
		/* counted in histograms only: no slow call needs its stack here */
		.min_duration_ns = 3600 * NSEC_PER_SEC,
		.min_block_ns = 1000000,
		.syscalls = s->o.syscalls.items,
		.nr_syscalls = s->o.syscalls.nr,
		.max_sys_stats = 16384,
		.freq_hz = s->o.freq_hz,
		.all = !s->o.pids.nr && !s->o.comms.nr && !s->o.command,
		.comms = s->o.comms.items,
		.nr_comms = s->o.comms.nr,
		.pids = s->o.pids.items,
		.nr_pids = s->o.pids.nr,
		.max_stacks = 4096,
		.max_samples = 16384,
		.max_procs = 32768,
		.unwind_dwarf = false,	/* frame-pointer stack ids, thrown away */
		.stack_size = 1024,
		.ustack_ring_bytes = sys ? 1024 * 1024 : 4096,
		.verbose = log_level >= LOG_LEVEL_DEBUG,
		.raw_tp = getenv("LATPROF_RAW_TP") && *getenv("LATPROF_RAW_TP"),
		.proc_fn = on_proc_event,
		.proc_arg = s,
		.sys_hash_only = true,
	};
	struct symbolizer_opts so = { .no_kernel = true, .no_lines = true };
	const char *why;
	int err;

	s->sym = symbolizer_new(&so);
	if (!s->sym) {
		pr_err("cannot create symbolizer: %s", strerror(errno));
		return -errno;
	}
	s->col = collect_open(&co, s->sym, &err, &why);
	if (!s->col) {
		pr_err("%s: %s", why, strerror(-err));
		return err;
	}
	return 0;
}

static void drain_sys(void *arg, const struct sys_stat *st)
{
	struct serve *s = arg;

	if (metrics_add_sys(s->metrics, st))
		s->drain_errors++;
}

static void drain_cpu(void *arg, uint32_t tgid, const char *comm, uint64_t samples)
{
	struct serve *s = arg;

	if (metrics_add_cpu(s->metrics, tgid, comm, samples))
		s->drain_errors++;
}

static void drain_offcpu(void *arg, uint32_t tgid, const char *comm, uint64_t blocked_ns,
			 uint64_t preempted_ns)
{
	struct serve *s = arg;

	if (metrics_add_offcpu(s->metrics, tgid, comm, blocked_ns, preempted_ns))
		s->drain_errors++;
}

int serve_drain_locked(struct serve *s)
{
	struct collect_drain_ops ops = { drain_sys, drain_cpu, drain_offcpu, s };
	int err = collect_drain(s->col, &ops);

	if (!err)
		err = metrics_end_window(s->metrics);
	return err;
}

/* memlock of every BPF map this process holds, from /proc/self/fdinfo. */
static uint64_t bpf_map_bytes(void)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;
	char path[64], *buf = NULL, *m;
	uint64_t total = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%.32s", e->d_name);
		if (read_file(path, &buf, NULL))
			continue;
		m = strstr(buf, "\nmemlock:");
		if (strstr(buf, "map_type:") && m)
			total += strtoull(m + 9, NULL, 10);
		free(buf);
		buf = NULL;
	}
	if (d)
		closedir(d);
	return total;
}

static uint64_t rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t agent_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

int serve_write_metrics(struct serve *s, FILE *out)
{
	const char *names[LP_STAT_NR];
	uint64_t lost[LP_STAT_NR];
	struct collect_stats st;
	struct metrics_agent a = {
		.lost_names = names, .lost = lost, .freq_hz = s->o.freq_hz,
		.mode = s->o.mode, .version = LATPROF_VERSION, .kernel = s->kernel,
		.has_cpu = s->o.modes.cpu, .has_offcpu = s->o.modes.offcpu,
	};
	int i, err;

	a.bpf_map_bytes = bpf_map_bytes();
	pthread_mutex_lock(&s->lock);
	err = serve_drain_locked(s);
	collect_get_stats(s->col, &st);
	for (i = 0; i < LP_STAT_NR; i++) {
		if (i == LP_STAT_SAMPLES || i == LP_STAT_EVENTS)
			continue;
		names[a.nr_lost] = collect_stat_name(i);
		lost[a.nr_lost++] = st.stat[i];
	}
	a.cpu_ns = agent_cpu_ns();
	a.rss_bytes = rss_bytes();
	a.uptime_ns = now_ns() - s->attached_ns;
	a.profiles_active = s->sessions;
	a.profiles_total = s->profiles_total;
	a.profiles_rejected = s->profiles_rejected;
	a.procs_tracked = metrics_nr_procs(s->metrics);
	if (!err)
		err = metrics_write(s->metrics, &a, out);
	pthread_mutex_unlock(&s->lock);
	return err;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Start -- COMMAND held before exec, make it a target; released after attach. */
static int start_command(struct serve *s, struct child *ch)
{
	int err = child_start(ch, s->o.command);

	if (err) {
		pr_err("cannot start '%s': %s", s->o.command[0], strerror(-err));
		return err;
	}
	s->command_pid = ch->pid;
	err = collect_add_command(s->col, ch->pid, s->o.command[0]);
	if (err)
		pr_err("cannot trace '%s': %s", s->o.command[0], strerror(-err));
	return err;
}

static bool command_exited(struct serve *s)
{
	int status;

	if (!s->command_pid || waitpid(s->command_pid, &status, WNOHANG) != s->command_pid)
		return false;
	if (WIFEXITED(status))
		pr_info("command exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		pr_info("command killed by signal %d", WTERMSIG(status));
	return true;
}

static int serve_loop(struct serve *s)
{
	uint64_t next_drain = now_ns() + NSEC_PER_SEC;
	int err = 0;

	while (!serve_stop && !err && !command_exited(s)) {
		err = collect_poll(s->col, 100);
		if (err || now_ns() < next_drain)
			continue;
		pthread_mutex_lock(&s->lock);
		err = serve_drain_locked(s);
		pthread_mutex_unlock(&s->lock);
		if (err)
			pr_err("cannot drain BPF maps: %s", strerror(-err));
		next_drain = now_ns() + NSEC_PER_SEC;
	}
	return err;
}

static int serve_run(struct serve *s)
{
	struct child ch = { .pid = -1, .release_fd = -1, .error_fd = -1 };
	struct serve_http *h = NULL;
	bool held = false;
	int err;

	err = open_metrics_session(s);
	if (!err && s->o.command) {
		err = start_command(s, &ch);
		held = ch.pid > 0;
	}
	if (!err) {
		err = collect_attach(s->col);
		if (err)
			pr_err("cannot attach BPF programs: %s", strerror(-err));
	}
	s->attached_ns = now_ns();
	if (!err) {
		h = serve_http_start(s);
		if (!h)
			err = -EINVAL;
	}
	if (!err && held) {
		err = child_release(&ch);
		held = false;
		if (err)
			pr_err("cannot run '%s': %s", s->o.command[0], strerror(-err));
	}
	if (!err)
		err = serve_loop(s);
	/* requests in flight see serve_stop and end within a poll interval */
	serve_stop = serve_stop ? serve_stop : SIGTERM;
	serve_http_stop(h);
	if (held)
		child_abort(&ch);
	collect_free(s->col);
	s->col = NULL;
	if (!err)
		pr_info("stopped");
	return err;
}

static void serve_opts_release(struct serve_opts *o)
{
	free(o->pids.items);
	free(o->comms.items);
	free(o->syscalls.items);
	free(o->token);
	free(o->tls_cert);
	free(o->tls_key);
}

int cmd_serve(int argc, char **argv)
{
	struct serve s = { .o = { .listen = "127.0.0.1:6061", .mode = "cpu,syscall",
				  .modes = { .cpu = true, .syscall = true }, .freq_hz = 99,
				  .min_duration_us = 1000, .unwind_dwarf = true,
				  .max_sessions = SERVE_DEFAULT_MAX_SESSIONS } };
	struct utsname u;
	int status = EXIT_STATUS_USAGE;

	if (parse_serve_args(argc, argv, &s.o))
		goto out;
	status = EXIT_STATUS_FAILURE;
	if (geteuid() != 0)
		pr_warn("serve needs root or CAP_BPF and CAP_PERFMON");
	if (!uname(&u))
		snprintf(s.kernel, sizeof(s.kernel), "%s", u.release);
	pthread_mutex_init(&s.lock, NULL);
	s.metrics = metrics_new(SERVE_MAX_SERIES);
	if (!s.metrics) {
		pr_err("cannot allocate metrics: %s", strerror(errno));
		goto out;
	}
	install_signals();
	raise_nofile_limit();
	if (!serve_run(&s))
		status = EXIT_STATUS_OK;
out:
	symbolizer_free(s.sym);
	metrics_free(s.metrics);
	serve_opts_release(&s.o);
	return status;
}
