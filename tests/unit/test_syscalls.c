// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/syscalls: the generated table agrees with glibc's <sys/syscall.h>
 * numbers, unknown names and numbers are refused, categories are as
 * documented in docs/syscalls.md.
 */
#include <string.h>
#include <sys/syscall.h>

#include "src/syscalls.h"
#include "tests/unit/check.h"

static const struct {
	const char *name;
	long nr;
	const char *category;
} known[] = {
	{ "read", SYS_read, "file" },
	{ "write", SYS_write, "file" },
	{ "openat", SYS_openat, "file" },
	{ "clock_nanosleep", SYS_clock_nanosleep, "sleep" },
	{ "nanosleep", SYS_nanosleep, "sleep" },
	{ "futex", SYS_futex, "sync" },
	{ "epoll_wait", SYS_epoll_wait, "sync" },
	{ "accept4", SYS_accept4, "network" },
	{ "recvfrom", SYS_recvfrom, "network" },
	{ "mmap", SYS_mmap, "memory" },
	{ "clone3", SYS_clone3, "process" },
	{ "pipe2", SYS_pipe2, "ipc" },
	{ "getpid", SYS_getpid, "other" },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		CHECK(syscall_number(known[i].name) == known[i].nr);
		CHECK_STR(syscall_name(known[i].nr), known[i].name);
		CHECK_STR(syscall_category_name(syscall_category(known[i].nr)),
			  known[i].category);
	}
	CHECK(syscall_table_size() > SYS_pidfd_open);
	CHECK(syscall_number("no_such_syscall") == -1);
	CHECK(syscall_number("") == -1);
	CHECK(syscall_name(100000) == NULL);
	CHECK(syscall_category(100000) == SYSCALL_CATEGORY_OTHER);
	CHECK_STR(syscall_category_name(SYSCALL_CATEGORY_NR), "other");
	return check_exit();
}
