/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a target's readiness wait (poll, epoll, select, accept, and the
 * signal and AIO waits) is on the path of work or idle, decided from what
 * the program is doing when the wait begins, not from the syscall's name
 * (docs/syscalls.md, "Idle waits"). The syscall hooks (syscall.bpf.c, which
 * defines the maps declared here) call it with --mode syscall.
 *
 * A socket descriptor is a conversation (convs, by tgid and fd) with a role:
 *   - server: returned by accept, or a stream socket (inet, or UNIX with an
 *     address) whose first byte seen in the recording was received (an
 *     inherited or older connection); a request is pending on it from a
 *     read that returns bytes until a write that sends some;
 *   - client: connected by connect (a stream socket), or such a socket
 *     whose first byte seen was sent; a call is pending on it from a write
 *     that sends bytes until a read that returns some.
 * Each process counts its pending conversations and its client ones, and
 * notes whether it serves (it accepted, or answered on, a connection:
 * struct lp_proc). A wait is then, at its start:
 *   - path: poll and ppoll when one of the descriptors they wait on (the
 *     first WAITS_POLL_FDS) is pending; the others when any conversation of
 *     the process is (an event loop waits for all of them in one call);
 *   - idle: accept; poll on listening sockets and server conversations with
 *     nothing pending; the others when nothing is pending and the process
 *     serves or has no client conversation (on one, a reply of a client's
 *     may be streaming in);
 *   - readiness (not decided) otherwise: poll on a pipe, a client
 *     conversation between a reply's chunks, an unknown descriptor.
 * A socketpair's sockets have no address and take no role: an asyncio
 * loop's self-pipe is one, which only one side ever writes.
 */
#ifndef LATPROF_WAITS_BPF_H
#define LATPROF_WAITS_BPF_H

#include "common.bpf.h"
#include "track.bpf.h"

#define NR_select 23
#define NR_poll 7
#define NR_pause 34
#define NR_epoll_wait 232
#define NR_pselect6 270
#define NR_ppoll 271
#define NR_epoll_pwait 281
#define NR_rt_sigtimedwait 128
#define NR_rt_sigsuspend 130
#define NR_io_getevents 208
#define NR_io_pgetevents 333
#define NR_epoll_pwait2 441
#define EINPROGRESS_ 115
#define S_IFMT_ 00170000
#define S_IFSOCK_ 0140000
#define SOCK_STREAM_ 1
#define TCP_LISTEN_ 10
#define AF_UNIX_ 1
#define EBADF_ 9
#define WAITS_POLL_FDS 8	/* descriptors of a poll looked at */

enum conv_role {
	CONV_NONE = 0,		/* not a socket conversation (a file, a pipe, UDP) */
	CONV_SERVER,
	CONV_CLIENT,
	CONV_LISTEN,		/* a listening socket */
};

struct conv {
	__u32 role;		/* enum conv_role */
	__u32 pending;		/* a request received and not answered (server),
				 * a call sent and not answered (client) */
	__u32 stamp;		/* struct lp_proc.stamp of its process */
};

/*
 * LRU: the entries of processes gone, and of descriptors closed unseen
 * (close_range, CLOEXEC at exec), age out; a stale one is known by its
 * stamp. An evicted pending conversation leaves its process's count raised
 * (docs/syscalls.md, "What it cannot see").
 */
struct convs_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* resized by user space before load */
	__type(key, struct lp_fd_key);
	__type(value, struct conv);
};

extern struct convs_map convs SEC(".maps");	/* defined in syscall.bpf.c */

/*
 * A process's descriptor epoch, at its stamp modulo WAITS_FD_EPOCHS (two
 * processes may share one: a close of either starts a new epoch of both,
 * which only costs a lookup): a close, accept or connect of a descriptor
 * below 64 starts a new one once convs has changed, so what a thread noted
 * about its descriptors in an older epoch (struct lp_task.plain_fds) is not
 * used. A reader reads the epoch before convs: a note it makes from an
 * entry that is going carries the epoch the change ends.
 */
#define WAITS_FD_EPOCHS 1024
extern __u32 waits_fd_epoch[WAITS_FD_EPOCHS];	/* defined in syscall.bpf.c */

static __always_inline __u32 *waits_epoch_of(struct lp_task *t)
{
	return &waits_fd_epoch[t->stamp & (WAITS_FD_EPOCHS - 1)];
}

/* A descriptor below 64 of @t's process may be another file now. */
static __always_inline void waits_fd_changed(struct lp_task *t, __s32 fd)
{
	if (fd >= 0 && fd < 64)
		__sync_fetch_and_add(waits_epoch_of(t), 1);
}

/* Whether @t noted @fd as no conversation in epoch @epoch, still its process's. */
static __always_inline bool waits_plain(struct lp_task *t, __s32 fd, __u32 epoch)
{
	return fd >= 0 && fd < 64 && t->plain_epoch == epoch && (t->plain_fds >> fd & 1);
}

/* Note that @fd is no conversation, as its process's epoch was @epoch when seen. */
static __always_inline void waits_plain_note(struct lp_task *t, __s32 fd, __u32 epoch)
{
	if (fd < 0 || fd >= 64)
		return;
	if (t->plain_epoch != epoch) {
		t->plain_fds = 0;
		t->plain_epoch = epoch;
	}
	t->plain_fds |= 1ULL << fd;
}

/* The syscalls whose start is classified (syscall_is_wait in src/syscalls.c). */
static __always_inline bool waits_is_wait(__s32 nr)
{
	switch (nr) {
	case NR_select: case NR_poll: case NR_pause: case NR_epoll_wait: case NR_pselect6:
	case NR_ppoll: case NR_epoll_pwait: case NR_rt_sigtimedwait: case NR_rt_sigsuspend:
	case NR_io_getevents: case NR_io_pgetevents: case NR_epoll_pwait2: case NR_accept:
	case NR_accept4:
		return true;
	}
	return false;
}

/* The syscalls that move a conversation on (their fd is arg0). */
static __always_inline bool waits_is_conv(__s32 nr)
{
	switch (nr) {
	case NR_read: case NR_readv: case NR_recvfrom: case NR_recvmsg:
	case NR_write: case NR_writev: case NR_sendto: case NR_sendmsg:
	case NR_close: case NR_accept: case NR_accept4: case NR_connect:
		return true;
	}
	return false;
}

/* Whether sys_enter must run for @nr even when --syscalls leaves it out. */
static __always_inline bool waits_entered(__s32 nr)
{
	return waits_is_conv(nr) || waits_is_wait(nr);
}

/* The socket of @fd of the current task, or NULL when @fd is not one. */
static __always_inline struct socket *waits_socket(struct task_struct *task, __s32 fd)
{
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct file *f = NULL;
	umode_t mode;

	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT_) != S_IFSOCK_)
		return NULL;
	return BPF_CORE_READ(f, private_data);
}

/*
 * The role of @fd first seen now: a listening socket, a stream connection
 * (server when its first byte seen is received, client when sent: @sent),
 * or none.
 */
static __always_inline __u32 waits_guess_role(struct task_struct *task, __s32 fd, bool sent)
{
	struct socket *sock = waits_socket(task, fd);
	struct sock *sk;
	__u16 family;

	if (!sock)
		return CONV_NONE;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk || BPF_CORE_READ(sock, type) != SOCK_STREAM_)
		return CONV_NONE;
	if (BPF_CORE_READ(sk, __sk_common.skc_state) == TCP_LISTEN_)
		return CONV_LISTEN;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	/*
	 * A UNIX socket accepted from a named listener has its address (a
	 * PostgreSQL backend's client on the socket directory); one of a
	 * socketpair has none, and is no conversation (asyncio's self-pipe).
	 */
	if (family == AF_UNIX_ && (!bpf_core_type_exists(struct unix_sock) ||
				   !BPF_CORE_READ((struct unix_sock *)sk, addr)))
		return CONV_NONE;
	if (family != AF_INET && family != AF_INET6 && family != AF_UNIX_)
		return CONV_NONE;
	return sent ? CONV_CLIENT : CONV_SERVER;
}

/*
 * Mark @c pending or not, keeping its process's count: the threads of a
 * process may move one conversation at once, and only the one that flips it
 * counts (a count left above 0 would put every later wait on the path).
 */
static __always_inline void conv_pend(struct lp_proc *proc, struct conv *c, __u32 pending)
{
	__u32 old = !pending;

	if (__sync_val_compare_and_swap(&c->pending, old, pending) == old)
		__sync_fetch_and_add(&proc->pending, pending ? 1 : -1);
}

/*
 * Drop conversation @c at @key (closed, its descriptor reused, or stale: of
 * another process of that pid or image, whose counts are not @proc's).
 */
static __always_inline void conv_forget(struct lp_proc *proc, struct lp_fd_key *key,
					struct conv *c)
{
	__u32 role = c->role;
	bool own = c->stamp == proc->stamp;

	if (own)
		conv_pend(proc, c, 0);
	if (!bpf_map_delete_elem(&convs, key) && own && role == CONV_CLIENT)
		__sync_fetch_and_add(&proc->clients, -1);
}

/* A new conversation @role on @fd (accept, connect, first use), not pending. */
static __always_inline void conv_new(struct lp_proc *proc, __u32 tgid, __s32 fd, __u32 role)
{
	struct lp_fd_key key = { .tgid = tgid, .fd = fd };
	struct conv c = { .role = role, .stamp = proc->stamp };
	struct conv *old = bpf_map_lookup_elem(&convs, &key);

	/* a descriptor reused without its close seen (dup2 onto it) */
	if (old)
		conv_forget(proc, &key, old);
	if (bpf_map_update_elem(&convs, &key, &c, BPF_NOEXIST))
		return;		/* another thread made it first */
	if (role == CONV_CLIENT)
		__sync_fetch_and_add(&proc->clients, 1);
	else if ((role == CONV_SERVER || role == CONV_LISTEN) && !proc->serves)
		proc->serves = 1;
}

/* From sys_exit: move the conversation of a read, write, accept, connect, close. */
static __always_inline void waits_sys_exit(struct lp_task *t, __s32 nr, long ret)
{
	struct lp_fd_key key = { .tgid = t->tgid, .fd = (__s32)t->sys_arg0 };
	struct lp_proc *proc;
	struct conv *c = NULL;
	__u32 pending, epoch = 0;
	enum track_op op;
	bool sent;

	/* a bit test for most syscalls, before track_op_of's tree of compares */
	if (!waits_is_conv(nr))
		return;
	op = track_op_of(nr);
	if (op == TRACK_READ || op == TRACK_WRITE) {
		if (ret <= 0)
			return;
		/*
		 * The most common case, a file or a pipe this thread used
		 * before: no lookup. The epoch is read before convs, so a
		 * close after the lookup leaves no note in force.
		 */
		epoch = *waits_epoch_of(t);
		if (waits_plain(t, key.fd, epoch))
			return;
		/* then a descriptor seen before whose state stays: one lookup */
		sent = op == TRACK_WRITE;
		c = bpf_map_lookup_elem(&convs, &key);
		/* the thread knows its process's stamp: a stale entry is no hit */
		if (c && c->stamp != t->stamp) {
			c = NULL;
		} else if (c && c->role != CONV_SERVER && c->role != CONV_CLIENT) {
			if (c->role == CONV_NONE)
				waits_plain_note(t, key.fd, epoch);
			return;
		}
		/* a server owes a reply once it reads; a client awaits one once it writes */
		pending = c && c->role == CONV_SERVER ? !sent : sent;
		if (c && c->pending == pending)
			return;
	}
	proc = bpf_map_lookup_elem(&procs, &key.tgid);
	if (!proc)
		return;
	switch (op) {
	case TRACK_ACCEPT:
		if (ret >= 0) {
			conv_new(proc, t->tgid, ret, CONV_SERVER);
			/* a number whose close was not seen (close_range) */
			waits_fd_changed(t, ret);
		}
		return;
	case TRACK_CONNECT:
		if (ret == 0 || ret == -EINPROGRESS_) {
			struct socket *sock = waits_socket(bpf_get_current_task_btf(), key.fd);

			if (sock && BPF_CORE_READ(sock, type) == SOCK_STREAM_) {
				conv_new(proc, t->tgid, key.fd, CONV_CLIENT);
				waits_fd_changed(t, key.fd);
			}
		}
		return;
	case TRACK_CLOSE:
		/* the descriptor is gone whatever close returns, but for EBADF */
		if (ret == -EBADF_)
			return;
		c = bpf_map_lookup_elem(&convs, &key);
		if (c)
			conv_forget(proc, &key, c);
		/*
		 * After the entry went: a thread that read the epoch before this
		 * and found the entry notes the old epoch, which this ends.
		 */
		waits_fd_changed(t, key.fd);
		return;
	case TRACK_READ:
	case TRACK_WRITE:
		break;
	default:
		return;
	}
	if (!c) {
		conv_new(proc, t->tgid, key.fd,
			 waits_guess_role(bpf_get_current_task_btf(), key.fd, sent));
		c = bpf_map_lookup_elem(&convs, &key);
		if (c && c->role == CONV_NONE && c->stamp == t->stamp)
			waits_plain_note(t, key.fd, epoch);
		if (!c || (c->role != CONV_SERVER && c->role != CONV_CLIENT))
			return;
		pending = c->role == CONV_SERVER ? !sent : sent;
	}
	conv_pend(proc, c, pending);
}

/*
 * A poll's class from the descriptors it waits on: path when one is
 * pending, idle when each is a listening socket or a server conversation,
 * else readiness.
 */
static __always_inline __u32 waits_poll_class(struct task_struct *task, struct lp_task *t,
					      __u64 fds, __u64 nfds)
{
	bool idle = nfds > 0 && nfds <= WAITS_POLL_FDS;
	struct lp_fd_key key = { .tgid = t->tgid };
	struct conv *c;
	__u32 i;

	for (i = 0; i < WAITS_POLL_FDS; i++) {
		__s32 fd;

		if (i >= nfds)
			break;
		if (bpf_probe_read_user(&fd, sizeof(fd), (void *)(fds + i * 8)))
			return LP_WAIT_READY;
		if (fd < 0)
			continue;
		key.fd = fd;
		c = bpf_map_lookup_elem(&convs, &key);
		if (c && c->stamp != t->stamp)
			c = NULL;	/* another process's, or the image's before an exec */
		if (!c) {
			__u32 role = waits_guess_role(task, fd, false);

			/* an unused connection's role is not known yet */
			if (role != CONV_LISTEN)
				idle = false;
			continue;
		}
		if (c->pending)
			return LP_WAIT_PATH;
		if (c->role != CONV_SERVER && c->role != CONV_LISTEN)
			idle = false;
	}
	return idle ? LP_WAIT_IDLE : LP_WAIT_READY;
}

/* From sys_enter of wait @nr: its class (enum lp_wait), kept in @t. */
static __always_inline void waits_sys_enter(struct pt_regs *regs, const bool typed,
					    struct lp_task *t, __s32 nr)
{
	struct lp_proc *proc;

	if (!waits_is_conv(nr) && !waits_is_wait(nr))
		return;
	t->sys_arg0 = SYS_REG(regs, typed, di);
	if (!waits_is_wait(nr))
		return;
	if (nr == NR_accept || nr == NR_accept4) {
		t->wait = LP_WAIT_IDLE;
		return;
	}
	proc = bpf_map_lookup_elem(&procs, &t->tgid);
	if (!proc) {
		t->wait = LP_WAIT_READY;
		return;
	}
	if (nr == NR_poll || nr == NR_ppoll) {
		__u64 nfds = SYS_REG(regs, typed, si);

		t->wait = waits_poll_class(bpf_get_current_task_btf(), t, t->sys_arg0, nfds);
		if (t->wait != LP_WAIT_READY || nfds <= WAITS_POLL_FDS)
			return;
	}
	/*
	 * Nothing pending: a server has nothing to answer and no call out (a
	 * reply streaming in would be for a request still pending), so is
	 * idle; a client with a connection open may be between a reply's
	 * chunks.
	 */
	if (proc->pending > 0)
		t->wait = LP_WAIT_PATH;
	else
		t->wait = proc->serves || proc->clients <= 0 ? LP_WAIT_IDLE : LP_WAIT_READY;
}

#endif
