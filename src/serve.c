// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent of `latprof serve` (serve.h): its session and the main loop,
 * which polls it and drains its counters into the metrics once a second,
 * so the kernel's maps never fill whether or not anyone scrapes; a scrape
 * drains once more, so /metrics is current to the request. With a history
 * the session is the recorder's (SESSION_KIND_RECORDER): the same loop cuts
 * its windows, and every hook runs once for both.
 */
#include "src/serve.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/history.h"
#include "src/metrics.h"
#include "src/serve_history.h"
#include "src/serve_http.h"
#include "src/session.h"
#include "src/lib/util.h"

/* Distinct process names (and (name, syscall) pairs) with their own series. */
#define SERVE_MAX_SERIES 2000
/* The loop's tick: a history window ends within it of its time. */
#define SERVE_TICK_MS 100
#define SERVE_DRAIN_NS NSEC_PER_SEC
#define SERVE_REOPEN_RETRY_S 60

static volatile sig_atomic_t serve_stop;

struct serve {
	const struct serve_opts *o;
	/*
	 * the metrics, and the session's drain (collect_drain, beside the
	 * loop's polls and cuts) and reopening
	 */
	pthread_mutex_t lock;
	struct metrics *metrics;
	struct session sess;		/* metrics only, or the recorder's */
	struct collector_opts co;	/* the session's: the agent's, less what no window keeps */
	struct serve_http *http;
	struct history *history;	/* NULL: --history 0 */
	struct triggers *triggers;	/* NULL: no --trigger */
	struct serve_history *recorder;
	uint64_t next_drain_ns;
	uint64_t started_ns;		/* the first attach */
	uint64_t lost_base[LP_STAT_NR];	/* the loss counters of the sessions before */
	uint64_t reopen_retry_ns;	/* a reopening failed: not before then */
	uint64_t drain_errors;
	char kernel[128];
};

static void on_stop_signal(int sig)
{
	serve_stop = sig;
}

static void on_proc_event(void *arg, int type, pid_t pid, const char *comm)
{
	struct serve *s = arg;

	pthread_mutex_lock(&s->lock);
	metrics_proc_event(s->metrics, type, pid, comm);
	pthread_mutex_unlock(&s->lock);
}

static void on_stall(void *arg, pid_t pid, const char *comm, uint64_t dur_ns)
{
	struct serve *s = arg;

	pthread_mutex_lock(&s->lock);
	if (metrics_add_stall(s->metrics, pid, comm, dur_ns))
		s->drain_errors++;
	pthread_mutex_unlock(&s->lock);
}

static void drain_sys(void *arg, const struct sys_stat *st)
{
	struct serve *s = arg;

	if (metrics_add_sys(s->metrics, st))
		s->drain_errors++;
	/* said there, once */
	if (s->recorder)
		serve_history_add_sys(s->recorder, st);
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

/* Take what the kernel counted since the last drain; s->lock held. 0 or -errno. */
static int serve_drain_locked(struct serve *s)
{
	struct collect_drain_ops ops = { drain_sys, drain_cpu, drain_offcpu, s };
	int err = collect_drain(s->sess.col, &ops);

	if (!err)
		err = metrics_end_window(s->metrics, now_ns());
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

static void serve_history_metrics(struct serve *s, const struct serve_http_stats *hs,
				  struct metrics_agent *a)
{
	struct history_stats st;

	if (!s->history)
		return;
	history_get_stats(s->history, &st);
	a->has_history = 1;
	a->history_bytes = st.bytes;
	a->history_windows = st.windows;
	a->history_spilled_bytes = st.spilled_bytes;
	a->history_dropped = st.dropped;
	a->history_requests = hs->history_total;
}

/* /metrics (serve_http_config.write_metrics): drains first. 0 or -errno. */
static int serve_write_metrics(void *arg, FILE *out)
{
	struct serve *s = arg;
	const struct collector_opts *co = &s->o->co;
	const char *names[LP_STAT_NR];
	uint64_t lost[LP_STAT_NR];
	const char *tnames[TRIGGER_MAX_RULES];
	uint64_t tfirings[TRIGGER_MAX_RULES], tsuppressed[TRIGGER_MAX_RULES];
	struct serve_http_stats hs;
	struct collect_stats st;
	struct metrics_agent a = {
		.lost_names = names, .lost = lost, .freq_hz = co->freq_hz,
		.mode = collectopts_mode_name(&co->modes), .version = LATPROF_VERSION,
		.kernel = s->kernel, .has_cpu = co->modes.cpu, .has_offcpu = co->modes.offcpu,
	};
	int i, err;

	a.bpf_map_bytes = bpf_map_bytes();
	/* before s->lock: the triggers take it under their own (serve_sys_total) */
	a.trigger_names = tnames;
	a.trigger_firings = tfirings;
	a.trigger_suppressed = tsuppressed;
	a.nr_triggers = s->triggers ? triggers_get_counts(s->triggers, tnames, tfirings,
							  tsuppressed, TRIGGER_MAX_RULES) : 0;
	pthread_mutex_lock(&s->lock);
	serve_http_get_stats(s->http, &hs);
	err = serve_drain_locked(s);
	collect_get_losses(s->sess.col, &st);
	for (i = 0; i < LP_STAT_NR; i++) {
		if (i == LP_STAT_SAMPLES || i == LP_STAT_EVENTS)
			continue;
		names[a.nr_lost] = collect_stat_name(i);
		lost[a.nr_lost++] = s->lost_base[i] + st.stat[i];
	}
	a.cpu_ns = agent_cpu_ns();
	a.rss_bytes = rss_bytes();
	a.uptime_ns = now_ns() - s->started_ns;
	a.profiles_active = hs.active;
	a.profiles_total = hs.total;
	a.profiles_rejected = hs.rejected;
	a.procs_tracked = metrics_nr_procs(s->metrics);
	serve_history_metrics(s, &hs, &a);
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

static bool stop_now(void *arg)
{
	(void)arg;
	return serve_stop;
}

/* The metrics take what the kernel counted. */
static int drain_tick(struct serve *s)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = serve_drain_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (err)
		pr_err("cannot drain BPF maps: %s", strerror(-err));
	return err;
}

static void command_ended(const struct session *ss)
{
	if (!ss->have_child || ss->child_status == -1)
		return;
	if (WIFEXITED(ss->child_status))
		pr_info("command exited with status %d", WEXITSTATUS(ss->child_status));
	else if (WIFSIGNALED(ss->child_status))
		pr_info("command killed by signal %d", WTERMSIG(ss->child_status));
}

/* A command already running when serving fails: it was ours to start. */
static void end_command(struct session *ss)
{
	if (!ss->have_child || ss->child_status != -1)
		return;
	kill(ss->child.pid, SIGTERM);
	waitpid(ss->child.pid, &ss->child_status, 0);
}

/* trigger_window.sys_total: the metrics' cumulative statistics of a syscall. */
static bool serve_sys_total(void *arg, const char *syscall, const char *comm,
			    struct sys_stat *out)
{
	struct serve *s = arg;
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = metrics_sys_sum(s->metrics, syscall, comm, out);
	pthread_mutex_unlock(&s->lock);
	return n > 0;
}

/* A history window kept (the metrics drained to its end): the triggers' rules. */
static void serve_on_window(void *arg, const struct profile *window)
{
	struct serve *s = arg;
	struct trigger_window w = {
		.start_ns = window->time_ns, .end_ns = window->time_ns + window->duration_ns,
		.p = window, .sys_total = serve_sys_total, .arg = s,
	};

	triggers_window(s->triggers, &w);
}

/* serve_history_config.drain: before each cut. */
static void serve_drain_now(void *arg)
{
	drain_tick(arg);
}

/* The flight recorder, on the session just opened. 0 or -errno (printed). */
static int serve_start_recorder(struct serve *s)
{
	struct serve_history_config hc = {
		.command_line = s->o->command_line, .window_ns = s->o->history_window_ns,
		.history = s->history, .on_window = s->triggers ? serve_on_window : NULL,
		.drain = serve_drain_now, .arg = s,
	};
	int err;

	if (!s->history)
		return 0;
	s->recorder = serve_history_new(&hc);
	if (s->recorder)
		return 0;
	err = -errno;
	pr_err("cannot start the history: %s", strerror(-err));
	return err;
}

/*
 * session_reopen's last look at the old session, s->lock held: what it
 * counted since the last drain, and its loss counters, which the fresh
 * session's start from zero.
 */
static void serve_before_release(void *arg, struct session *old)
{
	struct serve *s = arg;
	struct collect_stats st;
	int i;

	if (serve_drain_locked(s))
		s->drain_errors++;
	collect_get_losses(old->col, &st);
	for (i = 0; i < LP_STAT_NR; i++)
		s->lost_base[i] += st.stat[i];
}

/*
 * The session keeps too many processes gone: a fresh one takes over, the
 * old one drained last. One that cannot open leaves the old one running,
 * tried again a minute later (its memory grows meanwhile). Cannot fail.
 */
static void serve_reopen(struct serve *s)
{
	uint64_t t = now_ns();
	int err;

	if (s->reopen_retry_ns && t < s->reopen_retry_ns)
		return;
	pthread_mutex_lock(&s->lock);
	err = session_reopen(&s->sess, serve_before_release, s);
	pthread_mutex_unlock(&s->lock);
	if (err) {
		pr_warn("history: the session goes on; a fresh one is tried in %d s",
			SERVE_REOPEN_RETRY_S);
		s->reopen_retry_ns = t + SERVE_REOPEN_RETRY_S * NSEC_PER_SEC;
		return;
	}
	s->reopen_retry_ns = 0;
	pr_info("history: a fresh session, the last one kept too many processes gone");
	serve_history_restart(s->recorder);
}

/* Every SERVE_TICK_MS: a drain every second, a history window when it ends. */
static int serve_tick(void *arg)
{
	struct serve *s = arg;
	uint64_t t = now_ns();
	int err = 0;

	if (t >= s->next_drain_ns) {
		s->next_drain_ns = t + SERVE_DRAIN_NS;
		/*
		 * the lifecycle events first: after a window's cut, those of
		 * processes gone since would name their counts "unknown"
		 */
		err = collect_poll(s->sess.col, 0);
		if (!err)
			err = drain_tick(s);
	}
	if (!err && s->recorder && serve_history_tick(s->recorder, &s->sess) == -EAGAIN)
		serve_reopen(s);
	return err;
}

static int serve_agent(struct serve *s)
{
	struct session_config cfg = {
		.kind = s->history ? SESSION_KIND_RECORDER : SESSION_KIND_METRICS,
		.co = &s->co,
		.command = s->o->command,
		.proc_fn = on_proc_event,
		.stall_fn = on_stall,
		.proc_arg = s,
	};
	struct session_loop loop = {
		.stop = stop_now, .tick = serve_tick, .tick_ms = SERVE_TICK_MS, .arg = s,
	};
	struct serve_http_config hc = {
		.listen = s->o->listen, .token = s->o->token, .tls_cert = s->o->tls_cert,
		.tls_key = s->o->tls_key, .tls_client_ca = s->o->tls_client_ca,
		.max_sessions = s->o->max_sessions, .co = &s->o->co,
		.command_line = s->o->command_line, .write_metrics = serve_write_metrics,
		.arg = s, .stop = &serve_stop, .history = s->history, .triggers = s->triggers,
	};
	int err;

	err = session_open(&s->sess, &cfg);
	s->started_ns = s->sess.attached_ns;
	if (!err) {
		hc.command_pid = s->sess.have_child ? s->sess.child.pid : 0;
		err = serve_start_recorder(s);
	}
	if (!err) {
		s->http = serve_http_start(&hc);
		if (!s->http)
			err = -EINVAL;
	}
	if (!err) {
		/* -- COMMAND: serve ends with it (not with -p targets) */
		loop.until_targets_exit = s->sess.have_child;
		err = session_run(&s->sess, &loop);
		command_ended(&s->sess);
	}
	/* requests in flight see serve_stop and end within a poll interval */
	serve_stop = serve_stop ? serve_stop : SIGTERM;
	serve_http_stop(s->http);
	s->http = NULL;
	serve_history_free(s->recorder);
	s->recorder = NULL;
	if (err)
		end_command(&s->sess);
	if (!err)
		pr_info("stopped");
	return err;
}

static int serve_new_history(struct serve *s)
{
	const struct serve_opts *o = s->o;
	struct history_opts ho = {
		.keep_ns = o->history_keep_ns, .max_bytes = o->history_max_bytes,
		.spill_dir = o->history_dir, .spill_max_bytes = o->history_dir_max_bytes,
	};
	int err;

	if (!o->history_keep_ns)
		return 0;
	s->history = history_new(&ho);
	if (s->history && o->triggers.nr) {
		s->triggers = triggers_new(o->triggers.items, o->triggers.nr, o->trigger_dir,
					   o->trigger_max_files, s->history);
		if (!s->triggers) {
			err = -errno;
			pr_err("cannot use --trigger-dir %s: %s", o->trigger_dir, strerror(-err));
			return err;
		}
	}
	if (s->history)
		return 0;
	err = -errno;
	if (o->history_dir)
		pr_err("cannot use --history-dir %s: %s", o->history_dir, strerror(-err));
	else
		pr_err("cannot allocate the history: %s", strerror(-err));
	return err;
}

int serve_run(const struct serve_opts *o)
{
	struct serve s = { .o = o, .co = o->co };
	pthread_mutexattr_t attr;
	struct utsname u;
	int err;

	/* files and peers: neither the metrics nor a window keeps them */
	s.co.files = s.co.net = false;
	session_init(&s.sess);
	if (geteuid() != 0)
		pr_warn("serve needs root or CAP_BPF and CAP_PERFMON");
	if (!uname(&u))
		snprintf(s.kernel, sizeof(s.kernel), "%s", u.release);
	/*
	 * recursive: a reopening, under the lock, detaches the old session,
	 * whose last lifecycle events reach on_proc_event, which locks
	 */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s.lock, &attr);
	pthread_mutexattr_destroy(&attr);
	s.metrics = metrics_new(SERVE_MAX_SERIES, o->series_ttl_ns);
	if (!s.metrics) {
		err = -errno;
		pr_err("cannot allocate metrics: %s", strerror(-err));
		return err;
	}
	err = serve_new_history(&s);
	if (err)
		goto out;
	install_signals();
	raise_nofile_limit();
	err = serve_agent(&s);
out:
	triggers_free(s.triggers);
	history_free(s.history);
	session_release(&s.sess);
	metrics_free(s.metrics);
	pthread_mutex_destroy(&s.lock);
	return err;
}
