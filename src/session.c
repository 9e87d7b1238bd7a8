// SPDX-License-Identifier: GPL-2.0-only
/* One BPF session for every verb that records (session.h). */
#include "src/session.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/runmeta.h"
#include "src/lib/util.h"

/*
 * The sizing policy, in one place. A profile session keeps stacks: up to
 * 65,536 distinct ones (kernel, and user with frame pointers), allocated
 * as they come (src/collect/load.c caps it where the kernel preallocates).
 * The ring of copied stacks has 1 MiB a CPU (at least 2, at most 16): 64
 * stacks of 16 KiB, 1/16 s of a CPU sampled at 999 Hz; the reader is woken
 * when a quarter is full. Every page of a ring is resident from the start,
 * twice (mapped twice for records that wrap), so it is not larger than
 * that: 4 MiB here put 8 MiB in the whole run's peak. The per-CPU syscall
 * array of the first processes takes up to 32 MiB for a profile. A metrics
 * session keeps counters only: frame-pointer stack ids (thrown away), no
 * slow call needs its stack, no wait rule (its series do not tell waits
 * apart), and an array of 8 MiB at most, which collect_drain reads as it
 * runs and hands back block by block as processes go.
 */
#define SESSION_USTACK_RING_PER_CPU (1U << 20)
#define SESSION_USTACK_RING_MIN (2U << 20)
#define SESSION_USTACK_RING_MAX (16U << 20)
/*
 * With --min-duration below this, nearly every syscall sends its stack: a
 * command's first burst then outruns a reader still opening the new
 * process's binaries to unwind its first stacks (2 MiB lost 7 of 242
 * stacks of tests/e2e/test_syscall_fsync.sh once in a suite run), so the
 * ring has the largest size: asked for, every call is worth its memory.
 */
#define SESSION_EVERY_CALL_US 10

static uint32_t ustack_ring_bytes(const struct collector_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);	/* the CPUs sampled */
	uint32_t bytes = SESSION_USTACK_RING_MIN;

	if (o->modes.syscall && o->min_duration_us < SESSION_EVERY_CALL_US)
		return SESSION_USTACK_RING_MAX;

	while (ncpu > 0 && bytes < (uint64_t)ncpu * SESSION_USTACK_RING_PER_CPU &&
	       bytes < SESSION_USTACK_RING_MAX)
		bytes *= 2;
	return bytes;
}

static void session_collect_opts(const struct session_config *cfg, struct collect_opts *c)
{
	const struct collector_opts *o = cfg->co;
	bool sys = collectopts_needs_syscalls(o);
	bool profile = cfg->kind == SESSION_KIND_PROFILE;
	bool stacks = cfg->kind != SESSION_KIND_METRICS;	/* profile, recorder */

	*c = (struct collect_opts){
		.cli = *o,
		.max_sys_stats = 16384,
		.max_stacks = stacks ? 65536 : 16384,
		.max_samples = stacks ? 65536 : 16384,
		.max_procs = 32768,
		.ustack_ring_bytes = stacks && o->unwind_dwarf ? ustack_ring_bytes(o) :
				     sys ? 1024 * 1024 : 4096,
		.verbose = log_level >= LOG_LEVEL_DEBUG,
		.proc_fn = profile ? NULL : cfg->proc_fn,
		.stall_fn = profile ? NULL : cfg->stall_fn,
		.proc_arg = cfg->proc_arg,
		.proc_events_only = cfg->kind == SESSION_KIND_METRICS,
		/* a profile's array within 32 MiB; the agent's, always there, 8 */
		.sys_fast_bytes = (size_t)(profile ? 32 : 8) << 20,
		.sys_fast_drain = !profile,
		.task_counts = cfg->kind == SESSION_KIND_RECORDER,
		.no_waits = !profile,
	};
	if (stacks)
		return;
	/* the metrics session: no slow call needs its stack, no DWARF, no tracking */
	c->cli.min_duration_us = 3600ULL * 1000 * 1000;
	c->cli.unwind_dwarf = false;
	c->cli.stack_size = 1024;
	c->cli.requests = c->cli.files = c->cli.net = false;
}

void session_init(struct session *s)
{
	memset(s, 0, sizeof(*s));
	s->child = (struct child){ .pid = -1, .release_fd = -1, .error_fd = -1 };
	s->child_status = -1;
	s->start_ns = now_ns();
	s->start_wall_ns = wall_ns();
}

/* See SESSION_NICE. serve opens a session per pull: as latprof started, once. */
static void session_priority(struct session *s)
{
	static bool read;
	static int started;

	if (!read) {
		read = true;
		errno = 0;
		started = getpriority(PRIO_PROCESS, 0);
		if (errno)
			started = 0;
		else if (started == 0 && !setpriority(PRIO_PROCESS, 0, SESSION_NICE))
			pr_debug("running at nice %d", SESSION_NICE);
	}
	s->nice = started;
}

static int start_command(struct session *s)
{
	int err;

	s->child.nice = s->nice;
	err = child_start(&s->child, s->cfg.command);

	if (err) {
		pr_err("cannot start '%s': %s", s->cfg.command[0], strerror(-err));
		return err;
	}
	s->have_child = true;
	s->child_status = -1;
	err = collect_add_command(s->col, s->child.pid, s->cfg.command[0]);
	if (err)
		pr_err("cannot trace '%s': %s", s->cfg.command[0], strerror(-err));
	return err;
}

static int release_command(struct session *s)
{
	int err = child_release(&s->child);

	if (err) {
		pr_err("cannot run '%s': %s", s->cfg.command[0], strerror(-err));
		waitpid(s->child.pid, &s->child_status, 0);
		s->have_child = false;
	}
	return err;
}

int session_open(struct session *s, const struct session_config *cfg)
{
	struct symbolizer_opts so = {
		.debug_dirs = (const char *const *)cfg->co->debug_dirs.items,
		.nr_debug_dirs = cfg->co->debug_dirs.nr,
		/* the metrics session never symbolizes */
		.no_kernel = cfg->kind == SESSION_KIND_METRICS,
		.no_lines = cfg->kind == SESSION_KIND_METRICS,
	};
	struct collect_opts co;
	const char *why;
	int err;

	s->cfg = *cfg;
	session_priority(s);
	session_collect_opts(cfg, &co);
	s->sym = symbolizer_new(&so);
	if (!s->sym) {
		err = -errno;
		pr_err("cannot create symbolizer: %s", strerror(-err));
		return err;
	}
	s->col = collect_open(&co, s->sym, &err, &why);
	if (!s->col) {
		pr_err("%s: %s", why, strerror(-err));
		return err;
	}
	if (cfg->command) {
		err = start_command(s);
		if (err)
			return err;
	}
	err = collect_attach(s->col);
	if (err) {
		pr_err("cannot attach BPF programs: %s", strerror(-err));
		return err;
	}
	s->attached_ns = now_ns();
	/* the profile's time and duration describe the same window: from here */
	s->start_wall_ns = wall_ns();
	pr_debug("attached after %.1f ms", (s->attached_ns - s->start_ns) / 1e6);
	if (cfg->kind == SESSION_KIND_PROFILE) {
		err = intervals_start(&s->intervals, s->col, (uint64_t)(cfg->interval_s * 1e9),
				    s->attached_ns, cfg->co->modes.cpu, cfg->co->modes.syscall);
		if (err) {
			pr_err("cannot start the timeline: %s", strerror(-err));
			return err;
		}
		s->sampling = true;
	}
	return cfg->command ? release_command(s) : 0;
}

static bool command_alive(struct session *s)
{
	if (s->child_status != -1)
		return false;
	if (waitpid(s->child.pid, &s->child_status, WNOHANG) == s->child.pid)
		return false;
	s->child_status = -1;
	return true;
}

bool session_targets_alive(struct session *s)
{
	const struct pid_list *pids = &s->cfg.co->pids;
	size_t i;

	if (s->have_child)
		return command_alive(s);
	if (!pids->nr)
		return true;	/* -a / --comm: until -d or a signal */
	for (i = 0; i < pids->nr; i++)
		if (!kill(pids->items[i], 0) || errno != ESRCH)
			return true;
	return false;
}

/* Milliseconds until the next thing due: a timeline boundary, the tick, the deadline. */
static int wait_ms(struct session *s, const struct session_loop *l, uint64_t t,
		   uint64_t next_tick)
{
	int ms = s->sampling ? intervals_wait_ms(&s->intervals, t, 100) : 100;

	if (l->tick && next_tick > t && (next_tick - t) / 1000000 < (uint64_t)ms)
		ms = (next_tick - t + 999999) / 1000000;
	if (l->deadline_ns && l->deadline_ns > t && (l->deadline_ns - t) / 1000000 < (uint64_t)ms)
		ms = (l->deadline_ns - t + 999999) / 1000000;
	return ms;
}

int session_run(struct session *s, const struct session_loop *l)
{
	uint64_t next_tick = 0, t;
	int err = 0;

	while (!err && !(l->stop && l->stop(l->arg))) {
		if (l->until_targets_exit && !session_targets_alive(s)) {
			s->targets_ended = true;
			break;
		}
		t = now_ns();
		if (l->deadline_ns && t >= l->deadline_ns)
			break;
		if (l->tick && t >= next_tick) {
			err = l->tick(l->arg);
			next_tick = t + l->tick_ms * 1000000ULL;
			if (err)
				break;
		}
		if (s->sampling) {
			err = intervals_tick(&s->intervals, t, false);
			if (err) {
				pr_err("cannot sample the timeline: %s", strerror(-err));
				break;
			}
		}
		err = collect_poll(s->col, wait_ms(s, l, t, next_tick));
	}
	return err;
}

/*
 * Recording stopped while the command still runs (-d, or a signal sent to
 * latprof alone): end it with SIGTERM as perf does, 50 ms after the stop
 * (after Ctrl-C the terminal signalled the command too, which may be
 * leaving by itself). Called before the programs are detached, so what the
 * command ran until then is recorded: detaching takes tens of ms, a busy
 * machine's more, and a command left running through it did work no sample
 * saw (test_command_stop counted 20% of a short run's CPU missing).
 */
static void signal_command(struct session *s)
{
	uint64_t end, t;

	if (!s->have_child || s->child_status != -1)
		return;
	/* the rings are read meanwhile (the command's last events and stacks), for 50 ms in all */
	end = now_ns() + 50 * 1000000ULL;
	for (;;) {
		if (waitpid(s->child.pid, &s->child_status, WNOHANG) == s->child.pid)
			return;
		t = now_ns();
		if (t >= end)
			break;
		collect_poll(s->col, (end - t) / 1000000 < 10 ? (int)((end - t) / 1000000) + 1 : 10);
	}
	kill(s->child.pid, SIGTERM);
}

/* After signal_command() and the detach: reap the command within two seconds. */
static void reap_command(struct session *s)
{
	int i;

	if (!s->have_child || s->child_status != -1)
		return;
	for (i = 0; i < 200; i++) {
		if (waitpid(s->child.pid, &s->child_status, WNOHANG) == s->child.pid)
			return;
		usleep(10000);
	}
	s->child_status = -1;
	pr_warn("command %d still running after SIGTERM", s->child.pid);
}

static int store_run_meta(struct session *s, struct profile *p, const char *command_line)
{
	const struct collector_opts *o = s->cfg.co;
	struct utsname u;
	struct run_meta m = {
		.version = LATPROF_VERSION,
		.command_line = command_line,
		.kernel = uname(&u) ? NULL : u.release,
		.freq_hz = o->freq_hz,
		.unwind = o->unwind_dwarf ? "dwarf" : "fp",
		.mode = collectopts_mode_name(&o->modes),
		.syscall_hooks = !collectopts_needs_syscalls(o) ? NULL :
				 collect_sys_typed(s->col) ? "tp_btf" : "raw_tp",
		.kernel_btf = collect_btf_cached(s->col) ? "cached" : "vmlinux",
		.has_min_duration = o->modes.syscall,
		.min_duration_us = o->min_duration_us,
		.has_min_block = o->modes.offcpu,
		.min_block_us = o->min_block_us,
		.syscalls = o->syscalls_arg,
		.track = collectopts_track_name(o),
		.wait_rule = collectopts_needs_syscalls(o) && s->cfg.kind == SESSION_KIND_PROFILE ?
			     "state" : NULL,
		.startup_ns = s->attached_ns - s->start_ns,
		.has_exit_status = s->have_child && s->child_status != -1 &&
				   WIFEXITED(s->child_status),
		.exit_status = WEXITSTATUS(s->child_status),
	};

	p->time_ns = s->start_wall_ns;
	p->duration_ns = s->end_ns - s->attached_ns;
	return run_meta_store(&m, p);
}

/*
 * The timeline and the process tree; the command's own wait status stands
 * in for a lost exit event.
 */
static int store_processes(struct session *s, struct profile *p)
{
	struct proc_info *pi = s->have_child ? proc_tree_find(collect_procs(s->col),
							      s->child.pid) : NULL;

	if (pi && !pi->has_status && s->child_status != -1) {
		pi->status = s->child_status;
		pi->has_status = true;
	}
	return intervals_store(&s->intervals, p);
}

/* The timeline, the collectors and the symbolizer; idempotent. */
static void free_recorders(struct session *s)
{
	if (s->sampling)
		intervals_release(&s->intervals);
	s->sampling = false;
	collect_free(s->col);
	s->col = NULL;
	symbolizer_free(s->sym);
	s->sym = NULL;
}

void session_stop(struct session *s)
{
	if (s->stopped || !s->col)
		return;
	s->stopped = true;
	/* no deadline to keep when the targets ended: what they left is read */
	collect_stop_read_all(s->col, s->targets_ended);
	signal_command(s);
	s->end_ns = now_ns();
	collect_detach(s->col);
	reap_command(s);
}

int session_finish(struct session *s, const char *command_line, struct profile **out)
{
	struct profile *p = profile_new();
	struct rusage ru;
	int err = p ? 0 : -ENOMEM;

	*out = NULL;
	session_stop(s);
	/* after detach: syscalls in flight at the stop count in the last interval */
	if (!err && s->sampling)
		err = intervals_tick(&s->intervals, s->end_ns, true);
	if (!err)
		err = collect_build_profile(s->col, p);
	if (!err)
		err = store_run_meta(s, p, command_line);
	if (!err && s->sampling)
		err = store_processes(s, p);
	if (err) {
		pr_err("cannot build profile: %s", strerror(-err));
		profile_free(p);
		return err;
	}
	/*
	 * The profile holds its own strings: what recorded and symbolized it
	 * (the kernel's symbols, decompressed DWARF, every process's maps) goes
	 * before it is written, so the two peaks do not add up.
	 */
	free_recorders(s);
	malloc_trim(0);
	if (!getrusage(RUSAGE_SELF, &ru))
		pr_debug("peak RSS %ld KiB", ru.ru_maxrss);
	*out = p;
	return 0;
}

int session_cut(struct session *s, const char *command_line, uint64_t since_wall_ns,
		struct profile **out)
{
	struct profile *p = profile_new();
	int err = p ? 0 : -ENOMEM;

	*out = NULL;
	s->end_ns = now_ns();
	if (!err)
		err = collect_cut_profile(s->col, p);
	if (!err)
		err = store_run_meta(s, p, command_line);
	if (err) {
		pr_err("cannot build the profile of a window: %s", strerror(-err));
		profile_free(p);
		return err;
	}
	p->time_ns = since_wall_ns;
	p->duration_ns = wall_ns() - since_wall_ns;
	*out = p;
	return 0;
}

/* The targets of @s now, those gone since its events were read left out. */
static int live_targets(struct session *s, struct pid_list *out)
{
	struct pid_list all = { 0 };
	size_t i;
	int err = collect_targets(s->col, &all);

	for (i = 0; !err && i < all.nr; i++) {
		if (kill(all.items[i], 0) && errno == ESRCH)
			continue;
		err = array_grow(out, out->nr + 1);
		if (!err)
			out->items[out->nr++] = all.items[i];
	}
	free(all.items);
	return err;
}

int session_reopen(struct session *s, void (*before_release)(void *arg, struct session *old),
		   void *arg)
{
	struct session_config cfg = s->cfg;
	struct collector_opts *co = malloc(sizeof(*co));
	struct session fresh;
	int err = co ? 0 : -ENOMEM;

	session_init(&fresh);
	fresh.reopen_co = co;
	if (co) {
		*co = *cfg.co;
		cfg.co = co;
	}
	/* -a and --comm find theirs again; a command's and -p's are those alive */
	if (!err && (s->have_child || co->pids.nr)) {
		err = live_targets(s, &fresh.reopen_pids);
		co->pids = fresh.reopen_pids;
		cfg.command = NULL;
		if (!err && !co->pids.nr)
			pr_warn("no target left to trace");
	}
	if (err)
		pr_err("cannot list the targets: %s", strerror(-err));
	if (!err)
		err = session_open(&fresh, &cfg);	/* printed */
	if (err) {
		session_release(&fresh);
		return err;
	}
	if (before_release)
		before_release(arg, s);
	fresh.child = s->child;
	fresh.have_child = s->have_child;
	fresh.child_status = s->child_status;
	s->have_child = false;	/* not ended with the old session */
	session_release(s);
	*s = fresh;
	return 0;
}

void session_release(struct session *s)
{
	if (s->have_child && s->child_status == -1 && s->child.release_fd >= 0)
		child_abort(&s->child);
	free_recorders(s);
	free(s->reopen_pids.items);
	s->reopen_pids = (struct pid_list){ 0 };
	free(s->reopen_co);
	s->reopen_co = NULL;
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

void session_catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int session_stop_signal(void)
{
	return stop_signal;
}
