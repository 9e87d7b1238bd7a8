/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files seen through a process's eyes: paths resolved inside its root
 * directory (/proc/PID/root), where a symlink cannot lead out of it, and who
 * it is: its pid in its own pid namespace, whether its root is ours.
 * Private to symbolize/.
 */
#ifndef LATPROF_SYMBOLIZE_PROCROOT_H
#define LATPROF_SYMBOLIZE_PROCROOT_H

#include <stdbool.h>

/* What finds a process's files once it is gone. */
struct proc_ids {
	int ns_pid;		/* its pid in its own (innermost) pid namespace */
	bool root_ours;		/* its root is ours (same device and inode as "/") */
};

/*
 * Open @path read-only below directory @rootfd as if @rootfd were "/":
 * absolute symlinks and ".." stay inside it (openat2 RESOLVE_IN_ROOT), magic
 * links are refused. Returns the descriptor or -errno.
 */
int root_open(int rootfd, const char *path);

/*
 * Does this system have openat2 (Linux 5.6)? Without it root_open() fails
 * with -ENOSYS: nothing is read inside a process's root rather than risk
 * following its links out. (valgrind 3.19 does not know the syscall either.)
 */
bool root_open_supported(void);

/*
 * Open @path as process @pid sees it. Returns the descriptor, -errno for the
 * file, or -ESRCH when the process's root cannot be opened (it is gone, or
 * we may not look): only then may a caller fall back to the host path.
 */
int proc_root_open(int pid, const char *path);

/*
 * Read the ids of process @pid into @ids: its pid in its own namespace from
 * /proc/PID/status (@pid without NSpid), and whether its root is ours (false
 * if that cannot be looked at). Returns 0 or -errno (ESRCH: no such process).
 */
int proc_ids_read(struct proc_ids *ids, int pid);

#endif
