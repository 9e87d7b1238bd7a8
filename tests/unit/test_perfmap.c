// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/perfmap: which perf map is trusted. Any user can create
 * /tmp/perf-PID.map for a pid not theirs, and latprof reads it as root: only
 * a regular file owned by the process's user or root names JIT code, a
 * symlink is not followed, and a FIFO does not block the read. Checked for a
 * live process (its map read through /proc/PID/root) and for one that exited
 * (the host's /tmp). Then the snapshot race: a process that exits while it is
 * snapshotted must not get the wrong pid or root for its perf map. Runs
 * without root; the other-owner case needs root to chown and says "skip".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "symbolize/perfmap.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/lib/strtab.h"
#include "symbolize/procroot.h"
#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

#define JIT_NAME "jit_fn"
#define RACE_ROUNDS 500
#define NOBODY_UID 65534

enum plant {
	PLANT_FILE,		/* a regular file of ours */
	PLANT_OTHER_OWNER,	/* the same, chowned to nobody */
	PLANT_FIFO,
	PLANT_SYMLINK,		/* to a good map elsewhere */
	PLANT_NR,
};

static const char *const plant_names[] = { "file", "other owner", "fifo", "symlink" };
/* sym_process_perfmap_refused() after a lookup */
static const int plant_refused[] = { 0, -EPERM, -EINVAL, -ELOOP };

static void on_alarm(int sig)
{
	/* a FIFO opened as a perf map waited for a writer forever */
	static const char msg[] = "test_perfmap: hung reading a perf map\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static int write_map(const char *path, uint64_t base)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%" PRIx64 " 100 " JIT_NAME "\n", base + 0x100);
	return fclose(f) ? -errno : 0;
}

/* Create @path as @kind; @aside is a path for a symlink's target. 0 or -errno. */
static int plant(enum plant kind, const char *path, const char *aside, uint64_t base)
{
	int err = 0;

	unlink(path);
	switch (kind) {
	case PLANT_FILE:
		err = write_map(path, base);
		break;
	case PLANT_OTHER_OWNER:
		err = write_map(path, base);
		if (!err && chown(path, NOBODY_UID, NOBODY_UID))
			err = -errno;
		break;
	case PLANT_FIFO:
		err = mkfifo(path, 0644) ? -errno : 0;
		break;
	case PLANT_SYMLINK:
		err = write_map(aside, base);
		if (!err && symlink(aside, path))
			err = -errno;
		break;
	default:
		err = -EINVAL;
	}
	return err;
}

/* The name the JIT address in @p resolves to, NULL if none. */
static const char *jit_name(struct symbolizer *s, struct sym_process *p, uint64_t base)
{
	const struct sym_location *loc = symbolizer_user(s, p, base + 0x110, false);

	CHECK(loc != NULL);
	return loc ? loc->frames[0].function : NULL;
}

static void check_named(struct symbolizer *s, struct sym_process *p, uint64_t base,
			enum plant kind, const char *where)
{
	bool want = kind == PLANT_FILE, named = jit_name(s, p, base) != NULL;

	if (want != named)
		fprintf(stderr, "%s: perf map (%s) %s\n", where, plant_names[kind],
			want ? "named nothing" : "was read");
	CHECK(want == named);
	CHECK(sym_process_perfmap_refused(p) == plant_refused[kind]);
}

static bool can_plant(enum plant kind)
{
	if (kind == PLANT_OTHER_OWNER && geteuid() != 0) {
		fprintf(stderr, "skip: a perf map of another owner: needs root to chown\n");
		return false;
	}
	return true;
}

/* Our own map, read through /proc/self/root while we live. */
static void test_live(struct symbolizer *s, uint64_t base, const char *aside)
{
	struct sym_process *p;
	char path[64];
	int kind;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	for (kind = 0; kind < PLANT_NR; kind++) {
		if (!can_plant(kind))
			continue;
		CHECK(plant(kind, path, aside, base) == 0);
		p = symbolizer_snapshot(s, getpid());
		CHECK(p != NULL);
		if (p)
			check_named(s, p, base, kind, "live");
		unlink(path);
		unlink(aside);
	}
}

/* A child's map, read from our /tmp once the child is reaped. */
static void test_exited(struct symbolizer *s, uint64_t base, const char *aside)
{
	struct sym_process *p;
	int go[2], kind, status;
	char path[64], c;
	pid_t pid;

	for (kind = 0; kind < PLANT_NR; kind++) {
		if (!can_plant(kind) || pipe(go))
			continue;
		pid = fork();
		if (pid == 0) {
			close(go[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(go[0]);
		CHECK(pid > 0);
		p = pid > 0 ? symbolizer_snapshot(s, pid) : NULL;
		CHECK(p != NULL);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		CHECK(plant(kind, path, aside, base) == 0);
		close(go[1]);
		if (pid > 0)
			waitpid(pid, &status, 0);
		if (p)
			check_named(s, p, base, kind, "exited");
		unlink(path);
		unlink(aside);
	}
}

/*
 * The owner rule without root: a map of user U is read for a process of U
 * only (or any process, when U is root; as root the map is nobody's).
 */
static void test_owner(uint64_t base)
{
	uid_t owner = geteuid() ? geteuid() : NOBODY_UID;
	struct proc_ids ids = { .ns_pid = getpid(), .uid = owner, .root_ours = true };
	struct strtab *strs = strtab_new();
	struct perfmap *m;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	CHECK(strs && write_map(path, base) == 0);
	if (!geteuid())
		CHECK(chown(path, NOBODY_UID, NOBODY_UID) == 0);
	m = perfmap_load(getpid(), &ids, strs);
	CHECK(m != NULL);
	perfmap_free(m);
	ids.uid = owner + 1;
	m = perfmap_load(getpid(), &ids, strs);
	CHECK(!m && errno == EPERM);
	perfmap_free(m);
	unlink(path);
	strtab_free(strs);
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
	/* and it tried: most snapshots catch the child alive (about 480 of 500) */
	CHECK(seen >= RACE_ROUNDS / 10);
	symbolizer_free(s);
}

int main(void)
{
	char aside[] = "/tmp/latprof-perfmap-XXXXXX";
	struct symbolizer *s;
	void *anon;
	int fd;

	if (!root_open_supported()) {
		/* a live process's perf map is only read through its root */
		fprintf(stderr, "skip: perf map: no openat2 (Linux < 5.6, or valgrind 3.19)\n");
		return check_exit();
	}
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = mkstemp(aside);
	CHECK(anon != MAP_FAILED && fd >= 0);
	if (anon == MAP_FAILED || fd < 0)
		return check_exit();
	close(fd);
	signal(SIGALRM, on_alarm);
	alarm(60);
	s = symbolizer_new(NULL);
	CHECK(s != NULL);
	if (s) {
		test_live(s, (uint64_t)anon, aside);
		test_exited(s, (uint64_t)anon, aside);
	}
	symbolizer_free(s);
	test_owner((uint64_t)anon);
	test_exit_race((uint64_t)anon);
	unlink(aside);
	munmap(anon, 4096);
	return check_exit();
}
