// SPDX-License-Identifier: GPL-2.0-only
/* Resolving paths inside a process's root (see procroot.h). */
#include "symbolize/procroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/util.h"

int root_open(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
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

int proc_root_open(int pid, const char *path)
{
	char root[32];
	int rootfd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -ESRCH;
	fd = root_open(rootfd, path);
	close(rootfd);
	return fd;
}

int proc_ns_pid(int pid)
{
	char path[32], *buf = NULL, *line, *last;
	int ns = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_file(path, &buf, NULL))
		return pid;
	/* "NSpid:\t4242\t7": the last field is the innermost namespace's */
	line = strstr(buf, "\nNSpid:");
	if (line) {
		line[strcspn(line + 1, "\n") + 1] = 0;
		last = strrchr(line, '\t');
		if (last && atoi(last + 1) > 0)
			ns = atoi(last + 1);
	}
	free(buf);
	return ns;
}

bool proc_root_is_ours(int pid)
{
	struct stat ours, theirs;
	char root[32];

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	return !stat("/", &ours) && !stat(root, &theirs) && ours.st_dev == theirs.st_dev &&
	       ours.st_ino == theirs.st_ino;
}
