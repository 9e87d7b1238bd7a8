// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/privs: after privs_drop_all() the process has no capability in any set
 * and no_new_privs, as /proc/self/status shows; as root, an operation that
 * needs CAP_SYS_ADMIN (unshare of the mount namespace) is refused. Runs in a
 * forked child so the test process keeps what it had.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/privs.h"
#include "src/lib/util.h"
#include "tests/unit/check.h"

/* The hex value of "FIELD:" in /proc/self/status, or ~0 when missing. */
static unsigned long long status_field(const char *field)
{
	unsigned long long v = ~0ULL;
	char *buf = NULL, *line;
	size_t n = strlen(field);

	if (read_file("/proc/self/status", &buf, NULL))
		return v;
	for (line = buf; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 16);
	free(buf);
	return v;
}

static int child(bool root)
{
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	size_t i;

	CHECK(privs_drop_all() == 0);
	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (!root && !strcmp(sets[i], "CapBnd"))
			continue;	/* only root may shrink it */
		if (status_field(sets[i]) != 0)
			fprintf(stderr, "%s still set\n", sets[i]);
		CHECK(status_field(sets[i]) == 0);
	}
	CHECK(status_field("NoNewPrivs") == 1);
	if (root) {
		/* needs CAP_SYS_ADMIN, harmless in this child if it worked */
		CHECK(unshare(CLONE_NEWNS) == -1 && errno == EPERM);
		/* uid 0 keeps reading root's files */
		CHECK(access("/proc/self/status", R_OK) == 0);
	}
	/* a second call has nothing left to do */
	CHECK(privs_drop_all() == 0);
	return check_exit();
}

int main(void)
{
	bool root = geteuid() == 0;
	int status = -1;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(child(root));
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!root)
		fprintf(stderr, "not root: only the unprivileged case was checked\n");
	return check_exit();
}
