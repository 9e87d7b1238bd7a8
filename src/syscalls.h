/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86-64 syscall names and numbers (generated at build time from the kernel
 * UAPI header asm/unistd_64.h) and latprof's categories for them (the table
 * is documented in docs/syscalls.md). Leaf module: no I/O, cannot fail.
 */
#ifndef LATPROF_SYSCALLS_H
#define LATPROF_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>

enum syscall_category {
	SYSCALL_CATEGORY_OTHER,
	SYSCALL_CATEGORY_FILE,		/* file I/O and metadata */
	SYSCALL_CATEGORY_NETWORK,	/* sockets */
	SYSCALL_CATEGORY_SYNC,		/* futex, poll/epoll/select: waiting on others */
	SYSCALL_CATEGORY_GIL,		/* no syscall's own: futex waits for a Python GIL
					 * (src/gil.h), moved out of sync */
	SYSCALL_CATEGORY_SLEEP,		/* nanosleep, pause, alarm-like waits */
	SYSCALL_CATEGORY_MEMORY,	/* mmap, brk, madvise ... */
	SYSCALL_CATEGORY_PROCESS,	/* fork/exec/wait/exit, signals */
	SYSCALL_CATEGORY_IPC,		/* pipes, SysV/POSIX IPC, eventfd */
	SYSCALL_CATEGORY_NR,
};

/* Number of syscall numbers the table knows (highest + 1). */
unsigned int syscall_table_size(void);

/* The name of syscall @nr ("read"), or NULL when the table has none. */
const char *syscall_name(unsigned int nr);

/* The number of syscall @name, or -1 when unknown. */
int syscall_number(const char *name);

/* The category of syscall @nr (OTHER when unknown). */
enum syscall_category syscall_category(unsigned int nr);

/* "file", "network", "sync", "gil", "sleep", "memory", "process", "ipc", "other". */
const char *syscall_category_name(enum syscall_category c);

/*
 * Is syscall @nr a readiness wait: one of the calls a thread makes to wait
 * for something to happen, which is idle or on the path of work by what the
 * program was doing when it began (bpf/waits.bpf.h decides; docs/syscalls.md,
 * "Idle waits")? epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll, select,
 * pselect6, accept, accept4, io_getevents, io_pgetevents, pause,
 * rt_sigsuspend, rt_sigtimedwait. Every other slow syscall, sleeps, futexes,
 * reads and writes included, is on the path of work. Cannot fail.
 */
bool syscall_is_wait(unsigned int nr);

/* What the hooks decided of a wait: enum lp_wait of bpf/latprof.h. */
enum syscall_wait_decided {
	SYSCALL_WAIT_NOT_DECIDED = 0,	/* not a wait, or begun before the recording */
	SYSCALL_WAIT_DECIDED_PATH,
	SYSCALL_WAIT_DECIDED_IDLE,
	SYSCALL_WAIT_UNDECIDABLE,	/* nothing to tell by */
};

/*
 * The "wait" label of a sample of syscall @nr whose hooks decided @wait
 * (enum syscall_wait_decided): "path", "idle", or "readiness" for a
 * readiness wait not decided. Cannot fail.
 */
const char *syscall_wait_label(unsigned int nr, unsigned int wait);

#define SYSCALL_WAIT_LABEL "wait"
#define SYSCALL_WAIT_IDLE "idle"
#define SYSCALL_WAIT_PATH "path"
#define SYSCALL_WAIT_READY "readiness"

#endif
