// SPDX-License-Identifier: GPL-2.0-only
/* Collector options shared by record and serve (collectopts.h). */
#include "src/collectopts.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/latprof.h"
#include "src/syscalls.h"
#include "src/util.h"

int collectopts_parse_pids(const char *arg, struct pid_list *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t pid;
	int err = copy ? 0 : -ENOMEM;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_u64(tok, 1, 4194304, &pid)) {
			pr_err("invalid pid '%s'", tok);
			err = -EINVAL;
		} else if (kill(pid, 0) && errno == ESRCH) {
			pr_err("no such process: %s", tok);
			err = -ESRCH;
		} else if (array_grow(out, out->nr + 1)) {
			err = -ENOMEM;
		} else {
			out->items[out->nr++] = pid;
		}
	}
	free(copy);
	return err;
}

int collectopts_add_comm(const char *arg, struct comm_list *out)
{
	if (!*arg || out->nr >= LP_MAX_COMMS || array_grow(out, out->nr + 1)) {
		pr_err("invalid --comm '%s' (non-empty, at most %d)", arg, LP_MAX_COMMS);
		return -EINVAL;
	}
	if (strlen(arg) >= LP_COMM_LEN)
		pr_warn("--comm '%s' is longer than the kernel's %d-character process names: "
			"matching '%.*s'", arg, LP_COMM_LEN - 1, LP_COMM_LEN - 1, arg);
	out->items[out->nr++] = arg;
	return 0;
}

int collectopts_parse_mode(const char *arg, struct collector_modes *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = copy ? 0 : -ENOMEM;

	*out = (struct collector_modes){ 0 };
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cpu"))
			out->cpu = true;
		else if (!strcmp(tok, "syscall"))
			out->syscall = true;
		else if (!strcmp(tok, "offcpu"))
			out->offcpu = true;
		else
			err = -EINVAL;
	}
	if (!err && !out->cpu && !out->syscall && !out->offcpu)
		err = -EINVAL;
	if (err == -EINVAL)
		pr_err("invalid --mode '%s': want a list of cpu, syscall, offcpu", arg);
	free(copy);
	return err;
}

int collectopts_parse_syscalls(const char *arg, struct syscall_list *out)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = copy ? 0 : -ENOMEM, nr;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		nr = syscall_number(tok);
		if (nr < 0 || nr >= LP_MAX_SYSCALL_NR) {
			pr_err("unknown syscall '%s' in --syscalls (names as in docs/syscalls.md)",
			       tok);
			err = -EINVAL;
		} else if (array_grow(out, out->nr + 1)) {
			err = -ENOMEM;
		} else {
			out->items[out->nr++] = nr;
		}
	}
	if (!err && !out->nr) {
		pr_err("empty --syscalls list");
		err = -EINVAL;
	}
	free(copy);
	return err;
}
