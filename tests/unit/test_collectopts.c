// SPDX-License-Identifier: GPL-2.0-only
/* src/collectopts: the -p, --comm, --mode and --syscalls parsers of record and serve. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/collectopts.h"
#include "src/syscalls.h"
#include "tests/unit/check.h"

static void test_modes(void)
{
	struct collector_modes m;

	CHECK(collectopts_parse_mode("cpu", &m) == 0 && m.cpu && !m.syscall && !m.offcpu);
	CHECK(collectopts_parse_mode("offcpu,syscall", &m) == 0 && !m.cpu && m.syscall &&
	      m.offcpu);
	CHECK(collectopts_parse_mode("cpu,bogus", &m) == -EINVAL);
	CHECK(collectopts_parse_mode("", &m) == -EINVAL);
	CHECK(collectopts_parse_mode(",", &m) == -EINVAL);
}

static void test_syscalls(void)
{
	struct syscall_list l = { 0 };

	CHECK(collectopts_parse_syscalls("read,write", &l) == 0 && l.nr == 2);
	CHECK(l.nr == 2 && l.items[0] == syscall_number("read") &&
	      l.items[1] == syscall_number("write"));
	CHECK(collectopts_parse_syscalls("nosuchcall", &l) == -EINVAL);
	free(l.items);
	l = (struct syscall_list){ 0 };
	CHECK(collectopts_parse_syscalls(",,", &l) == -EINVAL && l.nr == 0);
	free(l.items);
}

static void test_pids_comms(void)
{
	struct pid_list p = { 0 };
	struct comm_list c = { 0 };
	char self[32];
	int i;

	snprintf(self, sizeof(self), "%d", getpid());
	CHECK(collectopts_parse_pids(self, &p) == 0 && p.nr == 1 && p.items[0] == getpid());
	CHECK(collectopts_parse_pids("12x", &p) == -EINVAL);
	CHECK(collectopts_parse_pids("0", &p) == -EINVAL);
	CHECK(collectopts_parse_pids("4194304", &p) == -ESRCH || p.nr == 2);
	free(p.items);
	CHECK(collectopts_add_comm("", &c) == -EINVAL);
	for (i = 0; i < LP_MAX_COMMS; i++)
		CHECK(collectopts_add_comm("nginx", &c) == 0);
	CHECK(collectopts_add_comm("one-too-many", &c) == -EINVAL && c.nr == LP_MAX_COMMS);
	free(c.items);
}

int main(void)
{
	test_modes();
	test_syscalls();
	test_pids_comms();
	return check_exit();
}
