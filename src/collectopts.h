/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collector options that `record` and `serve` share, parsed the same
 * way by both: target pids (-p), collectors (--mode) and the syscall filter
 * (--syscalls). Each parser prints its one error line (naming the option and
 * the bad value) and returns -EINVAL for bad input, -ESRCH for a pid that
 * does not exist, or -ENOMEM.
 */
#ifndef LATPROF_COLLECTOPTS_H
#define LATPROF_COLLECTOPTS_H

#include <stdbool.h>
#include <sys/types.h>

struct pid_list {
	pid_t *items;
	size_t nr, alloc;
};

struct comm_list {
	const char **items;	/* borrowed from argv */
	size_t nr, alloc;
};

struct syscall_list {
	int *items;		/* syscall numbers */
	size_t nr, alloc;
};

struct collector_modes {
	bool cpu, syscall, offcpu;
};

/* Append the comma-separated pids of @arg (each must exist) to @out. */
int collectopts_parse_pids(const char *arg, struct pid_list *out);

/*
 * Append process name @arg (--comm, repeatable up to LP_MAX_COMMS) to @out;
 * warns when it is longer than the kernel keeps.
 */
int collectopts_add_comm(const char *arg, struct comm_list *out);

/* Set @out from "cpu,syscall,offcpu" (any non-empty subset). */
int collectopts_parse_mode(const char *arg, struct collector_modes *out);

/* Append the syscall numbers of the comma-separated names of @arg to @out. */
int collectopts_parse_syscalls(const char *arg, struct syscall_list *out);

#endif
