/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Requests, files and network peers, found at the syscall level (record
 * --requests, --files, --net). Used by syscall.bpf.c only, which defines
 * the maps and configuration declared here: everything here runs from its
 * sys_exit, on the arguments sys_enter saved, and costs nothing when the
 * three options are off (cfg_track is a constant the verifier prunes on).
 *
 * requests: a descriptor returned by accept/accept4 is a connection (conns);
 * its first read returning bytes opens a request, its writes extend it, and
 * the next read with bytes (keep-alive) or close ends it. Each thread and
 * process keeps cumulative times (CPU, syscall time by category); a request
 * carries snapshots at its start and end and user space takes differences.
 *
 * files/net: opens by path and inet sockets from connect/accept are tracked
 * per (tgid, fd) in fdstats, dup'ed copies included; the totals go to user
 * space at close (or at stop, from the map). Paths and peers are sent once,
 * at open/connect/accept.
 */
#ifndef LATPROF_TRACK_BPF_H
#define LATPROF_TRACK_BPF_H

#include "common.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define EINPROGRESS 115
#define AT_FDCWD -100
#define F_DUPFD 0
#define F_DUPFD_CLOEXEC 1030

/* x86-64 syscall numbers (asm/unistd_64.h) */
enum {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_close = 3, NR_fstat = 5, NR_lseek = 8,
	NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20, NR_dup = 32,
	NR_dup2 = 33, NR_sendfile = 40, NR_connect = 42, NR_accept = 43, NR_sendto = 44,
	NR_recvfrom = 45, NR_sendmsg = 46, NR_recvmsg = 47, NR_fcntl = 72, NR_fsync = 74,
	NR_fdatasync = 75, NR_ftruncate = 77, NR_creat = 85, NR_getdents64 = 217,
	NR_openat = 257, NR_accept4 = 288, NR_dup3 = 292, NR_preadv = 295, NR_pwritev = 296,
	NR_preadv2 = 327, NR_pwritev2 = 328, NR_openat2 = 437,
};

extern const volatile __u32 cfg_track;	/* any of the three below */
extern const volatile __u32 cfg_requests;	/* --requests */
extern const volatile __u32 cfg_files;	/* --files */
extern const volatile __u32 cfg_net;	/* --net */
/* enum lp_req_cat of each syscall number, filled by user space */
extern const volatile __u8 cfg_sys_cat[LP_MAX_SYSCALL_NR];

extern __u64 next_fd_id;	/* ids of opens and connections */

struct conns_map {	/* accepted connections: the request open on each */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* resized by user space before load */
	__type(key, struct lp_fd_key);
	__type(value, struct lp_conn);
};

struct proc_times_map {	/* tgid -> the process's cumulative times */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* resized by user space before load */
	__type(key, __u32);
	__type(value, struct lp_proc_times);
};

struct fdstats_map {	/* tracked descriptors' I/O */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* resized by user space before load */
	__type(key, struct lp_fd_key);
	__type(value, struct lp_fdstat);
};

struct track_map {	/* requests, opens, peers and closes for user space */
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* resized by user space before load */
};

/* defined in syscall.bpf.c */
extern struct conns_map conns SEC(".maps");
extern struct proc_times_map proc_times SEC(".maps");
extern struct fdstats_map fdstats SEC(".maps");
extern struct track_map track SEC(".maps");

/* What a syscall does to a descriptor, for the tracker. */
enum track_op {
	TRACK_NONE,
	TRACK_READ,	/* arg0 = fd, returns bytes read */
	TRACK_WRITE,	/* arg0 = fd, returns bytes written */
	TRACK_IO,	/* arg0 = fd, time only (fstat, lseek, fsync ...) */
	TRACK_CLOSE,
	TRACK_ACCEPT,
	TRACK_CONNECT,
	TRACK_OPEN,	/* returns a new fd; path in arg0 */
	TRACK_OPENAT,	/* returns a new fd; dirfd in arg0, path in arg1 */
	TRACK_DUP,	/* returns a copy of arg0 */
	TRACK_FCNTL,	/* a dup when arg1 is F_DUPFD(_CLOEXEC) */
	TRACK_SENDFILE,	/* out fd arg0, in fd arg1 */
};

static __always_inline enum track_op track_op_of(__s32 nr)
{
	switch (nr) {
	case NR_read: case NR_readv: case NR_recvfrom: case NR_recvmsg:
	case NR_pread64: case NR_preadv: case NR_preadv2:
		return TRACK_READ;
	case NR_write: case NR_writev: case NR_sendto: case NR_sendmsg:
	case NR_pwrite64: case NR_pwritev: case NR_pwritev2:
		return TRACK_WRITE;
	case NR_fstat: case NR_lseek: case NR_fsync: case NR_fdatasync: case NR_ftruncate:
	case NR_getdents64:
		return TRACK_IO;
	case NR_close:
		return TRACK_CLOSE;
	case NR_accept: case NR_accept4:
		return TRACK_ACCEPT;
	case NR_connect:
		return TRACK_CONNECT;
	case NR_open: case NR_creat:
		return TRACK_OPEN;
	case NR_openat: case NR_openat2:
		return TRACK_OPENAT;
	case NR_dup: case NR_dup2: case NR_dup3:
		return TRACK_DUP;
	case NR_fcntl:
		return TRACK_FCNTL;
	case NR_sendfile:
		return TRACK_SENDFILE;
	}
	return TRACK_NONE;
}

static __always_inline void times_copy(struct lp_times *to, const struct lp_times *from)
{
	int i;

	to->cpu_ns = from->cpu_ns;
	to->utime_ns = from->utime_ns;
	to->stime_ns = from->stime_ns;
	for (i = 0; i < LP_REQ_CAT_NR; i++)
		to->cat_ns[i] = from->cat_ns[i];
}

/* The process's times, created on first use; NULL when the map is full. */
static __always_inline struct lp_proc_times *proc_times_get(__u32 tgid)
{
	static const struct lp_proc_times zero;	/* too big for the BPF stack */

	return map_lookup_or_init(&proc_times, &tgid, &zero, NULL);
}

/* The part of @d that fits in @since. */
static __always_inline __u64 clip(__u64 d, __u64 since)
{
	return d < since ? d : since;
}

/*
 * Charge a syscall of @dur ns in category @cat to the thread and its
 * process, and the thread's CPU since its last charge to the process. The
 * process's share is clipped to the time since its last snapshot: a long
 * wait that began before then (an idle worker's futex) belongs to earlier
 * intervals.
 */
static __always_inline void times_charge(struct task_struct *task, struct lp_task *t,
					 __u64 now, __u64 dur, __u32 cat)
{
	__u64 cpu = BPF_CORE_READ(task, se.sum_exec_runtime), dcpu, since;
	__u64 ut = BPF_CORE_READ(task, utime), st = BPF_CORE_READ(task, stime), du, ds;
	struct lp_proc_times *pt;

	if (cat >= LP_REQ_CAT_NR)
		cat = LP_REQ_CAT_OTHER;
	t->times.cat_ns[cat] += dur;
	dcpu = t->cpu_seen && cpu > t->cpu_seen ? cpu - t->cpu_seen : 0;
	du = t->cpu_seen && ut > t->utime_seen ? ut - t->utime_seen : 0;
	ds = t->cpu_seen && st > t->stime_seen ? st - t->stime_seen : 0;
	t->cpu_seen = cpu;
	t->utime_seen = ut;
	t->stime_seen = st;
	pt = proc_times_get(t->tgid);
	if (!pt) {
		stat_inc(LP_STAT_PROC_TIMES_DROPPED);
		return;
	}
	since = now > pt->mark_ns ? now - pt->mark_ns : 0;
	__sync_fetch_and_add(&pt->times.cpu_ns, clip(dcpu, since));
	__sync_fetch_and_add(&pt->times.utime_ns, clip(du, since));
	__sync_fetch_and_add(&pt->times.stime_ns, clip(ds, since));
	__sync_fetch_and_add(&pt->times.cat_ns[cat], clip(dur, since));
}

/* Snapshot the thread (its CPU as of now) and its process. */
static __always_inline void times_snap(struct task_struct *task, struct lp_task *t, __u64 now,
				       struct lp_times *thread, struct lp_times *proc)
{
	struct lp_proc_times *pt = bpf_map_lookup_elem(&proc_times, &t->tgid);

	times_copy(thread, &t->times);
	thread->cpu_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	thread->utime_ns = BPF_CORE_READ(task, utime);
	thread->stime_ns = BPF_CORE_READ(task, stime);
	if (pt) {
		times_copy(proc, &pt->times);
		pt->mark_ns = now;
	}
}

/* The first fields of every record of the track ring (struct lp_*_event). */
struct track_head {
	__u32 type;	/* enum lp_track_type */
	__u32 tgid;
	__s32 fd;
};

#define TRACK_HEAD_OF(ev) \
	_Static_assert(__builtin_offsetof(struct ev, type) == 0 && \
		       __builtin_offsetof(struct ev, tgid) == 4 && \
		       __builtin_offsetof(struct ev, fd) == 8, #ev " starts with a track_head")
TRACK_HEAD_OF(lp_req_event);
TRACK_HEAD_OF(lp_open_event);
TRACK_HEAD_OF(lp_peer_event);
TRACK_HEAD_OF(lp_fd_event);

/*
 * A record of @size bytes (a constant) on the track ring with its head
 * filled in, or NULL (counted as lost). The caller fills the rest and
 * submits it.
 */
static __always_inline void *track_reserve(__u64 size, __u32 type, __u32 tgid, __s32 fd)
{
	struct track_head *h = bpf_ringbuf_reserve(&track, size, 0);

	if (!h) {
		stat_inc(LP_STAT_TRACK_LOST);
		return NULL;
	}
	h->type = type;
	h->tgid = tgid;
	h->fd = fd;
	return h;
}

static __always_inline void req_send(__u32 tgid, __s32 fd, struct lp_conn *c)
{
	struct lp_req_event *e;

	if (!c->start_ns || !c->end_ns)
		return;		/* nothing answered: not a request */
	e = track_reserve(sizeof(*e), LP_TRACK_REQUEST, tgid, fd);
	if (!e)
		return;
	e->pad = 0;
	__builtin_memcpy(&e->conn, c, sizeof(*c));
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void req_read(struct task_struct *task, struct lp_task *t,
				     struct lp_conn *c, __u32 tid, __u64 now, long ret)
{
	if (c->start_ns && c->end_ns) {
		/* keep-alive: new bytes after a response end the previous request */
		req_send(t->tgid, (__s32)t->sys_arg0, c);
		__builtin_memset(c, 0, sizeof(*c));
	}
	if (!c->start_ns) {
		c->start_ns = now;
		c->read_tid = tid;
		c->flags = t->track_flags & LP_TASK_ACCEPTS ? LP_REQ_SHARED : 0;
		times_snap(task, t, now, &c->t_start, &c->p_start);
	}
	c->bytes_in += ret;
}

static __always_inline void req_write(struct task_struct *task, struct lp_task *t,
				      struct lp_conn *c, __u32 tid, __u64 now, long ret)
{
	if (!c->start_ns)
		return;		/* the server spoke first: not a response */
	c->end_ns = now;
	c->write_tid = tid;
	if (tid != c->read_tid)
		c->flags |= LP_REQ_SHARED;
	c->bytes_out += ret;
	times_snap(task, t, now, &c->t_end, &c->p_end);
}

static __always_inline void req_accept(struct lp_task *t, long ret)
{
	static const struct lp_conn zero;	/* too big for the BPF stack */
	struct lp_fd_key key = { .tgid = t->tgid, .fd = ret };

	t->track_flags |= LP_TASK_ACCEPTS;
	if (ret >= 0 && bpf_map_update_elem(&conns, &key, &zero, BPF_ANY))
		stat_inc(LP_STAT_CONNS_DROPPED);
}

/* A syscall on connection @c (descriptor t->sys_arg0). */
static __always_inline void req_on_conn(struct task_struct *task, struct lp_task *t,
					struct lp_conn *c, enum track_op op, __u64 now, long ret)
{
	struct lp_fd_key key = { .tgid = t->tgid, .fd = (__s32)t->sys_arg0 };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (op == TRACK_CLOSE) {
		if (ret == 0) {
			req_send(t->tgid, key.fd, c);
			bpf_map_delete_elem(&conns, &key);
		}
	} else if (ret > 0 && op == TRACK_READ) {
		req_read(task, t, c, tid, now, ret);
	} else if (ret > 0) {
		req_write(task, t, c, tid, now, ret);
	}
}

/*
 * Charge the syscall to the thread and process (I/O on a connection as
 * network, whatever its syscall's category), then follow the connection.
 */
static __always_inline void req_track(struct task_struct *task, struct lp_task *t, __s32 nr,
				      enum track_op op, __u64 now, __u64 dur, long ret)
{
	struct lp_fd_key key = { .tgid = t->tgid, .fd = (__s32)t->sys_arg0 };
	__u32 cat = nr >= 0 && nr < LP_MAX_SYSCALL_NR ?
		    cfg_sys_cat[sys_index(nr)] : LP_REQ_CAT_OTHER;
	struct lp_conn *c = NULL;

	if (op == TRACK_READ || op == TRACK_WRITE || op == TRACK_SENDFILE || op == TRACK_CLOSE)
		c = bpf_map_lookup_elem(&conns, &key);
	if (c && op != TRACK_CLOSE)
		cat = LP_REQ_CAT_NETWORK;
	times_charge(task, t, now, dur, cat);
	if (op == TRACK_ACCEPT)
		req_accept(t, ret);
	else if (c)
		req_on_conn(task, t, c, op, now, ret);
}

static __always_inline void fd_send(__u32 tgid, __s32 fd, struct lp_fdstat *st)
{
	struct lp_fd_event *e = track_reserve(sizeof(*e), LP_TRACK_FDSTAT, tgid, fd);

	if (!e)
		return;
	e->pad = 0;
	__builtin_memcpy(&e->st, st, sizeof(*st));
	bpf_ringbuf_submit(e, 0);
}

/* Start tracking @fd of @tgid as @kind; returns its id, 0 when the map is full. */
static __always_inline __u64 fd_new(__u32 tgid, __s32 fd, __u32 kind, __u64 id)
{
	struct lp_fd_key key = { .tgid = tgid, .fd = fd };
	struct lp_fdstat st = { .kind = kind };
	struct lp_fdstat *old = bpf_map_lookup_elem(&fdstats, &key);

	if (old)	/* closed behind our back (dup2 onto it, exec): flush */
		fd_send(tgid, fd, old);
	st.id = id ? id : __sync_fetch_and_add(&next_fd_id, 1) + 1;
	if (bpf_map_update_elem(&fdstats, &key, &st, BPF_ANY)) {
		stat_inc(LP_STAT_CONNS_DROPPED);
		return 0;
	}
	return st.id;
}

static __always_inline void open_send(struct lp_task *t, enum track_op op, long fd, __u64 now)
{
	const char *path = (const char *)(op == TRACK_OPEN ? t->sys_arg0 : t->sys_arg1);
	struct lp_open_event *e;
	__u64 id;

	if (fd < 0)
		return;
	id = fd_new(t->tgid, fd, LP_FD_FILE, 0);
	if (!id)
		return;
	e = track_reserve(sizeof(*e), LP_TRACK_OPEN, t->tgid, fd);
	if (!e)
		return;
	e->dirfd = op == TRACK_OPEN ? AT_FDCWD : (__s32)t->sys_arg0;
	e->id = id;
	e->time_ns = now;
	if (bpf_probe_read_user_str(e->path, sizeof(e->path), path) < 0)
		e->path[0] = 0;
	bpf_ringbuf_submit(e, 0);
}

/* The socket behind @fd of the current task, or NULL. */
static __always_inline struct sock *fd_sock(struct task_struct *task, __s32 fd)
{
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct socket *sock;
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	sock = BPF_CORE_READ(f, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

/* An inet socket's peer, read from its sock once connect/accept returned. */
static __always_inline void peer_send(struct task_struct *task, struct lp_task *t, __s32 fd,
				      bool accepted)
{
	struct sock *sk = fd_sock(task, fd);
	struct lp_peer_event *e;
	__u16 family;
	__u64 id;

	if (!sk)
		return;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return;
	id = fd_new(t->tgid, fd, LP_FD_NET, 0);
	if (!id)
		return;
	e = track_reserve(sizeof(*e), LP_TRACK_PEER, t->tgid, fd);
	if (!e)
		return;
	__builtin_memset(e->addr, 0, sizeof(e->addr));	/* an IPv4 address fills 4 bytes */
	e->pad = 0;
	e->accepted = accepted;
	e->id = id;
	e->family = family;
	e->port = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == AF_INET)
		BPF_CORE_READ_INTO(&e->addr, sk, __sk_common.skc_daddr);
	else
		BPF_CORE_READ_INTO(&e->addr, sk, __sk_common.skc_v6_daddr);
	bpf_ringbuf_submit(e, 0);
}

/* Account I/O of @dur ns moving @ret bytes on @fd, when it is tracked. */
static __always_inline void fd_io(__u32 tgid, __s32 fd, enum track_op op, long ret, __u64 dur)
{
	struct lp_fd_key key = { .tgid = tgid, .fd = fd };
	struct lp_fdstat *st = bpf_map_lookup_elem(&fdstats, &key);

	if (!st)
		return;
	st->io_ns += dur;
	st->ops++;
	if (ret > 0 && op == TRACK_READ)
		st->bytes_in += ret;
	else if (ret > 0 && op == TRACK_WRITE)
		st->bytes_out += ret;
}

static __always_inline void fd_track(struct task_struct *task, struct lp_task *t,
				     enum track_op op, __u64 now, __u64 dur, long ret)
{
	struct lp_fd_key key = { .tgid = t->tgid, .fd = (__s32)t->sys_arg0 };
	struct lp_fdstat *st;

	switch (op) {
	case TRACK_READ:
	case TRACK_WRITE:
	case TRACK_IO:
		fd_io(t->tgid, key.fd, op, ret, dur);
		break;
	case TRACK_SENDFILE:
		fd_io(t->tgid, key.fd, TRACK_WRITE, ret, dur);
		fd_io(t->tgid, (__s32)t->sys_arg1, TRACK_READ, ret, 0);
		break;
	case TRACK_CLOSE:
		st = bpf_map_lookup_elem(&fdstats, &key);
		if (st && ret == 0) {
			fd_send(t->tgid, key.fd, st);
			bpf_map_delete_elem(&fdstats, &key);
		}
		break;
	case TRACK_OPEN:
	case TRACK_OPENAT:
		if (cfg_files)
			open_send(t, op, ret, now);
		break;
	case TRACK_ACCEPT:
		if (cfg_net && ret >= 0)
			peer_send(task, t, ret, true);
		break;
	case TRACK_CONNECT:
		if (cfg_net && (ret == 0 || ret == -EINPROGRESS))
			peer_send(task, t, key.fd, false);
		break;
	case TRACK_FCNTL:
		if (t->sys_arg1 != F_DUPFD && t->sys_arg1 != F_DUPFD_CLOEXEC)
			break;
		/* fall through */
	case TRACK_DUP:
		st = bpf_map_lookup_elem(&fdstats, &key);
		if (st && ret >= 0 && ret != key.fd)
			fd_new(t->tgid, ret, st->kind, st->id);
		break;
	default:
		break;
	}
}

/* From sys_exit: charge the syscall, then follow requests and descriptors. */
static __always_inline void track_sys_exit(struct task_struct *task, struct lp_task *t, __s32 nr,
					   __u64 now, __u64 dur, long ret)
{
	enum track_op op = track_op_of(nr);

	if (cfg_requests)
		req_track(task, t, nr, op, now, dur, ret);
	if ((cfg_files || cfg_net) && op != TRACK_NONE)
		fd_track(task, t, op, now, dur, ret);
}

#endif
