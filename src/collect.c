// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF session for `record`: skeleton lifecycle, perf events on every online
 * CPU, lifecycle events from the ring buffer (snapshots for the symbolizer),
 * and the final drain of the in-kernel aggregation into a struct profile.
 */
#include "src/collect.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latprof.skel.h"
#include "src/hashmap.h"
#include "src/iotrack.h"
#include "src/procimg.h"
#include "src/proctree.h"
#include "src/requests.h"
#include "src/stackagg.h"
#include "src/syscalls.h"
#include "src/sysstats.h"
#include "src/util.h"

_Static_assert(sizeof(struct lp_sample_key) == 32, "lp_sample_key layout");
_Static_assert(sizeof(struct lp_timed_key) == 40, "lp_timed_key layout");
_Static_assert(sizeof(struct lp_timed_value) == 40, "lp_timed_value layout");
_Static_assert(sizeof(struct lp_sys_key) == 8, "lp_sys_key layout");
_Static_assert(sizeof(struct lp_sys_stat) % 8 == 0, "lp_sys_stat layout");
_Static_assert(offsetof(struct lp_ustack_sample, stack) == LP_USTACK_HDR_SIZE, "ustack header");
_Static_assert(LP_HIST_SLOTS == SYS_HIST_SLOTS, "histogram slots");
_Static_assert(sizeof(struct lp_event) == 40, "lp_event layout");
_Static_assert(sizeof(struct lp_proc) == 8, "lp_proc layout");
_Static_assert(sizeof(struct lp_proc_event) == 56 + LP_ARGS_LEN, "lp_proc_event layout");
_Static_assert(PROC_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(PROC_IMAGE_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(sizeof(struct lp_task) == 176, "lp_task layout");
_Static_assert(sizeof(struct lp_times) == sizeof(struct request_times), "lp_times layout");
_Static_assert((int)LP_REQ_CAT_NR == (int)REQUEST_CAT_NR, "request categories");
_Static_assert(LP_REQ_SHARED == REQUEST_SHARED, "request flags");
_Static_assert(sizeof(struct lp_conn) == 304, "lp_conn layout");
_Static_assert(sizeof(struct lp_req_event) == 320, "lp_req_event layout");
_Static_assert(sizeof(struct lp_open_event) == 32 + LP_PATH_LEN, "lp_open_event layout");
_Static_assert(sizeof(struct lp_peer_event) == 48, "lp_peer_event layout");
_Static_assert(sizeof(struct lp_fd_event) == 64, "lp_fd_event layout");

/* Names of enum lp_stat, as they appear in metadata ("lost.NAME"). */
static const char *const stat_names[LP_STAT_NR] = {
	[LP_STAT_SAMPLES] = "samples",
	[LP_STAT_USTACK_EEXIST] = "ustack_collision",
	[LP_STAT_USTACK_EFAULT] = "ustack_fault",
	[LP_STAT_USTACK_OTHER] = "ustack_error",
	[LP_STAT_KSTACK_EEXIST] = "kstack_collision",
	[LP_STAT_KSTACK_EFAULT] = "kstack_fault",
	[LP_STAT_KSTACK_OTHER] = "kstack_error",
	[LP_STAT_SAMPLES_DROPPED] = "samples_dropped_map_full",
	[LP_STAT_PROCS_DROPPED] = "procs_dropped_map_full",
	[LP_STAT_EVENTS] = "events",
	[LP_STAT_EVENTS_LOST] = "events_lost",
	[LP_STAT_USTACKS_LOST] = "ustacks_lost",
	[LP_STAT_SYS_STATS_DROPPED] = "syscall_stats_dropped_map_full",
	[LP_STAT_TIMED_DROPPED] = "timed_dropped_map_full",
	[LP_STAT_TASK_STATE_FAILED] = "syscalls_untimed_no_task_storage",
	[LP_STAT_TRACK_LOST] = "track_events_lost",
	[LP_STAT_CONNS_DROPPED] = "descriptors_untracked_map_full",
};

/* Names of enum sym_unwind_status in metadata ("proc.PID.NAME"). */
static const char *const unwind_names[SYM_UNWIND_NR] = {
	[SYM_UNWIND_COMPLETE] = "stacks_complete",
	[SYM_UNWIND_TRUNCATED_COPY] = "truncated_copy",
	[SYM_UNWIND_TRUNCATED_DEPTH] = "truncated_depth",
	[SYM_UNWIND_NO_UNWIND_INFO] = "truncated_no_unwind_info",
	[SYM_UNWIND_BAD_READ] = "truncated_bad_read",
};

struct collect {
	struct latprof_bpf *skel;
	struct symbolizer *sym;
	struct ring_buffer *rb;
	struct { struct bpf_link **items; size_t nr, alloc; } links;
	struct { int *items; size_t nr, alloc; } perf_fds;
	struct proc_images images;
	struct proc_tree procs;		/* fork/exec/exit of the targets, absolute times */
	struct stackagg *ustacks;	/* DWARF-unwound samples */
	bool unwind_dwarf;
	bool mode_cpu, mode_syscall, mode_offcpu;
	bool sys_hooks;			/* sys_enter/sys_exit are loaded */
	bool raw_tp;			/* ... as raw_tp (tp_btf failed) */
	bool in_flight_done;
	uint32_t fast_slots;		/* blocks of the per-CPU syscall stats array */
	pid_t command_pid;		/* generation 0 of it is latprof's fork */
	collect_proc_fn proc_fn;	/* set: events go there, no snapshots */
	void *proc_arg;
	uint64_t in_flight_reported;
	unsigned int freq_hz;
	bool verbose;
	bool requests, files, net;
	uint32_t max_requests;
	struct { struct request_raw *items; size_t nr, alloc; } reqs;
	uint64_t reqs_dropped;		/* past max_requests */
	uint64_t reqs_unanswered;	/* open at stop with no response yet */
	struct iotrack io;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_TRACE)
		return 0;
	if (level == LIBBPF_INFO && log_level < LOG_LEVEL_DEBUG)
		return 0;
	if (log_level < LOG_LEVEL_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* @pi's command line from /proc (a process found by name, a -p target). */
static void proc_read_cmdline(struct proc_info *pi)
{
	char path[64], *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pi->pid);
	if (!read_file(path, &buf, &len))
		proc_info_set_cmdline(pi, buf, len);
	free(buf);
}

/* The parent of @pid from /proc/PID/status, 0 if unknown. */
static uint32_t proc_read_ppid(uint32_t pid)
{
	char path[64], *buf = NULL, *q;
	uint32_t ppid = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (!read_file(path, &buf, NULL) && (q = strstr(buf, "\nPPid:")))
		ppid = strtoul(q + 7, NULL, 10);
	free(buf);
	return ppid;
}

/* A new target: at fork it runs its parent's program, so it has its command line. */
static void tree_new(struct collect *c, const struct lp_event *e)
{
	struct proc_info *parent = e->ppid ? proc_tree_find(&c->procs, e->ppid) : NULL;
	char *cmdline = parent && parent->cmdline ? strdup(parent->cmdline) : NULL;
	struct proc_info *pi;

	pi = proc_tree_start(&c->procs, e->pid, e->ppid ? e->ppid : proc_read_ppid(e->pid),
			     e->time_ns, e->comm);
	if (pi && !pi->cmdline && cmdline)
		proc_info_set_cmdline(pi, cmdline, strlen(cmdline));
	else if (pi && !pi->cmdline)
		proc_read_cmdline(pi);
	free(cmdline);
}

static void tree_exec(struct collect *c, const struct lp_proc_event *e)
{
	struct proc_info *pi = proc_tree_find(&c->procs, e->e.pid);

	if (!pi || pi->ended)
		pi = proc_tree_start(&c->procs, e->e.pid, proc_read_ppid(e->e.pid), e->e.time_ns,
				     NULL);
	if (!pi)
		return;
	pi->execs++;
	memcpy(pi->comm, e->e.comm, LP_COMM_LEN);
	pi->comm[LP_COMM_LEN] = '\0';
	if (e->args_len)
		proc_info_set_cmdline(pi, e->args, e->args_len < LP_ARGS_LEN ? e->args_len :
						     LP_ARGS_LEN);
	else
		proc_read_cmdline(pi);
}

static void tree_exit(struct collect *c, const struct lp_proc_event *e)
{
	struct proc_info *pi = proc_tree_find(&c->procs, e->e.pid);
	long page = sysconf(_SC_PAGESIZE);

	if (!pi || pi->ended)
		return;
	pi->ended = true;
	pi->end_ns = e->e.time_ns;
	pi->status = e->exit_code;
	pi->has_status = true;
	if (e->rss_pages) {
		pi->exit_rss_kb = e->rss_pages * (page > 0 ? page / 1024 : 4);
		proc_tree_add_memory(&c->procs, pi, e->e.time_ns, pi->exit_rss_kb, -1);
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct lp_event *e = data;
	const struct lp_proc_event *pe = data;
	struct proc_image *img;

	if (size < sizeof(*e))
		return 0;
	if (c->proc_fn) {
		c->proc_fn(c->proc_arg, e->type, e->pid, e->comm);
		return 0;
	}
	switch (e->type) {
	case LP_EVENT_NEW:
	case LP_EVENT_EXEC:
		pr_debug("%s pid %u gen %u (%.16s)", e->type == LP_EVENT_NEW ? "new" : "exec",
			 e->pid, e->gen, e->comm);
		proc_images_snapshot(&c->images, e->pid, e->gen);
		img = proc_images_find(&c->images, e->pid, e->gen);
		/* at fork the event runs in the parent, whose name the child has */
		if (img && !img->comm[0])
			memcpy(img->comm, e->comm, LP_COMM_LEN);
		if (e->type == LP_EVENT_NEW)
			tree_new(c, e);
		else if (size >= sizeof(*pe))
			tree_exec(c, pe);
		break;
	case LP_EVENT_EXIT:
		pr_debug("exit pid %u", e->pid);
		proc_images_stop_refresh(&c->images, e->pid);
		if (size >= sizeof(*pe))
			tree_exit(c, pe);
		break;
	}
	return 0;
}

/* Unwind @in with image @img, re-reading the maps once if a pc had no module. */
static void unwind_sample(struct collect *c, struct proc_image *img,
			  const struct sym_unwind_input *in, uint64_t *pcs, size_t *nr,
			  enum sym_unwind_status *st)
{
	struct sym_process *before = img->sym;
	uint64_t now;

	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
	if (*st != SYM_UNWIND_NO_UNWIND_INFO)
		return;
	/* a library dlopen'ed since the last snapshot: look again, at most 10/s */
	now = now_ns();
	if (now - img->forced_refresh_ns < NSEC_PER_SEC / 10)
		return;
	img->forced_refresh_ns = now;
	if (proc_images_snapshot(&c->images, img->pid, img->gen) || img->sym == before)
		return;
	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
}

static int on_ustack(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct lp_ustack_sample *e = data;
	struct sym_unwind_input in = { .stack = e->stack };
	struct stackagg_key key = { 0 };
	struct stackagg_values v = {
		.value = e->value,
		.blocked_ns = e->blocked_ns,
		.preempted_ns = e->preempted_ns,
	};
	uint64_t pcs[LP_MAX_STACK_DEPTH];
	enum sym_unwind_status st = SYM_UNWIND_NO_UNWIND_INFO;
	struct proc_image *img;
	size_t nr = 0;

	if (size < LP_USTACK_HDR_SIZE || e->stack_len > size - LP_USTACK_HDR_SIZE)
		return 0;
	in.stack_len = e->stack_len;
	memcpy(in.regs, e->regs, sizeof(in.regs));
	img = proc_images_find(&c->images, e->tgid, e->gen);
	if (!img || !img->sym) {
		proc_images_snapshot(&c->images, e->tgid, e->gen);
		img = proc_images_find(&c->images, e->tgid, e->gen);
	}
	if (img && img->sym)
		unwind_sample(c, img, &in, pcs, &nr, &st);
	if (img) {
		img->unwind[st]++;
		if (!img->comm[0])
			memcpy(img->comm, e->comm, LP_COMM_LEN);
	}
	key.tgid = e->tgid;
	key.gen = e->gen;
	key.kstack_id = e->kstack_id;
	key.kind = e->kind;
	key.nr = e->nr;
	memcpy(key.comm, e->comm, sizeof(key.comm));
	if (e->flags & LP_USTACK_IN_FLIGHT)
		c->in_flight_reported++;
	return stackagg_add(c->ustacks, &key, pcs, nr, &v) ? -ENOMEM : 0;
}

static void times_from(struct request_times *to, const struct lp_times *from)
{
	memcpy(to, from, sizeof(*to));
}

/* A request the kernel finished (or that was open at stop), kept if room. */
static int track_request(struct collect *c, uint32_t tgid, int32_t fd, const struct lp_conn *conn)
{
	struct request_raw *r;

	if (!conn->start_ns)
		return 0;
	if (!conn->end_ns) {
		c->reqs_unanswered++;
		return 0;
	}
	if (c->reqs.nr >= c->max_requests) {
		c->reqs_dropped++;
		return 0;
	}
	if (array_grow(&c->reqs, c->reqs.nr + 1))
		return -ENOMEM;
	r = &c->reqs.items[c->reqs.nr++];
	*r = (struct request_raw){
		.pid = tgid, .fd = fd, .read_tid = conn->read_tid, .write_tid = conn->write_tid,
		.flags = conn->flags, .start_ns = conn->start_ns, .end_ns = conn->end_ns,
		.bytes_in = conn->bytes_in, .bytes_out = conn->bytes_out,
	};
	times_from(&r->t_start, &conn->t_start);
	times_from(&r->t_end, &conn->t_end);
	times_from(&r->p_start, &conn->p_start);
	times_from(&r->p_end, &conn->p_end);
	return 0;
}

static int on_track(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct lp_req_event *req = data;
	const struct lp_open_event *op = data;
	const struct lp_peer_event *peer = data;
	const struct lp_fd_event *fe = data;
	char path[LP_PATH_LEN + 1];

	if (size < sizeof(uint32_t))
		return 0;
	switch (*(const uint32_t *)data) {
	case LP_TRACK_REQUEST:
		if (size >= sizeof(*req))
			return track_request(c, req->tgid, req->fd, &req->conn);
		break;
	case LP_TRACK_OPEN:
		if (size < sizeof(*op))
			break;
		memcpy(path, op->path, LP_PATH_LEN);
		path[LP_PATH_LEN] = 0;
		return iotrack_open(&c->io, op->tgid, op->fd, op->dirfd, op->id, path);
	case LP_TRACK_PEER:
		if (size >= sizeof(*peer))
			return iotrack_peer(&c->io, peer->tgid, peer->accepted, peer->id,
					    peer->family, peer->addr, peer->port);
		break;
	case LP_TRACK_FDSTAT:
		if (size >= sizeof(*fe))
			iotrack_io(&c->io, fe->st.id, fe->st.bytes_in, fe->st.bytes_out,
				   fe->st.io_ns, fe->st.ops);
		break;
	}
	return 0;
}

/* enum lp_req_cat of syscall @nr. */
static uint8_t req_cat(int nr)
{
	switch (syscall_category(nr)) {
	case SYSCALL_CATEGORY_NETWORK:
		return LP_REQ_CAT_NETWORK;
	case SYSCALL_CATEGORY_FILE:
		return LP_REQ_CAT_FILE;
	case SYSCALL_CATEGORY_SYNC:
		return LP_REQ_CAT_SYNC;
	case SYSCALL_CATEGORY_SLEEP:
		return LP_REQ_CAT_SLEEP;
	default:
		return LP_REQ_CAT_OTHER;
	}
}

/* Request, file and peer tracking: configuration and map sizes. */
static int configure_track(struct collect *c, const struct collect_opts *o)
{
	struct latprof_bpf *s = c->skel;
	bool fds = o->files || o->net;
	int nr, err;

	s->rodata->cfg_track = o->requests || fds;
	s->rodata->cfg_requests = o->requests;
	s->rodata->cfg_files = o->files;
	s->rodata->cfg_net = o->net;
	for (nr = 0; nr < LP_MAX_SYSCALL_NR; nr++)
		s->rodata->cfg_sys_cat[nr] = req_cat(nr);
	err = bpf_map__set_max_entries(s->maps.conns, o->requests ? 65536 : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.proc_times, o->requests ? o->max_procs : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.fdstats, fds ? 65536 : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.track, o->requests || fds ? 4 << 20 : 4096);
	return err;
}

/*
 * At stop, what the kernel still holds: connections (a request answered but
 * not yet followed by another read or a close is complete) and descriptors
 * still open. Runs after detach.
 */
static int track_flush(struct collect *c)
{
	struct lp_fd_key key, next;
	struct lp_conn conn;
	struct lp_fdstat st;
	int fd, err = 0;
	bool first = true;

	fd = bpf_map__fd(c->skel->maps.conns);
	while (!err && c->requests && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &conn))
			err = track_request(c, key.tgid, key.fd, &conn);
	}
	first = true;
	fd = bpf_map__fd(c->skel->maps.fdstats);
	while (!err && (c->files || c->net) &&
	       !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &st))
			iotrack_io(&c->io, st.id, st.bytes_in, st.bytes_out, st.io_ns, st.ops);
	}
	return err;
}

/* Which programs load: only those of the chosen collectors. */
static void select_programs(struct collect *c)
{
	struct latprof_bpf *s = c->skel;

	bpf_program__set_autoload(s->progs.on_cpu_sample, c->mode_cpu);
	bpf_program__set_autoload(s->progs.tp_sys_enter, c->sys_hooks && !c->raw_tp);
	bpf_program__set_autoload(s->progs.tp_sys_exit, c->sys_hooks && !c->raw_tp);
	bpf_program__set_autoload(s->progs.raw_sys_enter, c->sys_hooks && c->raw_tp);
	bpf_program__set_autoload(s->progs.raw_sys_exit, c->sys_hooks && c->raw_tp);
	bpf_program__set_autoload(s->progs.tp_sched_switch, c->mode_offcpu);
	bpf_program__set_autoload(s->progs.dump_in_flight, c->sys_hooks || c->mode_offcpu);
	/* run by hand once at stop */
	bpf_program__set_autoattach(s->progs.dump_in_flight, false);
}

/*
 * @n, or less when the hidden LATPROF_DEBUG_MAX_ENTRIES=N caps it: the
 * reliability tests shrink the sample, stack, syscall and process maps so that
 * they overflow, to check that drops are counted and reported, never fatal.
 */
static uint32_t debug_max_entries(uint32_t n)
{
	const char *v = getenv("LATPROF_DEBUG_MAX_ENTRIES");
	uint64_t cap;

	if (v && !parse_u64(v, 1, UINT32_MAX, &cap) && cap < n)
		return cap;
	return n;
}

static int configure(struct collect *c, const struct collect_opts *o)
{
	struct latprof_bpf *s = c->skel;
	int ncpu = libbpf_num_possible_cpus();
	size_t i;
	int err;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	select_programs(c);
	err = configure_track(c, o);
	if (err)
		return err;
	s->rodata->cfg_syscalls = o->mode_syscall;
	s->rodata->cfg_offcpu = o->mode_offcpu;
	s->rodata->cfg_syscall_min_ns = o->min_duration_ns;
	s->rodata->cfg_offcpu_min_ns = o->min_block_ns;
	s->rodata->cfg_sys_filter_on = o->nr_syscalls > 0;
	for (i = 0; i < o->nr_syscalls; i++)
		if (o->syscalls[i] >= 0 && o->syscalls[i] < LP_MAX_SYSCALL_NR)
			s->rodata->cfg_sys_filter[o->syscalls[i]] = 1;
	/* scratch records: sampler, tracepoints (per CPU each), iterator */
	s->rodata->cfg_nr_cpus = ncpu;
	/* per-CPU stats blocks for the first processes, within 32 MiB */
	c->fast_slots = (32u << 20) / ((size_t)ncpu * LP_MAX_SYSCALL_NR * sizeof(struct lp_sys_stat));
	if (c->fast_slots > LP_SYS_FAST_SLOTS)
		c->fast_slots = LP_SYS_FAST_SLOTS;
	if (!o->mode_syscall || o->sys_hash_only)
		c->fast_slots = 0;
	s->rodata->cfg_sys_fast_slots = c->fast_slots;
	s->rodata->cfg_all = o->all;
	/* with -a, unwinding our own samples would feed on itself */
	s->rodata->cfg_self_tgid = getpid();
	s->rodata->cfg_nr_comms = o->nr_comms;
	for (i = 0; i < o->nr_comms && i < LP_MAX_COMMS; i++)
		strncpy((char *)s->rodata->cfg_comms[i], o->comms[i], LP_COMM_LEN - 1);
	s->rodata->cfg_unwind_dwarf = o->unwind_dwarf;
	s->rodata->cfg_stack_size = o->stack_size;
	err = bpf_map__set_max_entries(s->maps.stacks, debug_max_entries(o->max_stacks));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustack_scratch, 2 * ncpu + 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustacks, o->ustack_ring_bytes);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cpu_samples,
					       debug_max_entries(o->max_samples));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.timed_samples,
					       debug_max_entries(o->max_samples));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_stats,
					       debug_max_entries(o->max_sys_stats));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_fast, c->fast_slots ?
					       c->fast_slots * LP_MAX_SYSCALL_NR : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.procs, debug_max_entries(o->max_procs));
	return err;
}

/*
 * Open, configure and load the skeleton. If the syscall hooks fail to load
 * as tp_btf, try once more with raw_tp (older kernels, odd BTF).
 */
static int load(struct collect *c, const struct collect_opts *o, const char **why)
{
	int err;

	for (;;) {
		*why = "cannot open BPF object";
		c->skel = latprof_bpf__open();
		if (!c->skel)
			return -errno;
		*why = "cannot configure BPF maps";
		err = configure(c, o);
		if (err)
			return err;
		*why = "cannot load BPF programs (see docs/troubleshooting.md)";
		err = latprof_bpf__load(c->skel);
		if (!err || !c->sys_hooks || c->raw_tp)
			return err;
		pr_debug("tp_btf sys_enter/sys_exit failed (%s): trying raw_tp", strerror(-err));
		latprof_bpf__destroy(c->skel);
		c->skel = NULL;
		c->raw_tp = true;
	}
}

struct collect *collect_open(const struct collect_opts *o, struct symbolizer *sym, int *err,
			     const char **why)
{
	struct collect *c = calloc(1, sizeof(*c));
	size_t i;

	*why = "cannot allocate";
	*err = -ENOMEM;
	if (!c)
		return NULL;
	c->sym = sym;
	c->images.sym = sym;
	c->freq_hz = o->freq_hz;
	c->verbose = o->verbose;
	c->unwind_dwarf = o->unwind_dwarf;
	c->mode_cpu = o->mode_cpu;
	c->mode_syscall = o->mode_syscall;
	c->mode_offcpu = o->mode_offcpu;
	c->requests = o->requests;
	c->files = o->files;
	c->net = o->net;
	c->max_requests = o->max_requests;
	/* off-CPU time inside a syscall waits for sys_exit to copy the stack */
	c->sys_hooks = o->mode_syscall || (o->mode_offcpu && o->unwind_dwarf) || o->requests ||
		       o->files || o->net;
	c->raw_tp = o->raw_tp;
	proc_tree_init(&c->procs, COLLECT_MAX_PROCS, COLLECT_MAX_MEM_SAMPLES);
	c->proc_fn = o->proc_fn;
	c->proc_arg = o->proc_arg;
	c->ustacks = stackagg_new();
	if (!c->ustacks || iotrack_init(&c->io, "/proc"))
		goto fail;
	libbpf_set_print(libbpf_print);
	*err = load(c, o, why);
	if (*err)
		goto fail;
	*why = "cannot create ring buffer";
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_event, c, NULL);
	if (!c->rb) {
		*err = -errno;
		goto fail;
	}
	/* in-flight syscalls send copied stacks even with --unwind fp */
	if (o->unwind_dwarf || c->sys_hooks || c->mode_offcpu) {
		*err = ring_buffer__add(c->rb, bpf_map__fd(c->skel->maps.ustacks), on_ustack, c);
		if (*err)
			goto fail;
	}
	if (o->requests || o->files || o->net) {
		*err = ring_buffer__add(c->rb, bpf_map__fd(c->skel->maps.track), on_track, c);
		if (*err)
			goto fail;
	}
	*why = "cannot add target";
	for (i = 0; i < o->nr_pids; i++) {
		*err = collect_add_pid(c, o->pids[i]);
		if (*err)
			goto fail;
	}
	*err = 0;
	*why = NULL;
	return c;
fail:
	collect_free(c);
	return NULL;
}

int collect_add_command(struct collect *c, pid_t pid)
{
	c->command_pid = pid;
	return collect_add_pid(c, pid);
}

/*
 * Hand a block of the per-CPU syscall stats to @pid, as fast_slot_alloc()
 * does in BPF; only before attach, when no program can race with us.
 */
static uint32_t fast_slot_alloc(struct collect *c, pid_t pid)
{
	int fd = bpf_map__fd(c->skel->maps.fast_slots);
	uint32_t key = 0, next, owner = pid;

	if (bpf_map_lookup_elem(fd, &key, &next) || next >= c->fast_slots)
		return 0;
	key = next + 1;
	if (bpf_map_update_elem(fd, &key, &owner, BPF_ANY))
		return 0;
	key = 0;
	next++;
	return bpf_map_update_elem(fd, &key, &next, BPF_ANY) ? 0 : next;
}

int collect_add_pid(struct collect *c, pid_t pid)
{
	struct lp_proc zero = { .fast_slot = fast_slot_alloc(c, pid) };
	struct proc_image *img;
	struct proc_info *pi;
	uint32_t key = pid;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.procs), &key, &zero, BPF_ANY))
		return -errno;
	proc_images_snapshot(&c->images, pid, 0);
	img = proc_images_find(&c->images, pid, 0);
	pi = proc_tree_start(&c->procs, pid, proc_read_ppid(pid), now_ns(),
			     img ? img->comm : NULL);
	/* the held command's name and arguments come with its exec */
	if (pi && pid != c->command_pid)
		proc_read_cmdline(pi);
	return 0;
}

/* CPUs listed in /sys/devices/system/cpu/online, e.g. "0-3,5". */
static int online_cpus(bool **online, int *nr)
{
	int n = libbpf_num_possible_cpus(), a, b, i, err;
	char *buf = NULL, *p;

	if (n <= 0)
		return n ? n : -EINVAL;
	*online = calloc(n, sizeof(**online));
	if (!*online)
		return -ENOMEM;
	*nr = n;
	err = read_file("/sys/devices/system/cpu/online", &buf, NULL);
	if (err)
		return err;
	for (p = buf; *p && *p != '\n';) {
		if (sscanf(p, "%d", &a) != 1)
			break;
		b = a;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '-' && sscanf(++p, "%d", &b) == 1)
			while (*p >= '0' && *p <= '9')
				p++;
		for (i = a; i <= b && i < n; i++)
			(*online)[i] = true;
		if (*p == ',')
			p++;
	}
	free(buf);
	return 0;
}

static int attach_cpu(struct collect *c, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = c->freq_hz,
		.freq = 1,
	};
	struct bpf_link *link;
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno == ENODEV ? 0 : -errno;	/* CPU went offline */
	if (array_grow(&c->perf_fds, c->perf_fds.nr + 1) ||
	    array_grow(&c->links, c->links.nr + 1)) {
		close(fd);
		return -ENOMEM;
	}
	c->perf_fds.items[c->perf_fds.nr++] = fd;
	link = bpf_program__attach_perf_event(c->skel->progs.on_cpu_sample, fd);
	if (!link)
		return -errno;
	c->links.items[c->links.nr++] = link;
	return 0;
}

int collect_attach(struct collect *c)
{
	bool *online = NULL;
	int nr = 0, cpu, err;

	/* lifecycle tracking first, so no fork between the two is missed */
	err = latprof_bpf__attach(c->skel);
	if (!err && c->mode_cpu) {
		err = online_cpus(&online, &nr);
		for (cpu = 0; !err && cpu < nr; cpu++)
			if (online[cpu])
				err = attach_cpu(c, cpu);
		free(online);
	}
	/* threads asleep in a syscall since before now count from here */
	if (!err && c->skel->bss)
		c->skel->bss->attach_ns = now_ns();
	return err;
}

int collect_poll(struct collect *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, proc_images_refresh(&c->images, timeout_ms));

	return n < 0 && n != -EINTR ? n : 0;
}

/*
 * Run the in-flight iterator once: every target thread still in a syscall or
 * off CPU at stop_ns reports its time so far. Needs the other programs
 * detached, or a syscall ending now would be counted twice.
 */
static void report_in_flight(struct collect *c)
{
	struct bpf_program *prog = c->skel->progs.dump_in_flight;
	struct bpf_link *link;
	char buf[64];
	int fd;

	if (c->in_flight_done || bpf_program__fd(prog) < 0)
		return;
	c->in_flight_done = true;
	link = bpf_program__attach_iter(prog, NULL);
	if (!link) {
		pr_warn("cannot report syscalls in flight: %s", strerror(errno));
		return;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		pr_warn("cannot report syscalls in flight: %s", strerror(errno));
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
}

void collect_detach(struct collect *c)
{
	size_t i;

	/* what is open at this instant is in flight; later starts are not */
	if (c->skel && c->skel->bss && !c->in_flight_done)
		c->skel->bss->stop_ns = now_ns();
	for (i = 0; i < c->links.nr; i++)
		bpf_link__destroy(c->links.items[i]);
	c->links.nr = 0;
	for (i = 0; i < c->perf_fds.nr; i++)
		close(c->perf_fds.items[i]);
	c->perf_fds.nr = 0;
	if (c->skel) {
		latprof_bpf__detach(c->skel);
		report_in_flight(c);
	}
	/* events already in the ring buffer still count */
	if (c->rb)
		ring_buffer__consume(c->rb);
}

void collect_get_stats(struct collect *c, struct collect_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.stats);
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));
	uint32_t k;
	int i;

	memset(st, 0, sizeof(*st));
	for (k = 0; vals && k < LP_STAT_NR; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (i = 0; i < ncpu; i++)
			st->stat[k] += vals[i];
	}
	free(vals);
	st->procs_seen = proc_images_nr_processes(&c->images);
	st->snapshot_failed = c->images.snapshot_failed;
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_detach(c);
	ring_buffer__free(c->rb);
	latprof_bpf__destroy(c->skel);
	free(c->links.items);
	free(c->perf_fds.items);
	proc_images_release(&c->images);
	proc_tree_release(&c->procs);
	stackagg_free(c->ustacks);
	iotrack_release(&c->io);
	free(c->reqs.items);
	free(c);
}

/* Draining: kernel keys + stack ids -> symbolized profile samples. */
struct builder {
	struct collect *c;
	struct profile *p;
	uint64_t period_ns;
	uint64_t vanished_samples;	/* user frames of processes never snapshotted */
	struct hashmap mappings;	/* sym mapping -> profile mapping id */
	struct { uint64_t *items; size_t nr, alloc; } locs;
	struct sys_stats sys;		/* per (process, syscall), from both maps */
	struct hashmap sys_idx;		/* (tgid, nr) -> index + 1 in sys */
};

/* The profile mapping of a symbolizer mapping, added on first use; 0 = none. */
static uint64_t builder_mapping(struct builder *b, const struct sym_mapping *m)
{
	struct profile_mapping pm = { 0 };
	char *file = NULL;
	uint64_t id;

	if (!m)
		return 0;
	id = HASHMAP_TO_NUM(hashmap_get(&b->mappings, m, 0, 0));
	if (id)
		return id;
	pm.start = m->start;
	pm.limit = m->limit;
	pm.offset = m->offset;
	pm.file = m->path;
	pm.build_id = m->build_id;
	pm.has_functions = pm.has_filenames = pm.has_line_numbers = true;
	/* the symbolizer names modules "[mod]"; the profile "[kernel.kallsyms]/mod" */
	if (m->kernel && strcmp(m->path, PROFILE_KERNEL_MAPPING)) {
		if (asprintf(&file, "%s/%.*s", PROFILE_KERNEL_MAPPING,
			     (int)strcspn(m->path + 1, "]"), m->path + 1) < 0)
			return 0;
		pm.file = file;
	}
	id = profile_add_mapping(b->p, &pm);
	free(file);
	if (!id || hashmap_put(&b->mappings, m, 0, 0, HASHMAP_NUM(id)))
		return 0;
	return id;
}

static uint64_t builder_location(struct builder *b, const struct sym_location *loc)
{
	struct profile_line lines[32];
	uint64_t map = builder_mapping(b, loc->map), id;
	size_t i, n = loc->nr_frames < ARRAY_SIZE(lines) ? loc->nr_frames : ARRAY_SIZE(lines);
	char name[512];

	id = profile_find_location(b->p, map, loc->address);
	if (id)
		return id;
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &loc->frames[i];
		const char *fn = f->function;

		if (!fn) {
			sym_location_fallback_name(loc, name, sizeof(name));
			fn = name;
		}
		/* pprof keeps the mangled name as system_name */
		lines[i].function_id = profile_function_id(b->p, fn,
							   f->function && f->system_name ?
							   f->system_name : fn, f->file, 0);
		lines[i].line = f->line;
		if (!lines[i].function_id)
			return 0;
	}
	return profile_add_location(b->p, map, loc->address, lines, n);
}

static int builder_unknown_location(struct builder *b, uint64_t addr, uint64_t *id)
{
	struct profile_line line = { 0 };

	*id = profile_find_location(b->p, 0, addr);
	if (*id)
		return 0;
	line.function_id = profile_function_id(b->p, "[unknown]", NULL, NULL, 0);
	*id = line.function_id ? profile_add_location(b->p, 0, addr, &line, 1) : 0;
	return *id ? 0 : -ENOMEM;
}

/* The location of one frame; user pcs may carry SYM_PC_EXACT. */
static int builder_frame(struct builder *b, uint64_t pc, bool is_return,
			 struct sym_process *proc, bool kernel, uint64_t *lid)
{
	const struct sym_location *loc;

	if (kernel) {
		loc = symbolizer_kernel(b->c->sym, pc, is_return);
	} else {
		if (pc & SYM_PC_EXACT)
			is_return = false;	/* a signal interrupted this frame */
		pc &= ~SYM_PC_EXACT;
		if (!proc)
			return builder_unknown_location(b, pc, lid);
		loc = symbolizer_user(b->c->sym, proc, pc, is_return);
	}
	*lid = loc ? builder_location(b, loc) : 0;
	return *lid ? 0 : -ENOMEM;
}

/* Append locations for @pcs (leaf first) to b->locs. */
static int builder_frames(struct builder *b, const uint64_t *pcs, size_t nr,
			  struct sym_process *proc, bool kernel)
{
	size_t i;
	int err;

	for (i = 0; i < nr && pcs[i]; i++) {
		if (array_grow(&b->locs, b->locs.nr + 1))
			return -ENOMEM;
		err = builder_frame(b, pcs[i], i > 0, proc, kernel, &b->locs.items[b->locs.nr]);
		if (err)
			return err;
		b->locs.nr++;
	}
	return 0;
}

/*
 * Is kernel @pc in the path that runs latprof's own tracepoint program
 * (bpf_prog_*, bpf_trace_run*, __traceiter_*, __bpf_trace_*)? How many such
 * frames a stack taken in sched_switch has depends on what else is attached.
 */
static bool tracing_frame(struct builder *b, uint64_t pc, bool is_return)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
						"__bpf_trace_" };
	const struct sym_location *loc = symbolizer_kernel(b->c->sym, pc, is_return);
	const char *fn;
	size_t i;

	if (!loc || !loc->nr_frames || !(fn = loc->frames[loc->nr_frames - 1].function))
		return false;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * Append the frames of stack map entry @id (leaf first) to b->locs; @trim:
 * a kernel stack taken by a tracepoint program, whose own frames go.
 */
static int builder_stack(struct builder *b, int32_t id, struct sym_process *proc, bool kernel,
			 bool trim)
{
	uint64_t ips[LP_MAX_STACK_DEPTH] = { 0 };
	int fd = bpf_map__fd(b->c->skel->maps.stacks);
	size_t skip = 0;

	if (id < 0 || bpf_map_lookup_elem(fd, &id, ips))
		return 0;
	while (trim && kernel && skip < LP_MAX_STACK_DEPTH && ips[skip] &&
	       tracing_frame(b, ips[skip], skip > 0))
		skip++;
	return builder_frames(b, ips + skip, LP_MAX_STACK_DEPTH - skip, proc, kernel);
}

static struct sym_process *builder_process(struct builder *b, pid_t pid, uint32_t gen)
{
	struct proc_image *img = proc_images_find(&b->c->images, pid, gen);

	/* an event may have been lost: a live process can still be read now */
	if (!img && !proc_images_snapshot(&b->c->images, pid, gen))
		img = proc_images_find(&b->c->images, pid, gen);
	return img ? img->sym : NULL;
}

/* One aggregated stack and what was measured on it, from any source. */
struct sample_in {
	uint32_t tgid, gen;
	const char *comm;		/* LP_COMM_LEN bytes, maybe unterminated */
	int32_t kstack_id, ustack_id;	/* stack map ids, or -errno */
	const uint64_t *upcs;		/* DWARF-unwound user pcs, or NULL */
	size_t nr_upcs;
	int32_t nr;			/* syscall number, -1 for none */
	uint64_t cpu_samples;
	uint64_t slow_syscalls, latency_ns, max_ns;
	uint64_t blocked_ns, preempted_ns;
};

/* Column indexes of the profile being built; -1 when the mode is off. */
struct builder_cols {
	int samples, cpu, syscalls, latency, offcpu;
};

static int builder_emit(struct builder *b, const struct builder_cols *cols,
			const struct sample_in *in)
{
	char comm[LP_COMM_LEN + 1] = { 0 }, sys[SYS_NAME_LEN];
	struct profile_label labels[6] = {
		{ .key = "pid", .num = in->tgid },
		{ .key = "comm", .str = comm },
	};
	int64_t values[5] = { 0 };
	size_t nl = 2, base;
	int err = 0;

	memcpy(comm, in->comm, LP_COMM_LEN);
	if (in->cpu_samples && cols->samples >= 0) {
		values[cols->samples] = in->cpu_samples;
		values[cols->cpu] = in->cpu_samples * b->period_ns;
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		values[cols->samples] = values[cols->cpu] = 0;
	}
	if (in->nr >= 0) {
		sys_stat_name(in->nr, sys, sizeof(sys));
		labels[nl++] = (struct profile_label){ .key = "syscall", .str = sys };
		labels[nl++] = (struct profile_label){
			.key = "category", .str = syscall_category_name(syscall_category(in->nr))
		};
	}
	base = nl;
	if (!err && ((in->slow_syscalls && cols->syscalls >= 0) ||
		     (in->blocked_ns && cols->offcpu >= 0))) {
		if (cols->syscalls >= 0) {
			values[cols->syscalls] = in->slow_syscalls;
			values[cols->latency] = in->latency_ns;
			if (in->max_ns)
				labels[nl++] = (struct profile_label){
					.key = "max_ns", .num = in->max_ns, .num_unit = "nanoseconds"
				};
		}
		if (cols->offcpu >= 0 && in->blocked_ns) {
			values[cols->offcpu] = in->blocked_ns;
			labels[nl++] = (struct profile_label){ .key = "offcpu", .str = "blocked" };
		}
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
		memset(values, 0, sizeof(values));
	}
	if (!err && in->preempted_ns && cols->offcpu >= 0) {
		nl = base;
		values[cols->offcpu] = in->preempted_ns;
		labels[nl++] = (struct profile_label){ .key = "offcpu", .str = "preempted" };
		err = profile_add_sample(b->p, b->locs.items, b->locs.nr, values, labels, nl);
	}
	return err;
}

/*
 * Add the samples of one stack: the kernel stack @kstack_id, then the user
 * stack, from the stack map (ustack_id >= 0) or unwound pcs (upcs).
 */
static int builder_sample(struct builder *b, const struct builder_cols *cols,
			  const struct sample_in *in)
{
	struct sym_process *proc;
	int err;

	if (in->tgid == (uint32_t)b->c->command_pid && in->gen == 0)
		return 0;	/* the held child before exec: latprof's own */
	proc = builder_process(b, in->tgid, in->gen);
	if (!proc && (in->ustack_id >= 0 || in->nr_upcs))
		b->vanished_samples += in->cpu_samples;
	b->locs.nr = 0;
	/* CPU samples interrupt whatever runs: BPF programs there are real cost */
	err = builder_stack(b, in->kstack_id, NULL, true, !in->cpu_samples);
	if (!err && in->upcs)
		err = builder_frames(b, in->upcs, in->nr_upcs, proc, false);
	else if (!err)
		err = builder_stack(b, in->ustack_id, proc, false, false);
	return err ? err : builder_emit(b, cols, in);
}

/* Called for each entry of a map being drained; the value is per CPU for per-CPU maps. */
typedef int (*builder_entry_fn)(struct builder *b, const struct builder_cols *cols,
				const void *key, const void *value);

/* Call @fn for every entry of @map (read from user space, after detach). */
static int builder_each(struct builder *b, const struct builder_cols *cols,
			const struct bpf_map *map, builder_entry_fn fn)
{
	enum bpf_map_type t = bpf_map__type(map);
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(map), err = 0;
	size_t ksize = bpf_map__key_size(map), vsize = bpf_map__value_size(map);
	void *key, *next, *value;
	bool first = true;

	if (t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY) {
		if (ncpu <= 0)
			return ncpu ? ncpu : -EINVAL;
		vsize = ((vsize + 7) & ~(size_t)7) * ncpu;
	}
	key = malloc(ksize);
	next = malloc(ksize);
	value = malloc(vsize);
	if (!key || !next || !value)
		err = -ENOMEM;
	while (!err && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, ksize);
		if (!bpf_map_lookup_elem(fd, key, value))
			err = fn(b, cols, key, value);
	}
	free(key);
	free(next);
	free(value);
	return err;
}

static int builder_cpu_sample(struct builder *b, const struct builder_cols *cols,
			      const void *k, const void *v)
{
	const struct lp_sample_key *key = k;
	struct sample_in in = {
		.tgid = key->tgid,
		.gen = key->gen,
		.comm = key->comm,
		.kstack_id = key->kstack_id,
		.ustack_id = key->ustack_id,
		.nr = -1,
		.cpu_samples = *(const uint64_t *)v,
	};

	return builder_sample(b, cols, &in);
}

/* Frame-pointer timed samples: slow syscalls, off-CPU outside syscalls. */
static int builder_timed_sample(struct builder *b, const struct builder_cols *cols,
				const void *k, const void *v)
{
	const struct lp_timed_key *key = k;
	const struct lp_timed_value *val = v;
	struct sample_in in = {
		.tgid = key->tgid,
		.gen = key->gen,
		.comm = key->comm,
		.kstack_id = key->kstack_id,
		.ustack_id = key->ustack_id,
		.nr = key->nr,
		.slow_syscalls = val->count,
		.latency_ns = val->latency_ns,
		.max_ns = val->max_ns,
		.blocked_ns = val->blocked_ns,
		.preempted_ns = val->preempted_ns,
	};

	return builder_sample(b, cols, &in);
}

static int builder_ustacks(struct builder *b, const struct builder_cols *cols)
{
	size_t i, n = stackagg_nr(b->c->ustacks);
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		const struct stackagg_entry *e = stackagg_get(b->c->ustacks, i);
		struct sample_in in = {
			.tgid = e->key.tgid,
			.gen = e->key.gen,
			.comm = e->key.comm,
			.kstack_id = e->key.kstack_id,
			.ustack_id = -1,
			.upcs = e->pcs,
			.nr_upcs = e->nr_pcs,
			.nr = e->key.nr,
			.blocked_ns = e->sum.blocked_ns,
			.preempted_ns = e->sum.preempted_ns,
		};

		if (e->key.kind == LP_SAMPLE_CPU) {
			in.cpu_samples = e->sum.value;
		} else {
			in.slow_syscalls = e->count;
			in.latency_ns = e->sum.value;
			in.max_ns = e->max_value;
		}
		err = builder_sample(b, cols, &in);
	}
	return err;
}

/*
 * Add the per-CPU values @vals of (@tgid, @nr) to the statistics being
 * built: the array and the hash can both hold a pair (a block handed out
 * twice in a race, the in-flight iterator). 0 or -ENOMEM.
 */
static int builder_sys_add(struct builder *b, uint32_t tgid, int32_t nr,
			   const struct lp_sys_stat *vals)
{
	uint64_t i = HASHMAP_TO_NUM(hashmap_get(&b->sys_idx, NULL, tgid, (uint32_t)nr));
	int cpu, j, ncpu = libbpf_num_possible_cpus();
	struct sys_stat *st;

	if (!i) {
		if (array_grow(&b->sys, b->sys.nr + 1))
			return -ENOMEM;
		i = ++b->sys.nr;
		if (hashmap_put(&b->sys_idx, NULL, tgid, (uint32_t)nr, HASHMAP_NUM(i)))
			return -ENOMEM;
		st = &b->sys.items[i - 1];
		memset(st, 0, sizeof(*st));
		st->pid = tgid;
		sys_stat_name(nr, st->name, sizeof(st->name));
	}
	st = &b->sys.items[i - 1];
	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct lp_sys_stat *v = &vals[cpu];
		struct sys_stat one = { .errors = v->errors, .max_ns = v->max_ns,
					.in_flight = v->in_flight };

		for (j = 0; j < LP_HIST_SLOTS; j++) {
			one.hist[j] = v->hist[j].count;
			one.hist_ns[j] = v->hist[j].sum_ns;
			one.count += v->hist[j].count;
			one.total_ns += v->hist[j].sum_ns;
		}
		if (one.count)
			sys_stat_merge(st, &one);
	}
	return 0;
}

static int builder_sys_stat(struct builder *b, const struct builder_cols *cols,
			    const void *k, const void *v)
{
	const struct lp_sys_key *key = k;

	(void)cols;
	return builder_sys_add(b, key->tgid, key->nr, v);
}

/* The per-CPU array: block i belongs to the tgid in fast_slots[1 + i]. */
static int builder_sys_fast(struct builder *b)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	int slots_fd = bpf_map__fd(b->c->skel->maps.fast_slots);
	int fd = bpf_map__fd(b->c->skel->maps.sys_fast);
	struct lp_sys_stat *vals;
	uint32_t i, nr, key, tgid, used = 0;

	if (!b->c->fast_slots || bpf_map_lookup_elem(slots_fd, &used, &used))
		return 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; !err && i < used && i < b->c->fast_slots; i++) {
		key = i + 1;
		if (bpf_map_lookup_elem(slots_fd, &key, &tgid) || !tgid)
			continue;
		for (nr = 0; !err && nr < LP_MAX_SYSCALL_NR; nr++) {
			key = i * LP_MAX_SYSCALL_NR + nr;
			if (!bpf_map_lookup_elem(fd, &key, vals))
				err = builder_sys_add(b, tgid, nr, vals);
		}
	}
	free(vals);
	return err;
}

/* Per (process, syscall) statistics from both maps, summed over CPUs, into b->sys. */
static int builder_sys_read(struct builder *b)
{
	int err = builder_sys_fast(b);

	if (!err)
		err = builder_each(b, NULL, b->c->skel->maps.sys_stats, builder_sys_stat);
	return err;
}

/* The timeline series of syscall @name. */
static enum timeline_series sys_series(const char *name)
{
	int nr = syscall_number(name);

	switch (nr < 0 ? SYSCALL_CATEGORY_OTHER : syscall_category(nr)) {
	case SYSCALL_CATEGORY_FILE:
		return TIMELINE_SERIES_FILE;
	case SYSCALL_CATEGORY_NETWORK:
		return TIMELINE_SERIES_NETWORK;
	case SYSCALL_CATEGORY_SYNC:
		return TIMELINE_SERIES_SYNC;
	case SYSCALL_CATEGORY_SLEEP:
		return TIMELINE_SERIES_SLEEP;
	default:
		return TIMELINE_SERIES_OTHER;
	}
}

static bool sys_opens_file(const char *name)
{
	return !strcmp(name, "openat") || !strcmp(name, "open") || !strcmp(name, "openat2") ||
	       !strcmp(name, "creat");
}

int collect_counters(struct collect *c, struct timeline_counters *out)
{
	struct collect_stats st;
	struct builder b = { .c = c };
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (c->mode_cpu) {
		collect_get_stats(c, &st);
		out->ns[TIMELINE_SERIES_CPU] = st.stat[LP_STAT_SAMPLES] * (NSEC_PER_SEC / c->freq_hz);
	}
	if (c->mode_syscall)
		err = builder_sys_read(&b);
	for (i = 0; !err && i < b.sys.nr; i++) {
		const struct sys_stat *s = &b.sys.items[i];

		out->ns[sys_series(s->name)] += s->total_ns;
		if (sys_opens_file(s->name))
			out->opens += s->count;
	}
	hashmap_release(&b.sys_idx);
	free(b.sys.items);
	return err;
}

struct proc_tree *collect_procs(struct collect *c)
{
	return &c->procs;
}

/* Per (process, syscall) statistics, summed over CPUs, into metadata. */
static int builder_sys_stats(struct builder *b, const struct builder_cols *cols)
{
	size_t i;
	int err = builder_sys_read(b);

	for (i = 0; !err && i < b->sys.nr; i++)
		if (b->sys.items[i].count)
			err = sys_stat_store(b->p, &b->sys.items[i]);
	return err;
}

/* proc.PID.* metadata: unwinding mode and stack quality of each process. */
static int builder_proc_meta(struct builder *b)
{
	char key[96];
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < b->c->images.list.nr; i++) {
		const struct proc_image *img = &b->c->images.list.items[i];
		uint64_t v;

		snprintf(key, sizeof(key), "proc.%d.unwind", img->pid);
		err = profile_set_meta(b->p, key, b->c->unwind_dwarf ? "dwarf" : "fp");
		if (!err && img->comm[0]) {
			snprintf(key, sizeof(key), "proc.%d.comm", img->pid);
			err = profile_set_meta(b->p, key, img->comm);
		}
		for (j = 0; !err && b->c->unwind_dwarf && j < SYM_UNWIND_NR; j++) {
			/* images of one pid (exec generations) add up */
			snprintf(key, sizeof(key), "proc.%d.%s", img->pid, unwind_names[j]);
			v = profile_get_meta_u64(b->p, key);
			err = profile_set_meta_u64(b->p, key, v + img->unwind[j]);
		}
	}
	return err;
}

static int builder_meta(struct builder *b)
{
	struct collect_stats st;
	char key[64];
	int err = 0, i;

	collect_get_stats(b->c, &st);
	for (i = 0; !err && i < LP_STAT_NR; i++) {
		snprintf(key, sizeof(key), "%s.%s",
			 i == LP_STAT_SAMPLES || i == LP_STAT_EVENTS ? "count" : "lost",
			 stat_names[i]);
		err = profile_set_meta_u64(b->p, key, st.stat[i]);
	}
	if (!err)
		err = profile_set_meta_u64(b->p, "lost.samples_process_vanished",
					   b->vanished_samples);
	if (!err)
		err = profile_set_meta_u64(b->p, "count.processes", st.procs_seen);
	if (!err && (b->c->sys_hooks || b->c->mode_offcpu))
		err = profile_set_meta_u64(b->p, "count.in_flight_at_stop",
					   b->c->in_flight_reported);
	return err;
}

/* The value columns of the chosen modes, in a fixed order. */
static int builder_columns(struct builder *b, struct builder_cols *cols)
{
	struct profile *p = b->p;

	*cols = (struct builder_cols){ -1, -1, -1, -1, -1 };
	if (b->c->mode_cpu) {
		cols->samples = profile_add_type(p, PROFILE_TYPE_SAMPLES, "count");
		cols->cpu = profile_add_type(p, PROFILE_TYPE_CPU, "nanoseconds");
		if (cols->samples < 0 || cols->cpu < 0)
			return -ENOMEM;
		p->period_type.type = profile_str(p, PROFILE_TYPE_CPU);
		p->default_type = p->period_type.type;
		p->period_type.unit = profile_str(p, "nanoseconds");
		p->period = b->period_ns;
	}
	if (b->c->mode_syscall) {
		cols->syscalls = profile_add_type(p, PROFILE_TYPE_SYSCALLS, "count");
		cols->latency = profile_add_type(p, PROFILE_TYPE_LATENCY, "nanoseconds");
		if (cols->syscalls < 0 || cols->latency < 0)
			return -ENOMEM;
		if (!p->default_type)
			p->default_type = profile_str(p, PROFILE_TYPE_LATENCY);
	}
	if (b->c->mode_offcpu) {
		cols->offcpu = profile_add_type(p, PROFILE_TYPE_OFFCPU, "nanoseconds");
		if (cols->offcpu < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Requests, files and peers into metadata. */
static int builder_track(struct builder *b)
{
	struct collect *c = b->c;
	struct requests reqs = { 0 };
	int err;

	if (!c->requests && !c->files && !c->net)
		return 0;
	err = track_flush(c);
	if (!err && c->requests)
		err = requests_compute(c->reqs.items, c->reqs.nr, &reqs);
	if (!err && c->requests) {
		requests_sort_by_start(&reqs);
		err = requests_store(b->p, &reqs, c->reqs_dropped, c->reqs_unanswered);
	}
	if (!err && (c->files || c->net))
		err = iotrack_store(&c->io, b->p);
	free(reqs.items);
	return err;
}

bool collect_raw_tp(const struct collect *c)
{
	return c->raw_tp;
}

int collect_build_profile(struct collect *c, struct profile *p)
{
	struct builder b = { .c = c, .p = p, .period_ns = NSEC_PER_SEC / c->freq_hz };
	struct builder_cols cols;
	int err = builder_columns(&b, &cols);

	if (!err && c->mode_cpu)
		err = builder_each(&b, &cols, c->skel->maps.cpu_samples, builder_cpu_sample);
	if (!err && (c->sys_hooks || c->mode_offcpu))
		err = builder_each(&b, &cols, c->skel->maps.timed_samples, builder_timed_sample);
	if (!err)
		err = builder_ustacks(&b, &cols);
	if (!err && c->mode_syscall)
		err = builder_sys_stats(&b, &cols);
	if (!err)
		err = builder_meta(&b);
	if (!err)
		err = builder_proc_meta(&b);
	if (!err)
		err = builder_track(&b);
	hashmap_release(&b.mappings);
	hashmap_release(&b.sys_idx);
	free(b.locs.items);
	free(b.sys.items);
	return err;
}

/* serve: the in-kernel aggregation read and emptied while collecting. */

const char *collect_stat_name(int stat)
{
	return stat >= 0 && stat < LP_STAT_NR && stat_names[stat] ? stat_names[stat] : "unknown";
}

typedef void (*drain_entry_fn)(struct collect *c, const struct collect_drain_ops *ops,
			       const void *key, const void *val);

/*
 * Take out every entry of @map, one at a time, at most max_entries of them
 * so programs adding entries as fast as we delete cannot keep us here.
 */
static int drain_map(struct collect *c, struct bpf_map *map, const struct collect_drain_ops *ops,
		     drain_entry_fn fn)
{
	int fd = bpf_map__fd(map), ncpu = libbpf_num_possible_cpus(), err = 0;
	bool percpu = bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH;
	size_t vsize = bpf_map__value_size(map), n, max = bpf_map__max_entries(map);
	void *key = calloc(1, bpf_map__key_size(map));
	void *val = calloc(percpu ? (size_t)(ncpu > 0 ? ncpu : 1) : 1, (vsize + 7) & ~7UL);

	if (!key || !val)
		err = -ENOMEM;
	for (n = 0; !err && n < max && !bpf_map_get_next_key(fd, NULL, key); n++) {
		if (!bpf_map_lookup_and_delete_elem(fd, key, val)) {
			fn(c, ops, key, val);
		} else if (errno != ENOENT) {
			/* kernels before 5.14: lookup, then delete */
			if (!bpf_map_lookup_elem(fd, key, val))
				fn(c, ops, key, val);
			if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
				err = -errno;
		}
	}
	free(key);
	free(val);
	return err;
}

static void drain_sys(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		      const void *v)
{
	const struct lp_sys_key *key = k;
	const struct lp_sys_stat *vals = v;
	struct sys_stat st = { .pid = key->tgid };
	int cpu, j, ncpu = libbpf_num_possible_cpus();

	sys_stat_name(key->nr, st.name, sizeof(st.name));
	for (cpu = 0; cpu < ncpu; cpu++) {
		st.errors += vals[cpu].errors;
		st.in_flight += vals[cpu].in_flight;
		if (vals[cpu].max_ns > st.max_ns)
			st.max_ns = vals[cpu].max_ns;
		for (j = 0; j < LP_HIST_SLOTS; j++) {
			st.hist[j] += vals[cpu].hist[j].count;
			st.hist_ns[j] += vals[cpu].hist[j].sum_ns;
			st.count += vals[cpu].hist[j].count;
			st.total_ns += vals[cpu].hist[j].sum_ns;
		}
	}
	if (st.count && ops->sys)
		ops->sys(ops->arg, &st);
}

static void drain_cpu(struct collect *c, const struct collect_drain_ops *ops, const void *k,
		      const void *v)
{
	const struct lp_sample_key *key = k;
	char comm[LP_COMM_LEN + 1] = { 0 };

	memcpy(comm, key->comm, LP_COMM_LEN);
	if (ops->cpu)
		ops->cpu(ops->arg, key->tgid, comm, *(const uint64_t *)v);
}

static void drain_timed(struct collect *c, const struct collect_drain_ops *ops, const void *k,
			const void *v)
{
	const struct lp_timed_key *key = k;
	const struct lp_timed_value *val = v;
	char comm[LP_COMM_LEN + 1] = { 0 };

	memcpy(comm, key->comm, LP_COMM_LEN);
	if (ops->offcpu && (val->blocked_ns || val->preempted_ns))
		ops->offcpu(ops->arg, key->tgid, comm, val->blocked_ns, val->preempted_ns);
}

/* Stack ids are only meaningful with the samples just taken out. */
static void drain_stacks(struct collect *c)
{
	int fd = bpf_map__fd(c->skel->maps.stacks);
	size_t n, max = bpf_map__max_entries(c->skel->maps.stacks);
	uint32_t id;

	for (n = 0; n < max && !bpf_map_get_next_key(fd, NULL, &id); n++)
		if (bpf_map_delete_elem(fd, &id))
			break;
}

int collect_drain(struct collect *c, const struct collect_drain_ops *ops)
{
	int err = 0;

	if (c->mode_syscall)
		err = drain_map(c, c->skel->maps.sys_stats, ops, drain_sys);
	if (!err && c->mode_cpu)
		err = drain_map(c, c->skel->maps.cpu_samples, ops, drain_cpu);
	if (!err && (c->sys_hooks || c->mode_offcpu))
		err = drain_map(c, c->skel->maps.timed_samples, ops, drain_timed);
	if (!err)
		drain_stacks(c);
	return err;
}
