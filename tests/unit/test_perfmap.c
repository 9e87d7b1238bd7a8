// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/perfmap: which perf map is read. The snapshot race: a process
 * that exits while it is snapshotted must not get the wrong pid or root for
 * its perf map. Runs without root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/procroot.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

#define JIT_NAME "jit_fn"
#define RACE_ROUNDS 500

static int write_map(const char *path, uint64_t base)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%" PRIx64 " 100 " JIT_NAME "\n", base + 0x100);
	return fclose(f) ? -errno : 0;
}

/* The name the JIT address in @p resolves to, NULL if none. */
static const char *jit_name(struct symbolizer *s, struct sym_process *p, uint64_t base)
{
	const struct sym_location *loc = symbolizer_user(s, p, base + 0x110, false);

	CHECK(loc != NULL);
	return loc ? loc->frames[0].function : NULL;
}

/*
 * Children that exit as they are snapshotted: a snapshot that read their
 * maps must also have their pid and root as they were, so that their map,
 * found in our /tmp after they are gone, names their code. The pid and
 * root were read after the maps: a child gone in between had a root that
 * was not ours, and its map was never read (29 to 55 of some 480 snapshots
 * that read their maps, in three runs).
 */
static void test_exit_race(uint64_t base)
{
	struct symbolizer *s = symbolizer_new(NULL);
	size_t i, seen = 0, unnamed = 0;
	struct sym_process *p;
	char path[64];
	int status;
	pid_t pid;

	CHECK(s != NULL);
	for (i = 0; s && i < RACE_ROUNDS; i++) {
		pid = fork();
		if (pid == 0) {
			/* exit somewhere inside the parent's snapshot */
			for (volatile unsigned int n = (i * 7919) % 20000; n; n--)
				;
			_exit(0);
		}
		if (pid < 0)
			break;
		p = symbolizer_snapshot(s, pid);
		waitpid(pid, &status, 0);
		if (!p)
			continue;
		seen++;
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		CHECK(write_map(path, base) == 0);
		unnamed += !jit_name(s, p, base);
		unlink(path);
	}
	fprintf(stderr, "exit race: %zu of %zu snapshots of exiting children unnamed\n",
		unnamed, seen);
	CHECK(unnamed == 0);
	symbolizer_free(s);
}

int main(void)
{
	void *anon;

	if (!root_open_supported()) {
		/* a live process's perf map is only read through its root */
		fprintf(stderr, "skip: perf map: no openat2 (Linux < 5.6, or valgrind 3.19)\n");
		return check_exit();
	}
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	if (anon == MAP_FAILED)
		return check_exit();
	test_exit_race((uint64_t)anon);
	munmap(anon, 4096);
	return check_exit();
}
