// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loads and attaches bench/floor/floor.bpf.c (two empty programs on
 * raw_tp/sys_enter and raw_tp/sys_exit), prints "attached" on stdout once
 * both are attached, and holds them until SIGINT or SIGTERM. Exits 0 then,
 * 1 if loading or attaching fails. Needs root (CAP_BPF + CAP_PERFMON).
 * With --clock each program also reads the clock (bpf_ktime_get_ns) once:
 * the floor of a tool that times every syscall.
 *
 * Usage: floor [--clock]
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	bool clock = argc == 2 && strcmp(argv[1], "--clock") == 0;
	struct floor_bpf *skel;
	sigset_t mask, old;
	int err;

	if (argc > 2 || (argc == 2 && !clock)) {
		fprintf(stderr, "usage: floor [--clock]\n");
		return 2;
	}
	/* Block the signals until the wait, so one sent right after
	 * "attached" is not lost between the check and the sleep. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	libbpf_set_print(libbpf_print);
	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->cfg_clock = clock;
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: load: %s\n", strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor: attach: %s\n", strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	floor_bpf__destroy(skel);
	return 0;
}
