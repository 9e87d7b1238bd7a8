// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/procroot: a path resolved inside a root stays inside it, even
 * through an absolute symlink or "..", so a container cannot make latprof
 * read a host file (say /etc/passwd) as its perf map or binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/lib/util.h"
#include "symbolize/procroot.h"
#include "tests/unit/check.h"

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *read_at(int rootfd, const char *path, int *err)
{
	char *buf = NULL;
	int fd = root_open(rootfd, path, 0);

	*err = fd < 0 ? fd : read_fd(fd, 1 << 20, &buf, NULL);
	return *err ? NULL : buf;
}

int main(void)
{
	char root[] = "/tmp/latprof-procroot-XXXXXX", path[256];
	struct proc_ids ids;
	char *buf;
	int rootfd, err;

	if (!root_open_supported()) {
		/* root_open refuses everything then; proc_root_open says -ENOSYS */
		fprintf(stderr, "skip: no openat2 (Linux < 5.6, or valgrind 3.19)\n");
		CHECK(proc_root_open(getpid(), "/etc/passwd", 0) == -ENOSYS);
		return check_exit();
	}
	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/tmp", root);
	CHECK(mkdir(path, 0755) == 0);
	/* the container's /tmp/perf-1.map is a symlink to "its" /etc/passwd */
	snprintf(path, sizeof(path), "%s/tmp/perf-1.map", root);
	CHECK(symlink("/etc/passwd", path) == 0);
	snprintf(path, sizeof(path), "%s/tmp/up", root);
	CHECK(symlink("../../../../../../etc/passwd", path) == 0);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(rootfd >= 0);

	/* no /etc/passwd inside the root: not found, never the host's */
	CHECK(read_at(rootfd, "/tmp/perf-1.map", &err) == NULL && err == -ENOENT);
	CHECK(read_at(rootfd, "/tmp/up", &err) == NULL && err == -ENOENT);
	CHECK(read_at(rootfd, "/../../etc/passwd", &err) == NULL && err == -ENOENT);

	/* with one inside, that one */
	snprintf(path, sizeof(path), "%s/etc", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/etc/passwd", root);
	put(path, "inside\n");
	buf = read_at(rootfd, "/tmp/perf-1.map", &err);
	CHECK_STR(buf, "inside\n");
	free(buf);
	buf = read_at(rootfd, "/tmp/up", &err);
	CHECK_STR(buf, "inside\n");
	free(buf);

	/* read_fd's bound */
	CHECK(read_fd(root_open(rootfd, "/etc/passwd", 0), 3, &buf, NULL) == -EFBIG);

	/* with O_NOFOLLOW (perf maps) a symlink is not followed, even inside */
	CHECK(root_open(rootfd, "/tmp/perf-1.map", O_NOFOLLOW) == -ELOOP);
	err = root_open(rootfd, "/etc/passwd", O_NOFOLLOW | O_NONBLOCK);
	CHECK(err >= 0);
	if (err >= 0)
		close(err);

	/* our own root is "/" */
	err = proc_root_open(getpid(), "/proc/self/status", 0);
	CHECK(err == -ELOOP || err == -EXDEV || err >= 0);	/* a magic link: refused or not */
	if (err >= 0)
		close(err);
	CHECK(proc_root_open(999999999, "/etc/passwd", 0) == -ESRCH);

	/* who we are: our pid in our namespace, our user, our root */
	CHECK(proc_ids_read(&ids, getpid()) == 0);
	CHECK(ids.ns_pid > 0 && ids.uid == geteuid() && ids.root_ours);
	CHECK(proc_ids_read(&ids, 999999999) == -ESRCH);

	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0);
	return check_exit();
}
