// SPDX-License-Identifier: GPL-2.0-only
/* Resolving paths inside a process's root (see procroot.h). */
#include "symbolize/procroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/lib/util.h"

int root_open(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

bool root_open_supported(void)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ENOSYS;
}

int proc_root_open(int pid, const char *path, int flags)
{
	char root[32];
	int rootfd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -ESRCH;
	fd = root_open(rootfd, path, flags);
	close(rootfd);
	return fd;
}

/* The value of the status line "\nNAME\t..." in @status, NULL if none. */
static char *status_field(char *status, const char *name)
{
	char *line = strstr(status, name);

	return line ? line + strlen(name) : NULL;
}

static bool proc_root_is_ours(int pid)
{
	struct stat ours, theirs;
	char root[32];

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	return !stat("/", &ours) && !stat(root, &theirs) && ours.st_dev == theirs.st_dev &&
	       ours.st_ino == theirs.st_ino;
}

int proc_ids_read(struct proc_ids *ids, int pid)
{
	char path[32], *buf = NULL, *v, *last;
	unsigned int eff;
	int err, ns;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	err = read_file(path, &buf, NULL);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* "Uid:\t1000\t1000\t1000\t1000": real, effective, saved, filesystem */
	v = status_field(buf, "\nUid:");
	ids->uid = v && sscanf(v, "%*u %u", &eff) == 1 ? eff : PROC_UID_UNKNOWN;
	/* "NSpid:\t4242\t7": the last field is the innermost namespace's */
	ids->ns_pid = pid;
	v = status_field(buf, "\nNSpid:");
	if (v) {
		v[strcspn(v, "\n")] = '\0';
		last = strrchr(v, '\t');
		ns = last ? atoi(last + 1) : 0;
		if (ns > 0)
			ids->ns_pid = ns;
	}
	free(buf);
	ids->root_ours = proc_root_is_ours(pid);
	return 0;
}
