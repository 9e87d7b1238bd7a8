// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF session for `record`: skeleton lifecycle, perf events on every online
 * CPU, lifecycle events from the ring buffer (snapshots for the symbolizer),
 * requests and files; the profile is built in collect_build.c, serve's
 * periodic drain is collect_drain.c.
 */
#include "src/collect.h"

#include "src/collect_priv.h"

#include <sys/epoll.h>

#include <limits.h>
#include <sched.h>

#include "src/btfcache.h"
#include "src/syshooks.h"
#include "src/target.h"

/* the longest wait between two reads of the stacks of a Python process */
#define PYTHON_POLL_MS 10

_Static_assert(sizeof(struct lp_sample_key) == 32, "lp_sample_key layout");
_Static_assert(sizeof(struct lp_timed_key) == 40, "lp_timed_key layout");
_Static_assert(sizeof(struct lp_timed_value) == 40, "lp_timed_value layout");
/* a stacks map element in one 1 KiB allocation (latprof.h) */
_Static_assert(sizeof(struct lp_stack) == 960, "lp_stack layout");
_Static_assert(sizeof(struct lp_sys_key) == 8, "lp_sys_key layout");
_Static_assert(sizeof(struct lp_sys_stat) % 8 == 0, "lp_sys_stat layout");
_Static_assert(offsetof(struct lp_ustack_sample, stack) == LP_USTACK_HDR_SIZE, "ustack header");
_Static_assert(LP_HIST_SLOTS == SYS_HIST_SLOTS, "histogram slots");
_Static_assert(sizeof(struct lp_event) == 40, "lp_event layout");
_Static_assert(sizeof(struct lp_proc) == 24 + 8 * LP_SYS_USED_WORDS, "lp_proc layout");
_Static_assert((int)LP_WAIT_PATH == (int)SYSCALL_WAIT_DECIDED_PATH &&
	       (int)LP_WAIT_IDLE == (int)SYSCALL_WAIT_DECIDED_IDLE &&
	       (int)LP_WAIT_READY == (int)SYSCALL_WAIT_UNDECIDABLE, "lp_wait");
_Static_assert(sizeof(struct lp_proc_event) == 56 + LP_ARGS_LEN + 8 * LP_SYS_USED_WORDS,
	       "lp_proc_event layout");
_Static_assert(PROC_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(PROC_IMAGE_COMM_LEN == LP_COMM_LEN, "comm length");
_Static_assert(sizeof(struct lp_task) == 200, "lp_task layout");
_Static_assert(sizeof(struct lp_times) == sizeof(struct request_times), "lp_times layout");
_Static_assert((int)LP_REQ_CAT_NR == (int)REQUEST_CAT_NR, "request categories");
_Static_assert(LP_REQ_SHARED == REQUEST_SHARED, "request flags");
_Static_assert(sizeof(struct lp_conn) == 304, "lp_conn layout");
_Static_assert(sizeof(struct lp_req_event) == 320, "lp_req_event layout");
_Static_assert(sizeof(struct lp_open_event) == 32 + LP_PATH_LEN, "lp_open_event layout");
_Static_assert(sizeof(struct lp_peer_event) == 48, "lp_peer_event layout");
_Static_assert(sizeof(struct lp_fd_event) == 64, "lp_fd_event layout");

const char *const collect_stat_names[LP_STAT_NR] = {
	[LP_STAT_SAMPLES] = "samples",
	[LP_STAT_USTACK_FULL] = "ustack_map_full",
	[LP_STAT_USTACK_EFAULT] = "ustack_fault",
	[LP_STAT_USTACK_OTHER] = "ustack_error",
	[LP_STAT_KSTACK_FULL] = "kstack_map_full",
	[LP_STAT_KSTACK_EFAULT] = "kstack_fault",
	[LP_STAT_KSTACK_OTHER] = "kstack_error",
	[LP_STAT_SAMPLES_DROPPED] = "samples_dropped_map_full",
	[LP_STAT_PROCS_DROPPED] = "procs_dropped_map_full",
	[LP_STAT_EVENTS] = "events",
	[LP_STAT_EVENTS_LOST] = "events_lost",
	[LP_STAT_USTACKS_LOST] = "ustacks_lost",
	[LP_STAT_SYS_STATS_DROPPED] = "syscall_stats_unattributed_map_full",
	[LP_STAT_SYS_STATS_NOMEM] = "syscall_stats_unattributed_no_memory",
	[LP_STAT_TIMED_DROPPED] = "timed_dropped_map_full",
	[LP_STAT_TASK_STATE_FAILED] = "syscalls_untimed_no_task_slot",
	[LP_STAT_TRACK_LOST] = "track_events_lost",
	[LP_STAT_CONNS_DROPPED] = "descriptors_untracked_map_full",
	[LP_STAT_OFFCPU_UNMATCHED] = "offcpu_unmatched",
	[LP_STAT_PROC_TIMES_DROPPED] = "process_times_dropped_map_full",
};

const char *const collect_unwind_names[SYM_UNWIND_NR] = {
	[SYM_UNWIND_COMPLETE] = "stacks_complete",
	[SYM_UNWIND_TRUNCATED_COPY] = "truncated_copy",
	[SYM_UNWIND_TRUNCATED_DEPTH] = "truncated_depth",
	[SYM_UNWIND_NO_UNWIND_INFO] = "truncated_no_unwind_info",
	[SYM_UNWIND_BAD_READ] = "truncated_bad_read",
};

/* While set, libbpf's warnings are for -v only: a load that may fall back. */
static bool libbpf_quiet;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_TRACE)
		return 0;
	if ((level == LIBBPF_INFO || libbpf_quiet) && log_level < LOG_LEVEL_DEBUG)
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

/*
 * Look for a Python interpreter in (@pid, @gen) and let the BPF walk know.
 * Called at its first sight and with its samples, because libpython is
 * mapped after the exec that made the process (pystacks rate-limits).
 */
static void python_probe(struct collect *c, pid_t pid, uint32_t gen, bool wait)
{
	struct lp_py_proc pp;
	uint32_t key = pid;

	if (!c->py || pystacks_probe(c->py, pid, gen, wait, &pp) != 1)
		return;
	if (!bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_NOEXIST))
		c->py_walked++;
	else if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_ANY))
		pr_debug("pid %d: cannot walk Python frames: %s", pid, strerror(errno));
}

/* The maps of (@pid, @gen) were re-read: libpython may be there now. */
static void python_refreshed(void *arg, pid_t pid, uint32_t gen)
{
	python_probe(arg, pid, gen, false);
}

/* Whether image @gen of @pid is not yet replaced by an exec (procimg.h). */
static bool image_current(void *arg, pid_t pid, uint32_t gen)
{
	struct collect *c = arg;
	struct lp_proc proc;
	uint32_t key = pid;

	/* no entry: exited (its maps read empty) or not a target */
	return bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.procs), &key, &proc) ||
	       proc.gen == gen;
}

/*
 * @pid exited, or exec'ed image @gen (0 for an exit): its old interpreter is
 * not to be walked. Samples and process events come through different ring
 * buffers, so a sample of the new image may have been handled first and
 * found its interpreter: that entry stays (deleted, the new image would go
 * unwalked for good, as pystacks_probe does not report a find twice).
 */
static void python_forget(struct collect *c, pid_t pid, uint32_t gen)
{
	struct lp_py_proc pp;
	uint32_t key = pid;

	if (!c->py)
		return;
	if (gen && pystacks_walkable(c->py, pid, gen, &pp))
		bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_ANY);
	else if (!bpf_map_delete_elem(bpf_map__fd(c->skel->maps.py_procs), &key) && c->py_walked)
		c->py_walked--;
}

static int handle_event(struct collect *c, void *data, size_t size)
{
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
		img = proc_images_find(&c->images, e->pid, e->gen);
		if (img)
			img->ended = false;	/* the pid of an exited one, reused */
		proc_images_snapshot(&c->images, e->pid, e->gen);
		img = proc_images_find(&c->images, e->pid, e->gen);
		/* at fork the event runs in the parent, whose name the child has */
		if (img && !img->comm[0])
			memcpy(img->comm, e->comm, LP_COMM_LEN);
		if (e->type == LP_EVENT_EXEC)
			python_forget(c, e->pid, e->gen);
		python_probe(c, e->pid, e->gen, false);
		if (e->type == LP_EVENT_NEW)
			tree_new(c, e);
		else if (size >= sizeof(*pe))
			tree_exec(c, pe);
		break;
	case LP_EVENT_EXIT:
		pr_debug("exit pid %u", e->pid);
		proc_images_stop_refresh(&c->images, e->pid, e->gen);
		python_forget(c, e->pid, 0);
		if (c->py)
			pystacks_exited(c->py, e->pid, e->gen);
		if (size >= sizeof(*pe))
			tree_exit(c, pe);
		if (size >= sizeof(*pe) && c->mode_syscall)
			collect_sys_exited(c, e->pid, e->comm, pe->sys_used);
		/*
		 * its times are never read again (a request's are taken at
		 * its end): without this, churn filled proc_times for good.
		 * A new process that took the pid meanwhile restarts its own.
		 */
		if (c->requests)
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.proc_times), &e->pid);
		break;
	}
	return 0;
}

/* Does the stack @pcs[0..@nr) end at an address no mapping of @img's snapshot holds? */
static bool stack_ends_unmapped(const struct proc_image *img, const uint64_t *pcs, size_t nr)
{
	uint64_t pc;

	if (!nr)
		return false;
	pc = pcs[nr - 1] & ~SYM_PC_EXACT;
	/* past the leaf, a pc without the flag is a return address: its call is before */
	if (nr > 1 && !(pcs[nr - 1] & SYM_PC_EXACT))
		pc--;
	return !sym_process_maps_code(img->sym, pc);
}

/* Unwind @in with image @img, re-reading the maps once if a pc had no module. */
static void unwind_sample(struct collect *c, struct proc_image *img,
			  const struct sym_unwind_input *in, uint64_t ts, uint64_t *pcs,
			  size_t *nr, enum sym_unwind_status *st)
{
	struct sym_process *before = img->sym;
	uint64_t now, every;

	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
	if (*st != SYM_UNWIND_NO_UNWIND_INFO)
		return;
	/*
	 * A library mapped since the last snapshot: look again, at most 10/s.
	 * A new image's snapshot may predate the loader's mappings, and now
	 * that its stacks are read as they come (collect_poll), the first
	 * ones meet that snapshot: in its first 200 ms, every 5 ms.
	 * A stack taken after the snapshot was read that ends outside every
	 * mapping of it met newer code: re-read at once, then every 1 ms
	 * while re-reads find new code (a loader mapping library after
	 * library), or as above once one found nothing new (a pc that is
	 * garbage). The reader takes queued stacks 30 us apart: waiting 5 ms
	 * there lost every stack of a program's first milliseconds in main
	 * (a CI run of test_syscall_fsync: 27 of its 100 fsyncs cut to
	 * 'fsync', after a re-read made while ld.so still mapped libc).
	 */
	now = now_ns();
	if (ts > img->snap_ns && !img->forced_same && stack_ends_unmapped(img, pcs, *nr))
		every = NSEC_PER_SEC / 1000;
	else if (now - img->first_ns < NSEC_PER_SEC / 5)
		every = NSEC_PER_SEC / 200;
	else
		every = NSEC_PER_SEC / 10;
	if (now - img->forced_refresh_ns < every)
		return;
	img->forced_refresh_ns = now;
	img->forced_same = proc_images_snapshot(&c->images, img->pid, img->gen) ||
			   img->sym == before;
	if (img->forced_same)
		return;
	symbolizer_unwind(c->sym, img->sym, in, pcs, LP_MAX_STACK_DEPTH, nr, st);
}

static int handle_ustack(struct collect *c, void *data, size_t size)
{
	const struct lp_ustack_sample *e = data;
	struct sym_unwind_input in = { .stack = e->stack };
	struct stackagg_key key = { 0 };
	struct stackagg_values v = {
		.value = e->value,
		.blocked_ns = e->blocked_ns,
		.preempted_ns = e->preempted_ns,
	};
	uint64_t pcs[LP_MAX_STACK_DEPTH], merged[LP_MAX_STACK_DEPTH + LP_PY_MAX_FRAMES];
	enum sym_unwind_status st = SYM_UNWIND_NO_UNWIND_INFO;
	struct proc_image *img;
	size_t nr = 0;

	if (size < LP_USTACK_HDR_SIZE || e->stack_len > size - LP_USTACK_HDR_SIZE ||
	    e->py_nr > LP_PY_MAX_FRAMES || (e->py_nr && size - LP_USTACK_HDR_SIZE <
	    LP_USTACK_PY_OFF(e) + e->py_nr * sizeof(struct lp_py_frame)))
		return 0;
	/* latprof's own fork before the command's exec: dropped (collect_build.c) */
	if (e->tgid == (uint32_t)c->command_pid && e->gen == 0)
		return 0;
	in.stack_len = e->stack_len;
	memcpy(in.regs, e->regs, sizeof(in.regs));
	/* names first: unwinding a new process's first stacks can take long */
	if (c->py) {
		python_probe(c, e->tgid, e->gen, false);
		pystacks_name(c->py, e->tgid, e->gen, e);
	}
	img = proc_images_find(&c->images, e->tgid, e->gen);
	if (!img || !img->sym) {
		proc_images_snapshot(&c->images, e->tgid, e->gen);
		img = proc_images_find(&c->images, e->tgid, e->gen);
	}
	if (img && img->sym) {
		unwind_sample(c, img, &in, e->ts, pcs, &nr, &st);
		proc_images_trim_later(&c->images, img);	/* if it ended */
	}
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
	key.wait = e->flags >> LP_USTACK_WAIT_SHIFT & 3;
	memcpy(key.comm, e->comm, sizeof(key.comm));
	if (e->flags & LP_USTACK_IN_FLIGHT)
		c->in_flight_reported++;
	if (c->py) {
		nr = pystacks_merge(c->py, e->tgid, e->gen, e, pcs, nr, merged,
				    ARRAY_SIZE(merged));
		return stackagg_add(c->ustacks, &key, merged, nr, &v) ? -ENOMEM : 0;
	}
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

static int handle_track(struct collect *c, void *data, size_t size)
{
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

/*
 * What a ring buffer callback returns after handling a record: past the
 * poll's budget, a value that makes libbpf stop (the record is consumed),
 * so a ring refilled as fast as it is read cannot keep the reader past a
 * deadline (collect_poll). After the stop, records beyond the last budget
 * are only counted (collect_detach).
 */
#define RB_BUDGET_SPENT (-ECANCELED)

typedef int (*record_fn)(struct collect *c, void *data, size_t size);

/* Handle one record with @fn, or only count it in @unread after the stop's budget. */
static int rb_record(struct collect *c, record_fn fn, uint64_t *unread, void *data,
		     size_t size)
{
	int err;

	if (c->skip_records) {
		(*unread)++;
		return 0;
	}
	err = fn(c, data, size);
	if (err < 0)
		return err;
	return c->poll_until_ns && now_ns() >= c->poll_until_ns ? RB_BUDGET_SPENT : 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_event, &c->events_unread, data, size);
}

static int on_ustack(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_ustack, &c->ustacks_unread, data, size);
}

static int on_track(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_track, &c->events_unread, data, size);
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

/*
 * @n, or less when the hidden LATPROF_DEBUG_MAX_ENTRIES=N caps it: the
 * reliability tests shrink the sample, stack, syscall and process maps so that
 * they overflow, to check that drops are counted and reported, never fatal.
 */
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

static uint32_t debug_max_entries(uint32_t n)
{
	const char *v = getenv("LATPROF_DEBUG_MAX_ENTRIES");
	uint64_t cap;

	if (v && !parse_u64(v, 1, UINT32_MAX, &cap) && cap < n)
		return cap;
	return n;
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
		err = bpf_map__set_max_entries(s->maps.proc_times,
					       !o->requests ? 1 :
					       collect_debug_lose("proc_times") ? 1 :
					       debug_max_entries(o->max_procs));
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
int collect_track_flush(struct collect *c)
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

/*
 * What the running kernel has that older ones lack and a program needs to
 * load at all (docs/kernels.md). Found by loading: the programs that use
 * them first, their fallbacks if the kernel refuses (see load()). Reading
 * the kernel's BTF to decide cost a second parse of it (libbpf's load makes
 * one): 15-18 ms of start-up. All arrived by 6.1 and are tried together;
 * the in-flight iterator loaded at stop (5.18: it copies stacks with
 * bpf_copy_from_user_task) follows c->features, the try that loaded.
 */
struct kernel_features {
	bool switch_prev_state;		/* 5.18: sched_switch's prev_state argument */
	bool bpf_loop;			/* 5.17: the Python thread search as a loop */
	bool alloc_on_use;		/* 6.1: perf_event programs may use a hash map
					 * that is not preallocated (the stacks map) */
};

/*
 * Which programs load: only those of the chosen collectors, as the kernel has
 * them. The in-flight iterator is loaded apart, at stop (in_flight_open).
 */
static void select_programs(struct collect *c, const struct kernel_features *f)
{
	struct latprof_bpf *s = c->skel;

	bpf_program__set_autoload(s->progs.on_cpu_sample, c->mode_cpu);
	bpf_program__set_autoload(s->progs.tp_sys_enter, c->sys_hooks && !c->sys_typed);
	bpf_program__set_autoload(s->progs.tp_sys_exit, c->sys_hooks && !c->sys_typed);
	bpf_program__set_autoload(s->progs.btf_sys_enter, c->sys_hooks && c->sys_typed);
	bpf_program__set_autoload(s->progs.btf_sys_exit, c->sys_hooks && c->sys_typed);
	bpf_program__set_autoload(s->progs.tp_sched_switch, c->mode_offcpu && f->switch_prev_state);
	bpf_program__set_autoload(s->progs.tp_sched_switch_nostate,
				  c->mode_offcpu && !f->switch_prev_state);
	bpf_program__set_autoload(s->progs.dump_in_flight, false);
	bpf_program__set_autoload(s->progs.dump_in_flight_nocopy, false);
}

static int configure(struct collect *c, const struct collect_opts *o,
		     const struct kernel_features *f)
{
	struct latprof_bpf *s = c->skel;
	int ncpu = libbpf_num_possible_cpus();
	size_t i;
	int err;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	select_programs(c, f);
	err = configure_track(c, o);
	if (err)
		return err;
	s->rodata->cfg_syscalls = o->mode_syscall;
	s->rodata->cfg_waits = c->sys_hooks && !o->no_waits;
	s->rodata->cfg_offcpu = o->mode_offcpu;
	s->rodata->cfg_syscall_min_ns = o->min_duration_ns;
	s->rodata->cfg_offcpu_min_ns = o->min_block_ns;
	s->rodata->cfg_sys_filter_on = o->nr_syscalls > 0;
	s->rodata->cfg_debug_lose_switch_in = collect_debug_lose("switch_in");
	for (i = 0; i < o->nr_syscalls; i++)
		if (o->syscalls[i] >= 0 && o->syscalls[i] < LP_MAX_SYSCALL_NR)
			s->rodata->cfg_sys_filter[o->syscalls[i]] = 1;
	/* scratch records: sampler, tracepoints (per CPU each), iterator */
	s->rodata->cfg_nr_cpus = ncpu;
	/* per-CPU stats blocks for the first processes, within the session's bytes */
	c->fast_slots = o->sys_fast_bytes /
			((size_t)ncpu * LP_MAX_SYSCALL_NR * sizeof(struct lp_sys_stat));
	if (c->fast_slots > LP_SYS_FAST_SLOTS)
		c->fast_slots = LP_SYS_FAST_SLOTS;
	if (!o->mode_syscall)
		c->fast_slots = 0;
	c->fast_drain = o->sys_fast_drain && c->fast_slots;
	pr_debug("syscall stats: %u blocks of the per-CPU array%s", c->fast_slots,
		 c->fast_drain ? ", handed back" : "");
	s->rodata->cfg_sys_fast_slots = c->fast_slots;
	s->rodata->cfg_sys_fast_drain = c->fast_drain;
	s->rodata->cfg_all = o->all;
	/* with -a, unwinding our own samples would feed on itself */
	s->rodata->cfg_self_tgid = getpid();
	s->rodata->cfg_nr_comms = o->nr_comms;
	for (i = 0; i < o->nr_comms && i < LP_MAX_COMMS; i++)
		strncpy((char *)s->rodata->cfg_comms[i], o->comms[i], LP_COMM_LEN - 1);
	s->rodata->cfg_unwind_dwarf = o->unwind_dwarf;
	s->rodata->cfg_python = c->py != NULL;
	s->rodata->cfg_bpf_loop = f->bpf_loop;
	s->rodata->cfg_stack_size = o->stack_size;
	/*
	 * Stacks are allocated as they come where the kernel allows it, so
	 * the cap costs nothing until used (about 1 KiB a stack); otherwise
	 * all are allocated at creation, and the cap is what it was with
	 * bpf_get_stackid's map: 4096 kernel stacks with DWARF (user stacks
	 * are copied), 16,384 kernel and user stacks with frame pointers.
	 */
	s->rodata->cfg_max_stacks = debug_max_entries(
		f->alloc_on_use ? o->max_stacks : MIN(o->max_stacks, o->unwind_dwarf ? 4096 : 16384));
	err = bpf_map__set_max_entries(s->maps.stacks, s->rodata->cfg_max_stacks);
	if (!err)
		err = bpf_map__set_map_flags(s->maps.stacks, f->alloc_on_use ? BPF_F_NO_PREALLOC : 0);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustack_scratch, 2 * ncpu + 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.ustacks, o->ustack_ring_bytes);
	/*
	 * Lifecycle events: 1 MiB holds a busy machine's second (-a, --comm:
	 * every process). A command and its children are read as they come:
	 * `xargs -P 4` running 3,000 /bin/true (190 processes a second) lost
	 * none in 256 KiB, beside two spinning loops too. Each ring's pages
	 * count twice in the resident set (mapped twice, for records that wrap).
	 */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.events, o->all || o->nr_comms ?
					       1024 * 1024 : 256 * 1024);
	/*
	 * The in-kernel aggregates, preallocated (the CPU sampler may not
	 * allocate), are sized to what the mode sends them: with DWARF stacks
	 * only kernel threads' CPU samples, and off-CPU intervals outside
	 * syscalls; without off-CPU, timed samples are frame-pointer stacks of
	 * slow syscalls only. Each 65,536-entry map took 2-3 ms to create.
	 */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cpu_samples, debug_max_entries(
			o->unwind_dwarf ? MIN(o->max_samples, 4096) : o->max_samples));
	/*
	 * From 6.1 the maps the sampler adds to are allocated on use too:
	 * creating cpu_samples (65,536 entries with frame pointers) and procs
	 * (32,768) whole took 2.2 and 1.4 ms of every start-up.
	 */
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.cpu_samples, BPF_F_NO_PREALLOC);
	if (!err && f->alloc_on_use)
		err = bpf_map__set_map_flags(s->maps.procs, BPF_F_NO_PREALLOC);
	/* maps of collectors that are off: as small as the kernel takes */
	if (!err && !c->py)
		err = bpf_map__set_max_entries(s->maps.py_procs, 1);
	if (!err && !c->py)
		err = bpf_map__set_max_entries(s->maps.py_tstates, ncpu);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.timed_samples, debug_max_entries(
			o->mode_offcpu || (!o->unwind_dwarf && o->mode_syscall) ? o->max_samples : 1));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_stats,
					       o->mode_syscall ? debug_max_entries(o->max_sys_stats) : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sys_fast, c->fast_slots ?
					       c->fast_slots * LP_MAX_SYSCALL_NR : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.procs, debug_max_entries(o->max_procs));
	/* waits.bpf.h's conversations, where the wait rule runs: 1.4 MiB, always whole */
	if (!err)
		err = bpf_map__set_max_entries(s->maps.convs, s->rodata->cfg_waits ?
					       debug_max_entries(COLLECT_CONVS) : 1);
	return err;
}

/*
 * The hidden LATPROF_DEBUG_VERIFIER=1: each program's verification time and
 * instructions processed (the kernel's BPF_LOG_STATS), printed after load
 * (@after) to stderr. Load time is start-up time; bench/README.md shows how
 * to read these.
 */
static void verifier_stats(struct bpf_object *obj, bool after)
{
	static char logs[16][512];
	const char *env = getenv("LATPROF_DEBUG_VERIFIER");
	struct bpf_program *prog;
	size_t i = 0;
	char *nl;

	if (!env || strcmp(env, "1"))
		return;
	bpf_object__for_each_program(prog, obj) {
		if (i >= ARRAY_SIZE(logs))
			break;
		if (!after) {
			logs[i][0] = '\0';
			bpf_program__set_log_level(prog, 4);	/* BPF_LOG_STATS */
			bpf_program__set_log_buf(prog, logs[i], sizeof(logs[i]));
		} else if (bpf_program__autoload(prog)) {
			while ((nl = strchr(logs[i], '\n')))
				*nl = ' ';
			fprintf(stderr, "latprof: verifier: %s: %s\n", bpf_program__name(prog), logs[i]);
		}
		i++;
	}
}

/*
 * A hash map allocated on use takes its elements from a per-CPU cache that
 * starts with one element (for elements this size) and is refilled from an
 * irq_work, after the program that emptied it returns. A sample's first
 * kernel and user stacks on a CPU are two (seen: 1-2 -ENOMEM per run, at
 * the start): one element taken here, from a syscall on each CPU, has the
 * kernel refill each cache before the programs run. Best effort.
 */
static void warm_stacks(struct collect *c)
{
	int fd = bpf_map__fd(c->skel->maps.stacks), cpu;
	struct lp_stack st = { 0 };
	cpu_set_t old, one;
	uint64_t key = UINT64_MAX;

	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		if (!bpf_map_update_elem(fd, &key, &st, BPF_NOEXIST))
			bpf_map_delete_elem(fd, &key);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * Open, configure and load the skeleton, with the newer kernels' features
 * (kernel_features) or without them, CO-RE against the minimized kernel BTF
 * c->btf_path when it is set (btfcache.h). 0 or -errno; on failure no
 * skeleton is left. @refuse makes the kernel refuse it.
 */
static int load_one(struct collect *c, const struct collect_opts *o, bool features, bool refuse,
		    const char **why)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = c->btf_path);
	struct kernel_features f = {
		.switch_prev_state = features,
		.bpf_loop = features,
		.alloc_on_use = features,
	};
	int err;

	*why = "cannot open BPF object";
	c->skel = latprof_bpf__open_opts(&opts);
	if (!c->skel)
		return -errno;
	syshooks_no_autoattach(c->skel->obj);
	*why = "cannot configure BPF maps";
	err = configure(c, o, &f);
	/* a map of no entries: the kernel refuses to create it */
	if (!err && refuse)
		err = bpf_map__set_max_entries(c->skel->maps.stacks, 0);
	if (!err) {
		*why = "cannot load BPF programs (see docs/troubleshooting.md)";
		verifier_stats(c->skel->obj, false);
		err = latprof_bpf__load(c->skel);
		verifier_stats(c->skel->obj, true);
	}
	if (err) {
		latprof_bpf__destroy(c->skel);
		c->skel = NULL;
	}
	c->features = features;
	return err;
}

/*
 * Load with the features, then without them, until the kernel takes one (the
 * first only when @features). 0 or -errno of the last. Only the last try's
 * failure is reported, and not even that one with a cached BTF (a second
 * pass without it follows); the others' libbpf warnings show with -v.
 */
static int load_tries(struct collect *c, const struct collect_opts *o, bool features, bool refuse,
		      const char **why)
{
	bool typed, refused = false;
	int err = -EINVAL;

	if (features) {
		libbpf_quiet = true;
		/* the tp_btf syscall hooks first, where they can load (syshooks.h) */
		typed = c->sys_hooks && !refuse && syshooks_typed_usable(c->btf_path);
		c->sys_typed = typed;
		if (typed) {
			err = load_one(c, o, true, false, why);
			if (err) {
				pr_debug("BPF load with the tp_btf syscall hooks failed (%s): trying raw_tp",
					 strerror(-err));
				c->sys_typed = false;
				/* the kernel refused them, not a moment's lack of memory */
				refused = err == -EINVAL || err == -EACCES || err == -ENOENT;
			}
		}
		if (!c->sys_typed)
			err = load_one(c, o, true, refuse, why);
		libbpf_quiet = false;
		/* tp_btf refused where raw_tp loads: later runs go to raw_tp at once */
		if (!err && refused) {
			btfcache_drop_ids(c->btf_path);
			pr_debug("%s.ids removed", c->btf_path);
		}
		if (!err)
			return 0;
		pr_debug("BPF load with the newer kernels' features failed (%s): trying without them",
			 strerror(-err));
	}
	libbpf_quiet = c->btf_path != NULL;
	err = load_one(c, o, false, refuse && !features, why);
	libbpf_quiet = false;
	return err;
}

/*
 * Open, configure and load the skeleton, without the newer kernels' features
 * (kernel_features: 5.17, 5.18, 6.1; every mode uses the stacks map's) when
 * the kernel refuses them. The hidden LATPROF_DEBUG_OLD_KERNEL=1 starts
 * without them, so that their fallbacks are tested on new kernels too
 * (=refuse: the first try is made one that the kernel refuses, to test the
 * fallback itself).
 *
 * No program loaded here needs the kernel's whole BTF to attach (raw_tp,
 * perf_event; the in-flight iterator is loaded at stop), so with a cached
 * minimized BTF for CO-RE (btfcache.h) libbpf never reads the 5 MB file.
 * Without one it does, and the cache file is made in the background for the
 * next run. Should loading fail with the cached file, it is tried again
 * without it, and the file goes if that works.
 */
static int load(struct collect *c, const struct collect_opts *o, const char **why)
{
	const char *old = getenv("LATPROF_DEBUG_OLD_KERNEL");
	/* "refuse": the kernel refuses the first try (tests/e2e/test_syscall_sleep.sh) */
	bool refuse = old && !strcmp(old, "refuse");
	bool features = !(old && *old && strcmp(old, "0") && !refuse);
	char btf[PATH_MAX];
	size_t len;
	const void *obj = latprof_bpf__elf_bytes(&len);
	int err;

	err = syshooks_register();
	if (err) {
		pr_warn("cannot register the syscall hooks' BPF section with libbpf: %s",
			strerror(-err));
		return err;
	}
	if (btfcache_lookup(obj, len, btf, sizeof(btf))) {
		pr_debug("kernel BTF for CO-RE: %s", btf);
		c->btf_path = strdup(btf);
	}
	err = load_tries(c, o, features, refuse, why);
	if (err && c->btf_path) {
		pr_debug("BPF load failed with %s: again with the kernel's whole BTF", btf);
		free(c->btf_path);
		c->btf_path = NULL;
		err = load_tries(c, o, features, refuse, why);
		if (!err)
			btfcache_drop(btf);
	}
	if (err)
		return err;
	if (!c->btf_path && *btf && btfcache_build(obj, len, btf) == 0)
		pr_debug("making %s in the background (bpftool gen min_core_btf)", btf);
	if (c->features)
		warm_stacks(c);
	else
		pr_debug("kernel without bpf_copy_from_user_task or sched_switch's prev_state (5.18), or stack maps allocated on use (6.1): calls in flight at stop keep only their innermost user frame, off-CPU reads the task's state; the Python thread search is unrolled (slower to load); the stack map is allocated whole, for fewer stacks");
	return 0;
}

/*
 * A ring of its own for @map: one ring_buffer each, so that a ring which
 * spends its share of a poll's budget leaves the others theirs (libbpf
 * stops at a callback's error, before the rings after it). 0 or -errno.
 */
static int add_ring(struct collect *c, struct bpf_map *map, ring_buffer_sample_fn fn)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring_buffer *rb;

	if (c->nr_rings == COLLECT_RINGS)
		return -E2BIG;
	rb = ring_buffer__new(bpf_map__fd(map), fn, c, NULL);
	if (!rb)
		return -errno;
	c->rings[c->nr_rings++] = rb;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(rb), &ev))
		return -errno;
	return 0;
}

/*
 * Read every ring, for at most @budget_ns in all: each in turn gets an
 * equal share of what is left, the first one changing every call. Returns
 * true when a ring was left with records (its share spent), or -errno.
 */
static int consume_rings(struct collect *c, uint64_t budget_ns)
{
	uint64_t end = now_ns() + budget_ns, now;
	size_t k, i, left;
	bool spent = false;
	int n;

	for (k = 0; k < c->nr_rings; k++) {
		i = (c->ring_next + k) % c->nr_rings;
		left = c->nr_rings - k;
		now = now_ns();
		c->poll_until_ns = now + (end > now ? (end - now) / left : 0) + 1;
		n = ring_buffer__consume(c->rings[i]);
		if (n == RB_BUDGET_SPENT)
			spent = true;
		else if (n < 0 && n != -EINTR) {
			c->poll_until_ns = 0;
			return n;
		}
	}
	c->ring_next++;
	c->poll_until_ns = 0;
	return spent;
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
	c->epfd = -1;
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
	proc_tree_init(&c->procs, COLLECT_MAX_PROCS, COLLECT_MAX_MEM_SAMPLES);
	c->proc_fn = o->proc_fn;
	c->proc_arg = o->proc_arg;
	c->ustacks = stackagg_new();
	if (!c->ustacks || iotrack_init(&c->io, "/proc"))
		goto fail;
	/* Python frames ride on copied stacks; serve's metrics session has none */
	if (o->unwind_dwarf && !o->no_python && !o->proc_fn) {
		c->py = pystacks_new(o->debug_dirs, o->nr_debug_dirs);
		if (!c->py)
			goto fail;
		c->images.refreshed = python_refreshed;
		c->images.refreshed_arg = c;
	}
	libbpf_set_print(libbpf_print);
	*err = load(c, o, why);
	if (*err)
		goto fail;
	c->images.current = image_current;
	c->images.current_arg = c;
	*why = "cannot create ring buffer";
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	*err = c->epfd < 0 ? -errno : add_ring(c, c->skel->maps.events, on_event);
	/* in-flight syscalls send copied stacks even with --unwind fp */
	if (!*err && (o->unwind_dwarf || c->sys_hooks || c->mode_offcpu))
		*err = add_ring(c, c->skel->maps.ustacks, on_ustack);
	if (!*err && (o->requests || o->files || o->net))
		*err = add_ring(c, c->skel->maps.track, on_track);
	if (*err)
		goto fail;
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

int collect_add_command(struct collect *c, pid_t pid, const char *file)
{
	char path[4096];

	if (c->py && command_path(file, path, sizeof(path)))
		pystacks_prepare(c->py, path);
	c->command_pid = pid;
	return collect_add_pid(c, pid);
}

/*
 * Hand a free block of the per-CPU syscall stats to @pid, as fast_slot_alloc()
 * does in BPF; only before attach, when no program can race with us.
 */
static uint32_t fast_slot_alloc(struct collect *c, pid_t pid)
{
	int fd = bpf_map__fd(c->skel->maps.fast_slots);
	uint32_t key, owner;

	for (key = 1; key <= c->fast_slots; key++)
		if (!bpf_map_lookup_elem(fd, &key, &owner) && !owner) {
			owner = pid;
			return bpf_map_update_elem(fd, &key, &owner, BPF_ANY) ? 0 : key;
		}
	return 0;
}

int collect_add_pid(struct collect *c, pid_t pid)
{
	struct lp_proc zero = { .fast_slot = fast_slot_alloc(c, pid) };
	struct proc_image *img;
	struct proc_info *pi;
	uint32_t key = pid;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.procs), &key, &zero, BPF_ANY))
		return -errno;
	/* the programs' first check (latprof.h): in the mmap'ed .bss they read */
	__atomic_fetch_or(&c->skel->bss->lp_target_bits[(key / 64) & (LP_TARGET_WORDS - 1)],
			  1ULL << (key & 63), __ATOMIC_RELAXED);
	/*
	 * The held command is latprof's own fork until its exec (generation
	 * 0, whose samples are dropped): reading its maps and opening its
	 * libraries here took 5-8 ms of every start-up, for nothing.
	 */
	if (pid != c->command_pid) {
		proc_images_snapshot(&c->images, pid, 0);
		/* before recording starts: the interpreter's DWARF is read now */
		python_probe(c, pid, 0, true);
	}
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

/* The syscall hooks' tp_btf builds, which the skeleton does not attach. */
static int attach_typed(struct collect *c)
{
	struct bpf_program *progs[] = { c->skel->progs.btf_sys_enter, c->skel->progs.btf_sys_exit };
	struct bpf_link *link;
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (array_grow(&c->links, c->links.nr + 1))
			return -ENOMEM;
		link = syshooks_attach(progs[i]);
		if (!link && errno == ESRCH) {
			pr_err("the cached kernel BTF ids put %s on another tracepoint: %s removed, the next run makes it again",
			       bpf_program__name(progs[i]), c->btf_path);
			btfcache_drop(c->btf_path);
			/* nothing was recorded; the iterator would load with the file gone */
			c->in_flight_done = true;
			return -ESTALE;
		}
		if (!link)
			return -errno;
		c->links.items[c->links.nr++] = link;
	}
	return 0;
}

int collect_attach(struct collect *c)
{
	bool *online = NULL;
	int nr = 0, cpu, err;

	/* lifecycle tracking first, so no fork between the two is missed */
	err = latprof_bpf__attach(c->skel);
	if (!err && c->sys_typed)
		err = attach_typed(c);
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
	struct epoll_event ev[COLLECT_RINGS];
	uint64_t now;
	int n;

	if (!c->nr_rings) {	/* detached */
		usleep(timeout_ms * 1000);
		return 0;
	}
	/*
	 * A Python process's code objects are named from its memory when its
	 * stacks are read: a module body runs for milliseconds and is freed
	 * after its import, so while one is walked its stacks are read at
	 * least every 10 ms.
	 */
	if (c->py_walked && timeout_ms > PYTHON_POLL_MS)
		timeout_ms = PYTHON_POLL_MS;
	n = epoll_wait(c->epfd, ev, COLLECT_RINGS, proc_images_refresh(&c->images, timeout_ms));
	if (n < 0 && errno != EINTR)
		return -errno;
	/*
	 * Every ring is read, not only those that woke the reader: the user
	 * stacks wake it only when a quarter of their ring is full
	 * (ustack_wakeup_flag), and a program that mostly waits would have its
	 * few stacks read at stop, after it exited, too late to name its
	 * Python code objects. For COLLECT_POLL_BUDGET_MS at most: on a busy
	 * machine the rings refill as fast as they are read and the caller's
	 * deadline and timeline ticks must still come.
	 */
	n = consume_rings(c, COLLECT_POLL_BUDGET_MS * 1000000ULL);
	proc_images_trim(&c->images);
	/* exits whose events were lost leave their statistics behind */
	now = now_ns();
	if (c->mode_syscall && !c->proc_fn && now - c->last_sweep_ns >= NSEC_PER_SEC) {
		c->last_sweep_ns = now;
		collect_sys_sweep(c);
	}
	return n < 0 ? n : 0;
}

/*
 * The in-flight iterator, loaded at stop into a second instance of the BPF
 * object whose maps are the recording's (reused by name): an iterator needs
 * the kernel's whole BTF to attach, which libbpf 1.1 reads and copies (20 ms
 * and 10 MB, docs/performance.md), so the start-up and the recording do not
 * pay for it. The one that copies user stacks (5.18) when the recording's
 * load had the newer features. NULL when it does not load.
 */
static struct latprof_bpf *in_flight_open(struct collect *c, struct bpf_program **prog)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = c->btf_path);
	struct latprof_bpf *it = latprof_bpf__open_opts(&opts);
	struct bpf_program *p;
	struct bpf_map *m, *ours;
	int err = 0;

	if (!it)
		return NULL;
	*prog = c->features ? it->progs.dump_in_flight : it->progs.dump_in_flight_nocopy;
	bpf_object__for_each_program(p, it->obj)
		bpf_program__set_autoload(p, p == *prog);
	bpf_object__for_each_map(m, it->obj) {
		ours = bpf_object__find_map_by_name(c->skel->obj, bpf_map__name(m));
		if (ours && bpf_map__fd(ours) >= 0)
			err = bpf_map__reuse_fd(m, bpf_map__fd(ours));
		else
			err = bpf_map__set_autocreate(m, false);
		if (err)
			break;
	}
	if (!err)
		err = latprof_bpf__load(it);
	if (err) {
		latprof_bpf__destroy(it);
		errno = -err;
		return NULL;
	}
	return it;
}

/*
 * Run the in-flight iterator once: every target thread still in a syscall or
 * off CPU at stop_ns reports its time so far. Needs the other programs
 * detached, or a syscall ending now would be counted twice.
 */
static void report_in_flight(struct collect *c)
{
	struct latprof_bpf *it;
	struct bpf_program *prog;
	struct bpf_link *link;
	char buf[64];
	int fd;

	if (c->in_flight_done || !(c->sys_hooks || c->mode_offcpu))
		return;
	c->in_flight_done = true;
	it = in_flight_open(c, &prog);
	link = it ? bpf_program__attach_iter(prog, NULL) : NULL;
	if (!link) {
		pr_warn("cannot report syscalls in flight: %s", strerror(errno));
		latprof_bpf__destroy(it);
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
	latprof_bpf__destroy(it);
}

void collect_stop_read_all(struct collect *c, bool all)
{
	c->stop_read_all = all;
}

static void free_rings(struct collect *c)
{
	while (c->nr_rings)
		ring_buffer__free(c->rings[--c->nr_rings]);
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
	/*
	 * Records already in the rings still count, those read within
	 * COLLECT_STOP_READ_MS; the rest of a backlog a busy machine left is
	 * counted as unread (lost.*_unread), so the stop comes on time.
	 */
	if (c->nr_rings && !c->skip_records) {
		if (consume_rings(c, (c->stop_read_all ? 3600 * 1000ULL : COLLECT_STOP_READ_MS) *
				  1000000ULL) == 1) {
			c->skip_records = true;
			consume_rings(c, 0);
		}
		if (c->events_unread || c->ustacks_unread)
			pr_warn("the stop left %" PRIu64 " process events and %" PRIu64
				" stacks unread: the machine made them faster than they were read",
				c->events_unread, c->ustacks_unread);
	}
	/* nothing more comes: the rings' pages go before the profile is built */
	free_rings(c);
}

/*
 * The hidden LATPROF_DEBUG_LOSE=WHAT[,WHAT...] makes a loss that cannot be
 * provoked from outside happen, for the tests that check it is counted:
 * "stats" (the kernel's counters cannot be read), "stacks" (the stack map
 * loses its entries before the profile is built), "switch_in" (sched_switch
 * never ends an off-CPU interval: each is lost, lost.offcpu_unmatched),
 * "proc_times" (--requests keeps one process's times: the others' are
 * lost, lost.process_times_dropped_map_full).
 */
bool collect_debug_lose(const char *what)
{
	const char *v = getenv("LATPROF_DEBUG_LOSE");
	size_t n = strlen(what);

	for (; v && *v; v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL)
		if (!strncmp(v, what, n) && (v[n] == ',' || !v[n]))
			return true;
	return false;
}

_Static_assert(LP_STAT_NR <= 32, "a bit per counter in collect_read_stats");

uint32_t collect_read_stats(struct collect *c, struct collect_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.stats);
	uint64_t *vals = ncpu > 0 ? calloc(ncpu, sizeof(*vals)) : NULL;
	bool fail = collect_debug_lose("stats");
	uint32_t k, unread = 0;
	int i;

	memset(st, 0, sizeof(*st));
	for (k = 0; k < LP_STAT_NR; k++) {
		if (!vals || fail || bpf_map_lookup_elem(fd, &k, vals)) {
			unread |= 1U << k;
			continue;
		}
		for (i = 0; i < ncpu; i++)
			st->stat[k] += vals[i];
	}
	free(vals);
	st->procs_seen = proc_images_nr_processes(&c->images);
	st->snapshot_failed = c->images.snapshot_failed;
	return unread;
}

void collect_get_stats(struct collect *c, struct collect_stats *st)
{
	collect_read_stats(c, st);
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_detach(c);
	free_rings(c);
	if (c->epfd >= 0)
		close(c->epfd);
	latprof_bpf__destroy(c->skel);
	free(c->btf_path);
	free(c->links.items);
	free(c->perf_fds.items);
	proc_images_release(&c->images);
	proc_tree_release(&c->procs);
	stackagg_free(c->ustacks);
	pystacks_free(c->py);
	iotrack_release(&c->io);
	collect_free_stacks(c);
	collect_sys_exited_free(c);
	collect_fast_free(c);
	free(c->reqs.items);
	free(c);
}
