// SPDX-License-Identifier: GPL-2.0-only
/*
 * The syscall table: names from the build's asm/unistd_64.h (see the
 * Makefile rule for build/gen/syscall_table.h), categories by name below.
 */
#include "src/syscalls.h"

#include <stddef.h>
#include <string.h>

#include "src/lib/util.h"

static const char *const names[] = {
#include "gen/syscall_table.h"
};

struct category_rule {
	const char *name;
	enum syscall_category category;
};

/* Every syscall not listed is "other". Keep docs/syscalls.md in step. */
static const struct category_rule rules[] = {
	/* file I/O */
	{ "read", SYSCALL_CATEGORY_FILE }, { "write", SYSCALL_CATEGORY_FILE },
	{ "pread64", SYSCALL_CATEGORY_FILE }, { "pwrite64", SYSCALL_CATEGORY_FILE },
	{ "readv", SYSCALL_CATEGORY_FILE }, { "writev", SYSCALL_CATEGORY_FILE },
	{ "preadv", SYSCALL_CATEGORY_FILE }, { "pwritev", SYSCALL_CATEGORY_FILE },
	{ "preadv2", SYSCALL_CATEGORY_FILE }, { "pwritev2", SYSCALL_CATEGORY_FILE },
	{ "open", SYSCALL_CATEGORY_FILE }, { "openat", SYSCALL_CATEGORY_FILE },
	{ "openat2", SYSCALL_CATEGORY_FILE }, { "creat", SYSCALL_CATEGORY_FILE },
	{ "close", SYSCALL_CATEGORY_FILE }, { "lseek", SYSCALL_CATEGORY_FILE },
	{ "stat", SYSCALL_CATEGORY_FILE }, { "fstat", SYSCALL_CATEGORY_FILE },
	{ "lstat", SYSCALL_CATEGORY_FILE }, { "newfstatat", SYSCALL_CATEGORY_FILE },
	{ "statx", SYSCALL_CATEGORY_FILE }, { "access", SYSCALL_CATEGORY_FILE },
	{ "faccessat", SYSCALL_CATEGORY_FILE }, { "faccessat2", SYSCALL_CATEGORY_FILE },
	{ "getdents64", SYSCALL_CATEGORY_FILE }, { "fsync", SYSCALL_CATEGORY_FILE },
	{ "fdatasync", SYSCALL_CATEGORY_FILE }, { "sync_file_range", SYSCALL_CATEGORY_FILE },
	{ "ftruncate", SYSCALL_CATEGORY_FILE }, { "fallocate", SYSCALL_CATEGORY_FILE },
	{ "rename", SYSCALL_CATEGORY_FILE }, { "renameat2", SYSCALL_CATEGORY_FILE },
	{ "unlink", SYSCALL_CATEGORY_FILE }, { "unlinkat", SYSCALL_CATEGORY_FILE },
	{ "mkdir", SYSCALL_CATEGORY_FILE }, { "mkdirat", SYSCALL_CATEGORY_FILE },
	{ "readlink", SYSCALL_CATEGORY_FILE }, { "readlinkat", SYSCALL_CATEGORY_FILE },
	{ "sendfile", SYSCALL_CATEGORY_FILE }, { "copy_file_range", SYSCALL_CATEGORY_FILE },
	{ "splice", SYSCALL_CATEGORY_FILE }, { "io_uring_enter", SYSCALL_CATEGORY_FILE },
	{ "io_getevents", SYSCALL_CATEGORY_FILE }, { "ioctl", SYSCALL_CATEGORY_FILE },
	{ "fcntl", SYSCALL_CATEGORY_FILE }, { "flock", SYSCALL_CATEGORY_FILE },
	/* network */
	{ "socket", SYSCALL_CATEGORY_NETWORK }, { "connect", SYSCALL_CATEGORY_NETWORK },
	{ "accept", SYSCALL_CATEGORY_NETWORK }, { "accept4", SYSCALL_CATEGORY_NETWORK },
	{ "bind", SYSCALL_CATEGORY_NETWORK }, { "listen", SYSCALL_CATEGORY_NETWORK },
	{ "sendto", SYSCALL_CATEGORY_NETWORK }, { "recvfrom", SYSCALL_CATEGORY_NETWORK },
	{ "sendmsg", SYSCALL_CATEGORY_NETWORK }, { "recvmsg", SYSCALL_CATEGORY_NETWORK },
	{ "sendmmsg", SYSCALL_CATEGORY_NETWORK }, { "recvmmsg", SYSCALL_CATEGORY_NETWORK },
	{ "shutdown", SYSCALL_CATEGORY_NETWORK }, { "getsockopt", SYSCALL_CATEGORY_NETWORK },
	{ "setsockopt", SYSCALL_CATEGORY_NETWORK }, { "getsockname", SYSCALL_CATEGORY_NETWORK },
	{ "getpeername", SYSCALL_CATEGORY_NETWORK }, { "socketpair", SYSCALL_CATEGORY_NETWORK },
	/* sync: waiting for another thread, process or fd */
	{ "futex", SYSCALL_CATEGORY_SYNC }, { "futex_waitv", SYSCALL_CATEGORY_SYNC },
	{ "poll", SYSCALL_CATEGORY_SYNC }, { "ppoll", SYSCALL_CATEGORY_SYNC },
	{ "select", SYSCALL_CATEGORY_SYNC }, { "pselect6", SYSCALL_CATEGORY_SYNC },
	{ "epoll_wait", SYSCALL_CATEGORY_SYNC }, { "epoll_pwait", SYSCALL_CATEGORY_SYNC },
	{ "epoll_pwait2", SYSCALL_CATEGORY_SYNC }, { "sched_yield", SYSCALL_CATEGORY_SYNC },
	/* sleep */
	{ "nanosleep", SYSCALL_CATEGORY_SLEEP }, { "clock_nanosleep", SYSCALL_CATEGORY_SLEEP },
	{ "pause", SYSCALL_CATEGORY_SLEEP }, { "alarm", SYSCALL_CATEGORY_SLEEP },
	/* memory */
	{ "mmap", SYSCALL_CATEGORY_MEMORY }, { "munmap", SYSCALL_CATEGORY_MEMORY },
	{ "mprotect", SYSCALL_CATEGORY_MEMORY }, { "mremap", SYSCALL_CATEGORY_MEMORY },
	{ "brk", SYSCALL_CATEGORY_MEMORY }, { "madvise", SYSCALL_CATEGORY_MEMORY },
	{ "mlock", SYSCALL_CATEGORY_MEMORY }, { "munlock", SYSCALL_CATEGORY_MEMORY },
	{ "msync", SYSCALL_CATEGORY_MEMORY }, { "mincore", SYSCALL_CATEGORY_MEMORY },
	/* process */
	{ "clone", SYSCALL_CATEGORY_PROCESS }, { "clone3", SYSCALL_CATEGORY_PROCESS },
	{ "fork", SYSCALL_CATEGORY_PROCESS }, { "vfork", SYSCALL_CATEGORY_PROCESS },
	{ "execve", SYSCALL_CATEGORY_PROCESS }, { "execveat", SYSCALL_CATEGORY_PROCESS },
	{ "exit", SYSCALL_CATEGORY_PROCESS }, { "exit_group", SYSCALL_CATEGORY_PROCESS },
	{ "wait4", SYSCALL_CATEGORY_PROCESS }, { "waitid", SYSCALL_CATEGORY_PROCESS },
	{ "kill", SYSCALL_CATEGORY_PROCESS }, { "tgkill", SYSCALL_CATEGORY_PROCESS },
	{ "rt_sigaction", SYSCALL_CATEGORY_PROCESS },
	{ "rt_sigprocmask", SYSCALL_CATEGORY_PROCESS },
	{ "rt_sigsuspend", SYSCALL_CATEGORY_PROCESS },
	{ "rt_sigtimedwait", SYSCALL_CATEGORY_PROCESS },
	/* ipc */
	{ "pipe", SYSCALL_CATEGORY_IPC }, { "pipe2", SYSCALL_CATEGORY_IPC },
	{ "eventfd", SYSCALL_CATEGORY_IPC }, { "eventfd2", SYSCALL_CATEGORY_IPC },
	{ "msgsnd", SYSCALL_CATEGORY_IPC }, { "msgrcv", SYSCALL_CATEGORY_IPC },
	{ "semop", SYSCALL_CATEGORY_IPC }, { "semtimedop", SYSCALL_CATEGORY_IPC },
	{ "mq_timedsend", SYSCALL_CATEGORY_IPC }, { "mq_timedreceive", SYSCALL_CATEGORY_IPC },
	{ "shmat", SYSCALL_CATEGORY_IPC }, { "shmdt", SYSCALL_CATEGORY_IPC },
};

static const char *const category_names[SYSCALL_CATEGORY_NR] = {
	[SYSCALL_CATEGORY_OTHER] = "other",	[SYSCALL_CATEGORY_FILE] = "file",
	[SYSCALL_CATEGORY_NETWORK] = "network", [SYSCALL_CATEGORY_SYNC] = "sync",
	[SYSCALL_CATEGORY_GIL] = "gil",
	[SYSCALL_CATEGORY_SLEEP] = "sleep",	[SYSCALL_CATEGORY_MEMORY] = "memory",
	[SYSCALL_CATEGORY_PROCESS] = "process", [SYSCALL_CATEGORY_IPC] = "ipc",
};

unsigned int syscall_table_size(void)
{
	return ARRAY_SIZE(names);
}

const char *syscall_name(unsigned int nr)
{
	return nr < ARRAY_SIZE(names) ? names[nr] : NULL;
}

int syscall_number(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -1;
}

enum syscall_category syscall_category(unsigned int nr)
{
	const char *name = syscall_name(nr);
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(rules); i++)
		if (!strcmp(rules[i].name, name))
			return rules[i].category;
	return SYSCALL_CATEGORY_OTHER;
}

const char *syscall_category_name(enum syscall_category c)
{
	return c < SYSCALL_CATEGORY_NR ? category_names[c] : "other";
}

bool syscall_is_wait(unsigned int nr)
{
	static const char *const idle[] = {
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select",
		"pselect6", "accept", "accept4", "io_getevents", "io_pgetevents", "pause",
		"rt_sigsuspend", "rt_sigtimedwait",
	};
	const char *name = syscall_name(nr);
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(idle); i++)
		if (!strcmp(idle[i], name))
			return true;
	return false;
}

const char *syscall_wait_label(unsigned int nr, unsigned int wait)
{
	switch (wait) {
	case SYSCALL_WAIT_DECIDED_PATH:
		return SYSCALL_WAIT_PATH;
	case SYSCALL_WAIT_DECIDED_IDLE:
		return SYSCALL_WAIT_IDLE;
	case SYSCALL_WAIT_UNDECIDABLE:
		return SYSCALL_WAIT_READY;
	}
	return syscall_is_wait(nr) ? SYSCALL_WAIT_READY : SYSCALL_WAIT_PATH;
}
