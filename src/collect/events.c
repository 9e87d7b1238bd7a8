// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ring buffers, read while recording (collect_poll) and at the stop: the
 * targets' lifecycle events (the process tree, image snapshots for the
 * symbolizer, Python interpreters to walk), the copied user stacks, unwound
 * and aggregated, and the request and file tracking records.
 */
#include "src/collect/priv.h"

#include <sys/epoll.h>

/* the longest wait between two reads of the stacks of a Python process */
#define PYTHON_POLL_MS 10

/* @pi's command line from /proc (a process found by name, a -p target). */
void collect_proc_read_cmdline(struct proc_info *pi)
{
	char path[64], *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pi->pid);
	if (!read_file(path, &buf, &len))
		proc_info_set_cmdline(pi, buf, len);
	free(buf);
}

/* The parent of @pid from /proc/PID/status, 0 if unknown. */
uint32_t collect_proc_read_ppid(uint32_t pid)
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

	pi = proc_tree_start(&c->procs, e->pid, e->ppid ? e->ppid : collect_proc_read_ppid(e->pid),
			     e->time_ns, e->comm);
	if (pi && !pi->cmdline && cmdline)
		proc_info_set_cmdline(pi, cmdline, strlen(cmdline));
	else if (pi && !pi->cmdline)
		collect_proc_read_cmdline(pi);
	free(cmdline);
}

static void tree_exec(struct collect *c, const struct lp_proc_event *e)
{
	struct proc_info *pi = proc_tree_find(&c->procs, e->e.pid);

	if (!pi || pi->ended)
		pi = proc_tree_start(&c->procs, e->e.pid, collect_proc_read_ppid(e->e.pid), e->e.time_ns,
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
		collect_proc_read_cmdline(pi);
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
 * py_procs changed: the threads' copies of their process's GIL (struct
 * lp_task's gil) are read again at their next futex call (bpf/gil.bpf.h).
 */
static void python_gil_changed(struct collect *c)
{
	__atomic_fetch_add(&c->skel->bss->lp_gil_epoch, 1, __ATOMIC_RELEASE);
}

/*
 * Look for a Python interpreter in (@pid, @gen) and let the BPF walk know.
 * Called at its first sight and with its samples, because libpython is
 * mapped after the exec that made the process (pystacks rate-limits).
 */
void collect_python_probe(struct collect *c, pid_t pid, uint32_t gen, bool wait)
{
	struct lp_py_proc pp;
	uint32_t key = pid;

	if (!c->py || pystacks_probe(c->py, pid, gen, wait, &pp) != 1)
		return;
	if (c->awaits)
		awaits_add(c->awaits, pid, gen);
	if (!bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_NOEXIST))
		c->py_walked++;
	else if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_ANY))
		pr_debug("pid %d: cannot walk Python frames: %s", pid, strerror(errno));
	python_gil_changed(c);
}

/* The maps of (@pid, @gen) were re-read: libpython may be there now. */
void collect_python_refreshed(void *arg, pid_t pid, uint32_t gen)
{
	collect_python_probe(arg, pid, gen, false);
}

/* Whether image @gen of @pid is not yet replaced by an exec (procimg.h). */
bool collect_image_current(void *arg, pid_t pid, uint32_t gen)
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
	if (c->awaits)
		awaits_forget(c->awaits, pid, gen);
	if (gen && pystacks_walkable(c->py, pid, gen, &pp))
		bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &key, &pp, BPF_ANY);
	else if (!bpf_map_delete_elem(bpf_map__fd(c->skel->maps.py_procs), &key) && c->py_walked)
		c->py_walked--;
	python_gil_changed(c);
}

/* An event loop's stall: kept for the profile, or passed to serve's metrics. */
static int handle_stall(struct collect *c, const struct lp_stall_event *se)
{
	struct stall st = {
		.pid = se->e.pid, .tid = se->tid, .duration_ns = se->dur_ns,
		.start_ns = se->e.time_ns - se->dur_ns,
		.flags = se->flags & LP_STALL_IN_FLIGHT ? STALL_IN_FLIGHT : 0,
	};

	if (c->o.stall_fn) {
		c->o.stall_fn(c->o.proc_arg, se->e.pid, se->e.comm, se->dur_ns);
		return 0;
	}
	if (c->stalls.nr >= COLLECT_MAX_STALLS) {
		c->stalls_dropped++;
		return 0;
	}
	return stalls_add(&c->stalls, &st);
}

static int handle_event(struct collect *c, void *data, size_t size)
{
	const struct lp_event *e = data;
	const struct lp_proc_event *pe = data;
	struct proc_image *img;

	if (size < sizeof(*e))
		return 0;
	if (e->type == LP_EVENT_STALL)
		return size >= sizeof(struct lp_stall_event) ? handle_stall(c, data) : 0;
	if (c->o.proc_fn)
		c->o.proc_fn(c->o.proc_arg, e->type, e->pid, e->comm);
	if (c->o.proc_events_only)
		return 0;
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
		collect_python_probe(c, e->pid, e->gen, false);
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
		/* drained: the next drain takes them, as any process's */
		if (size >= sizeof(*pe) && c->o.cli.modes.syscall && !c->o.sys_fast_drain)
			collect_sys_exited(c, e->pid, e->comm, pe->sys_used);
		/*
		 * its times are never read again (a request's are taken at
		 * its end): without this, churn filled proc_times for good.
		 * A new process that took the pid meanwhile restarts its own.
		 */
		if (c->o.cli.requests)
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
		/* a slow syscall's durations by stack: a call site's percentiles */
		.hist = e->kind == LP_SAMPLE_SYSCALL,
	};
	uint64_t pcs[LP_MAX_STACK_DEPTH], merged[LP_MAX_STACK_DEPTH + LP_PY_MAX_FRAMES];
	enum sym_unwind_status st = SYM_UNWIND_NO_UNWIND_INFO;
	struct proc_image *img;
	size_t nr = 0;

	if (size < LP_USTACK_HDR_SIZE || e->stack_len > size - LP_USTACK_HDR_SIZE ||
	    e->py_nr > LP_PY_MAX_FRAMES || (e->py_nr && size - LP_USTACK_HDR_SIZE <
	    LP_USTACK_PY_OFF(e) + e->py_nr * sizeof(struct lp_py_frame)))
		return 0;
	/* latprof's own fork before the command's exec: dropped (build.c) */
	if (e->tgid == (uint32_t)c->command_pid && e->gen == 0)
		return 0;
	in.stack_len = e->stack_len;
	memcpy(in.regs, e->regs, sizeof(in.regs));
	/* names first: unwinding a new process's first stacks can take long */
	if (c->py) {
		collect_python_probe(c, e->tgid, e->gen, false);
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
	key.gil = !!(e->flags & LP_USTACK_GIL);
	memcpy(key.comm, e->comm, sizeof(key.comm));
	if (e->flags & LP_USTACK_IN_FLIGHT)
		c->in_flight_reported++;
	/* a CPU sample stands for its period; a slow syscall for its time */
	if (e->flags & LP_USTACK_IN_STALL)
		v.stall_ns = e->kind == LP_SAMPLE_CPU ? NSEC_PER_SEC / c->o.cli.freq_hz : e->value;
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
int collect_track_request(struct collect *c, uint32_t tgid, int32_t fd, const struct lp_conn *conn)
{
	struct request_raw *r;

	if (!conn->start_ns)
		return 0;
	if (!conn->end_ns) {
		c->reqs_unanswered++;
		return 0;
	}
	if (c->reqs.nr >= c->o.cli.max_requests) {
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
			return collect_track_request(c, req->tgid, req->fd, &req->conn);
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

int collect_on_event(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_event, &c->events_unread, data, size);
}

int collect_on_ustack(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_ustack, &c->ustacks_unread, data, size);
}

int collect_on_track(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;

	return rb_record(c, handle_track, &c->events_unread, data, size);
}

/*
 * A ring of its own for @map: one ring_buffer each, so that a ring which
 * spends its share of a poll's budget leaves the others theirs (libbpf
 * stops at a callback's error, before the rings after it). 0 or -errno.
 */
int collect_add_ring(struct collect *c, struct bpf_map *map, ring_buffer_sample_fn fn)
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
int collect_consume_rings(struct collect *c, uint64_t budget_ns)
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
	/* the next walk of asyncio tasks is due then */
	if (c->awaits) {
		int due = awaits_due_ms(c->awaits, now_ns());

		if (due >= 0 && due < timeout_ms)
			timeout_ms = due;
	}
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
	n = collect_consume_rings(c, COLLECT_POLL_BUDGET_MS * 1000000ULL);
	proc_images_trim(&c->images);
	if (c->awaits && n >= 0)
		n = awaits_tick(c->awaits, now_ns());
	/* exits whose events were lost leave their statistics behind */
	now = now_ns();
	if (c->o.cli.modes.syscall && !c->o.sys_fast_drain &&
	    now - c->last_sweep_ns >= NSEC_PER_SEC) {
		c->last_sweep_ns = now;
		collect_sys_sweep(c);
	}
	return n < 0 ? n : 0;
}

void collect_stop_read_all(struct collect *c, bool all)
{
	c->stop_read_all = all;
}

void collect_free_rings(struct collect *c)
{
	while (c->nr_rings)
		ring_buffer__free(c->rings[--c->nr_rings]);
}
