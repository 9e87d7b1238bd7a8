// SPDX-License-Identifier: GPL-2.0-only
/* latprof: the verb table, global options, and the exit status. */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/privs.h"
#include "src/lib/util.h"
#include "src/verbs.h"

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool needs_privs;	/* loads BPF; the others drop every capability first */
};

static const struct verb verbs[] = {
	{ "record", cmd_record, "sample CPU, time syscalls and off-CPU of a target, write a profile",
	  true },
	{ "report", cmd_report, "hotspot report of a profile on the terminal" },
	{ "flamegraph", cmd_flamegraph, "interactive SVG flame graph of a profile or folded stacks" },
	{ "diff", cmd_diff, "differential flame graph of two profiles (red grew, blue shrank)" },
	{ "timeline", cmd_timeline, "SVG chart of CPU, syscall time and memory per interval of a profile" },
	{ "export", cmd_export, "convert a profile (folded, speedscope, pprof, JSON, Prometheus)" },
	{ "symbolize", cmd_symbolize, "addresses of an ELF file to functions and lines" },
	{ "top", cmd_top, "live view: functions, waits and syscalls of a target, every second",
	  true },
	{ "serve", cmd_serve, "agent: Prometheus /metrics and pprof profiles over HTTP", true },
};

#ifdef __SANITIZE_ADDRESS__
/*
 * Asked by LeakSanitizer at exit in the SANITIZE=1 build. Its leak check
 * stops the process's threads with ptrace, which fails when a tracer is
 * attached already (tests/e2e/test_debuginfod.sh runs latprof under strace):
 * skip the check then rather than die with a "fatal error".
 */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	char *buf = NULL, *line;
	int traced = 0;

	if (read_file("/proc/self/status", &buf, NULL))
		return 0;
	line = strstr(buf, "\nTracerPid:");
	if (line)
		traced = atoi(line + strlen("\nTracerPid:")) != 0;
	free(buf);
	return traced;
}
#endif

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: latprof [--version] [--help] VERB [ARGS]\n\n"
		   "latprof shows where a service's time goes, on CPU and in the kernel, with BPF.\n\n"
		   "verbs:\n");
	for (i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-12s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\n'latprof VERB --help' describes a verb's options.\n");
}

int main(int argc, char **argv)
{
	size_t i;
	int err;

	if (argc < 2) {
		usage(stderr);
		return EXIT_STATUS_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("latprof %s\n", LATPROF_VERSION);
		return EXIT_STATUS_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_STATUS_OK;
	}
	/*
	 * glibc's thresholds as fixed values: left dynamic, the first large
	 * free raises them (up to 32 MB for mmap, 64 MB for trimming), and a
	 * thread's arena then keeps the top it grew to for good. serve builds
	 * each pulled profile on a connection's thread: one pull beside perf
	 * record left 23 MB that no malloc_trim() returns (it trims only the
	 * main arena's top).
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	for (i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (strcmp(argv[1], verbs[i].name))
			continue;
		/* before any input is read (src/privs.h) */
		err = verbs[i].needs_privs ? 0 : privs_drop_all();
		if (err) {
			pr_err("cannot drop capabilities: %s", strerror(-err));
			return EXIT_STATUS_FAILURE;
		}
		return verbs[i].fn(argc - 1, argv + 1);
	}
	pr_err("unknown verb '%s' (see 'latprof --help')", argv[1]);
	return EXIT_STATUS_USAGE;
}
