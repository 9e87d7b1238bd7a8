/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files seen through a process's eyes: paths resolved inside its root
 * directory (/proc/PID/root), where a symlink cannot lead out of it, and who
 * it is: its pid in its own pid namespace, its user, whether its root is
 * ours. Private to symbolize/.
 */
#ifndef LATPROF_SYMBOLIZE_PROCROOT_H
#define LATPROF_SYMBOLIZE_PROCROOT_H

#include <stdbool.h>
#include <sys/types.h>

/* proc_ids.uid when /proc/PID/status has no Uid: line. */
#define PROC_UID_UNKNOWN ((uid_t)-1)

/* What finds a process's files once it is gone, and whose they may be. */
struct proc_ids {
	int ns_pid;		/* its pid in its own (innermost) pid namespace */
	uid_t uid;		/* its effective uid, as our user namespace sees it */
	bool root_ours;		/* its root is ours (same device and inode as "/") */
};

/*
 * Open @path read-only below directory @rootfd as if @rootfd were "/":
 * absolute symlinks and ".." stay inside it (openat2 RESOLVE_IN_ROOT), magic
 * links are refused. @flags are added to O_RDONLY | O_CLOEXEC (O_NOFOLLOW,
 * O_NONBLOCK). Returns the descriptor or -errno.
 */
int root_open(int rootfd, const char *path, int flags);

/*
 * Does this system have openat2 (Linux 5.6)? Without it root_open() fails
 * with -ENOSYS: nothing is read inside a process's root rather than risk
 * following its links out. (valgrind 3.19 does not know the syscall either.)
 */
bool root_open_supported(void);

/*
 * Open @path as process @pid sees it, root_open()'s @flags added. Returns
 * the descriptor, -errno for the file, or -ESRCH when the process's root
 * cannot be opened (it is gone, or we may not look): only then may a caller
 * fall back to the host path.
 */
int proc_root_open(int pid, const char *path, int flags);

/*
 * Read the ids of process @pid into @ids: from /proc/PID/status its pid in
 * its own namespace (@pid without NSpid) and its effective uid
 * (PROC_UID_UNKNOWN without Uid), and whether its root is ours (false if
 * that cannot be looked at). Returns 0 or -errno (ESRCH: no such process).
 */
int proc_ids_read(struct proc_ids *ids, int pid);

#endif
