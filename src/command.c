// SPDX-License-Identifier: GPL-2.0-only
/* Launching `-- COMMAND` held at a pipe until latprof is attached. */
#include "src/command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static bool is_executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

bool command_path(const char *file, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(file, '/'))
		return is_executable(file) && snprintf(buf, size, "%s", file) < (int)size;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(buf, size, "%.*s/%s", (int)(end - p), end > p ? p : ".", file) >=
		    (int)size)
			continue;
		if (is_executable(buf))
			return true;
	}
	return false;
}

bool command_exists(const char *file)
{
	char buf[4096];

	return command_path(file, buf, sizeof(buf));
}

static void child_run(int release_rd, int error_wr, char *const argv[], int nice)
{
	char byte;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);	/* latprof top ignores it for itself */
	/* the priority the user gave latprof, not the one it took */
	setpriority(PRIO_PROCESS, 0, nice);
	while (read(release_rd, &byte, 1) < 0 && errno == EINTR)
		;
	close(release_rd);
	execvp(argv[0], argv);
	e = errno;
	if (write(error_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int child_start(struct child *c, char *const argv[])
{
	int rel[2], errp[2];

	if (pipe2(rel, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(rel[0]);
		close(rel[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(rel[0]);
		close(rel[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (c->pid == 0) {
		close(rel[1]);
		close(errp[0]);
		child_run(rel[0], errp[1], argv, c->nice);
	}
	close(rel[0]);
	close(errp[1]);
	c->release_fd = rel[1];
	c->error_fd = errp[0];
	return 0;
}

int child_release(struct child *c)
{
	char byte = 1;
	int e = 0;
	ssize_t n;

	if (write(c->release_fd, &byte, 1) != 1)
		return -errno;
	close(c->release_fd);
	c->release_fd = -1;
	do
		n = read(c->error_fd, &e, sizeof(e));	/* EOF: exec succeeded */
	while (n < 0 && errno == EINTR);
	close(c->error_fd);
	c->error_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

void child_abort(struct child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	if (c->release_fd >= 0)
		close(c->release_fd);
	if (c->error_fd >= 0)
		close(c->error_fd);
	waitpid(c->pid, NULL, 0);
	c->pid = -1;
}
