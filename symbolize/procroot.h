/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files seen through a process's eyes: paths resolved inside its root
 * directory (/proc/PID/root), where a symlink cannot lead out of it, and its
 * pid in its own pid namespace. Private to symbolize/.
 */
#ifndef LATPROF_SYMBOLIZE_PROCROOT_H
#define LATPROF_SYMBOLIZE_PROCROOT_H

/*
 * Open @path read-only below directory @rootfd as if @rootfd were "/":
 * absolute symlinks and ".." stay inside it (openat2 RESOLVE_IN_ROOT), magic
 * links are refused. Returns the descriptor or -errno.
 */
int root_open(int rootfd, const char *path);

/*
 * Open @path as process @pid sees it. Returns the descriptor, -errno for the
 * file, or -ESRCH when the process's root cannot be opened (it is gone, or
 * we may not look): only then may a caller fall back to the host path.
 */
int proc_root_open(int pid, const char *path);

/* The pid of @pid in its own (innermost) pid namespace, @pid if unknown. */
int proc_ns_pid(int pid);

#endif
