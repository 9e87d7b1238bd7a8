// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/procimg: the files libdwfl refused in a process image are counted,
 * and a re-read of the maps after the file was unmapped does not forget
 * them (the samples taken before were resolved without it). A process that
 * exited lists no code: re-reading it keeps the snapshot its queued
 * samples are unwound with. Code unmapped since the last read stays in the
 * next snapshot unless a new mapping took its place. Maps read after the
 * image was replaced by an exec are not kept as that image's. An exec
 * ends every older image of its process, an exit all of them, also an
 * image read late or again (a pid reused), and a process counts once.
 */
#include "src/procimg.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/check.h"

/*
 * A child snapshotted while it runs, then re-read as a zombie: its maps
 * read empty, so the re-read fails and the image keeps its snapshot (this
 * lost every user stack of sys_pipe's parent when its samples were drained
 * after it exited, 1 to 3 in 24 recordings at -F 4999).
 */
static void test_exited_keeps_snapshot(struct proc_images *m)
{
	struct sym_process *before;
	struct proc_image *img;
	siginfo_t info = { 0 };
	int go[2], status;
	char c = 0;
	pid_t pid;

	CHECK(pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	close(go[0]);
	CHECK(proc_images_snapshot(m, pid, 0) == 0);
	img = proc_images_find(m, pid, 0);
	CHECK(img && img->sym);
	before = img ? img->sym : NULL;
	CHECK(before && sym_process_maps_digest(before) != sym_maps_digest(""));

	close(go[1]);	/* the child exits; not reaped yet, it stays a zombie */
	/* infop given: NULL is the kernel's extension, which valgrind refuses */
	CHECK(waitid(P_PID, pid, &info, WEXITED | WNOWAIT) == 0);
	CHECK(symbolizer_snapshot(m->sym, pid) == NULL && errno == ESRCH);
	CHECK(proc_images_snapshot(m, pid, 0) == -ESRCH);
	img = proc_images_find(m, pid, 0);
	CHECK(img && img->sym == before);
	CHECK(img && img->next_refresh_ns == 0);
	waitpid(pid, &status, 0);
}

/* The mapping latest snapshot of our image resolves @addr in, if any. */
static const struct sym_mapping *mapped_at(struct proc_images *m, void *addr)
{
	struct proc_image *img;
	const struct sym_location *loc;

	CHECK(proc_images_snapshot(m, getpid(), 0) == 0);
	img = proc_images_find(m, getpid(), 0);
	if (!img || !img->sym)
		return NULL;
	loc = symbolizer_user(m->sym, img->sym, (uintptr_t)addr, false);
	return loc ? loc->map : NULL;
}

/*
 * JIT code unmapped after its samples were taken (V8 frees its code space as
 * node exits) stays in the re-read snapshot: a refresh that landed in node's
 * teardown used to drop it, and every queued sample in JavaScript lost its
 * stack and its perf-map name (test_runtime_node, 2 of 7 CI runs). A new
 * mapping over the old range replaces it.
 */
static void test_unmapped_code_kept(struct proc_images *m)
{
	long page = sysconf(_SC_PAGESIZE);
	const struct sym_mapping *map;
	char *code;

	code = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(code != MAP_FAILED);
	if (code == MAP_FAILED)
		return;
	map = mapped_at(m, code + 1);
	CHECK(map && map->start == (uintptr_t)code && !strcmp(map->path, "[anon]"));
	munmap(code, 2 * page);
	map = mapped_at(m, code + 1);
	CHECK(map && map->start == (uintptr_t)code && map->limit == (uintptr_t)code + 2 * page);
	/* one new page over the first: the new mapping wins, the old is gone */
	CHECK(mmap(code, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		   -1, 0) == code);
	map = mapped_at(m, code + 1);
	CHECK(map && map->start == (uintptr_t)code && map->limit == (uintptr_t)code + page);
	map = mapped_at(m, code + page + 1);
	CHECK(!map);
	munmap(code, page);
}

/* The exec generation current_gen() reports as our process's. */
static uint32_t our_gen;

static bool current_gen(void *arg, pid_t pid, uint32_t gen)
{
	(void)arg;
	return pid != getpid() || gen == our_gen;
}

/*
 * An image whose maps are first read after its process exec'd again gets
 * no snapshot (those maps are the next program's: chroot's exec stack was
 * left [unknown] or named from python3.15's files when a loaded latprof read
 * them late); one read in time keeps its snapshot.
 */
static void test_replaced_image(struct proc_images *m)
{
	struct sym_process *before;
	struct proc_image *img;
	uint64_t failed = m->snapshot_failed;
	void *extra;

	m->current = current_gen;
	our_gen = 8;
	CHECK(proc_images_snapshot(m, getpid(), 7) == -ESRCH);
	img = proc_images_find(m, getpid(), 7);
	CHECK(img && !img->sym && img->next_refresh_ns == 0);
	CHECK(m->snapshot_failed == failed + 1);

	CHECK(proc_images_snapshot(m, getpid(), 8) == 0);
	img = proc_images_find(m, getpid(), 8);
	before = img ? img->sym : NULL;
	CHECK(before);
	our_gen = 9;
	/* the maps changed (a mapping more), but they are generation 9's */
	extra = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(extra != MAP_FAILED);
	CHECK(proc_images_snapshot(m, getpid(), 8) == -ESRCH);
	img = proc_images_find(m, getpid(), 8);
	CHECK(img && img->sym == before);
	if (extra != MAP_FAILED)
		munmap(extra, 4096);
	m->current = NULL;
}

static int refreshed_calls;

static void count_refreshed(void *arg, pid_t pid, uint32_t gen)
{
	(void)arg;
	CHECK(pid == getpid() && gen == 8);
	refreshed_calls++;
}

/*
 * A scheduled re-read tells the caller only when it read the image's maps:
 * told after a re-read that found the image replaced by an exec, the caller
 * looked for Python in the next program's maps as this image's, and that
 * interpreter's asyncio tasks were walked twice (every await charged twice).
 */
static void test_refresh_replaced(struct symbolizer *sym)
{
	struct proc_images m = { .sym = sym, .current = current_gen,
				 .refreshed = count_refreshed };
	struct proc_image *img;
	void *extra;

	our_gen = 8;
	CHECK(proc_images_snapshot(&m, getpid(), 8) == 0);
	img = proc_images_find(&m, getpid(), 8);
	CHECK(img && img->next_refresh_ns);
	if (!img)
		return;
	img->next_refresh_ns = 1;	/* due */
	proc_images_refresh(&m, 0);
	CHECK(refreshed_calls == 1);
	/* exec'ed (generation 9) before the next re-read: the same maps */
	our_gen = 9;
	img->next_refresh_ns = 1;
	proc_images_refresh(&m, 0);
	CHECK(refreshed_calls == 1);
	/* and other maps */
	extra = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(extra != MAP_FAILED);
	img = proc_images_find(&m, getpid(), 8);
	img->next_refresh_ns = 1;
	proc_images_refresh(&m, 0);
	CHECK(refreshed_calls == 1);
	img = proc_images_find(&m, getpid(), 8);
	CHECK(img && img->sym && img->next_refresh_ns == 0);
	if (extra != MAP_FAILED)
		munmap(extra, 4096);
	proc_images_release(&m);
}

static bool ended(struct proc_images *m, uint32_t gen)
{
	struct proc_image *img = proc_images_find(m, getpid(), gen);

	return img && img->ended && !img->next_refresh_ns;
}

/*
 * Images end from the process's watermark up (procimg.h, ended_below):
 * ending every generation from 0 at each exec was quadratic (16,600 execs
 * of one process: 9 s of latprof's CPU, 1,700 events lost under ASan).
 */
static void test_images_end(struct symbolizer *sym)
{
	struct proc_images m = { .sym = sym };
	pid_t pid = getpid();

	CHECK(proc_images_snapshot(&m, pid, 0) == 0);
	CHECK(proc_images_snapshot(&m, pid, 1) == 0);
	CHECK(proc_images_snapshot(&m, pid, 2) == 0);
	CHECK(ended(&m, 0) && ended(&m, 1) && !ended(&m, 2));
	CHECK(proc_images_nr_processes(&m) == 1);
	/* an image read late, below the newest: ended by the next exec */
	CHECK(proc_images_snapshot(&m, pid, 5) == 0);
	CHECK(ended(&m, 2));
	CHECK(proc_images_snapshot(&m, pid, 4) == 0);
	CHECK(!ended(&m, 4));
	CHECK(proc_images_snapshot(&m, pid, 6) == 0);
	CHECK(ended(&m, 4) && ended(&m, 5) && !ended(&m, 6));
	proc_images_stop_refresh(&m, pid, 6);
	CHECK(ended(&m, 6));
	/* the pid reused: its generation 1 read again, then its exit ends it */
	CHECK(proc_images_snapshot(&m, pid, 1) == 0);
	CHECK(!ended(&m, 1));
	proc_images_stop_refresh(&m, pid, 1);
	CHECK(ended(&m, 1));
	CHECK(proc_images_nr_processes(&m) == 1);
	CHECK(proc_images_nr_ended(&m) == 6);
	proc_images_release(&m);
}

/* The digest covers executable mappings only, and each one's whole line. */
static void test_digest(void)
{
	const char *a = "559-55a r-xp 00001000 08:01 12 /bin/x\n"
			"55a-55b rw-p 00002000 08:01 12 /bin/x\n";
	const char *b = "559-55a r-xp 00001000 08:01 12 /bin/x\n"
			"55a-55c rw-p 00002000 08:01 12 /bin/x\n";
	const char *c = "559-55a r-xp 00001000 08:01 12 /bin/x\n"
			"7f0-7f1 r-xp 00000000 08:01 13 /lib/libc.so.6\n";

	CHECK(sym_maps_digest(a) == sym_maps_digest(b));
	CHECK(sym_maps_digest(a) != sym_maps_digest(c));
	CHECK(sym_maps_digest(a) != sym_maps_digest(""));
	CHECK(sym_maps_digest("x") == sym_maps_digest(""));
}

int main(void)
{
	char path[] = "/tmp/latprof-test-XXXXXX";
	struct proc_images m = { 0 };
	struct proc_image *img;
	void *mem = MAP_FAILED;
	int fd;

	m.sym = symbolizer_new(NULL);
	CHECK(m.sym);
	if (!m.sym)
		return check_exit();
	test_digest();
	test_exited_keeps_snapshot(&m);
	test_unmapped_code_kept(&m);
	test_replaced_image(&m);
	test_images_end(m.sym);
	test_refresh_replaced(m.sym);
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && proc_image_modules_refused(img) == 0);

	/* not ELF, mapped executable: libdwfl refuses it */
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 8192) ||
	    (mem = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "skip: executable file mapping: %s\n", strerror(errno));
		goto out;
	}
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && proc_image_modules_refused(img) == 1);

	munmap(mem, 4096);
	mem = MAP_FAILED;
	CHECK(proc_images_snapshot(&m, getpid(), 0) == 0);
	img = proc_images_find(&m, getpid(), 0);
	CHECK(img && img->sym && sym_process_modules_refused(img->sym) == 0);
	CHECK(img && proc_image_modules_refused(img) == 1);

	/* a new exec generation starts from its own files */
	CHECK(proc_images_snapshot(&m, getpid(), 1) == 0);
	img = proc_images_find(&m, getpid(), 1);
	CHECK(img && proc_image_modules_refused(img) == 0);
out:
	if (mem != MAP_FAILED)
		munmap(mem, 4096);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	proc_images_release(&m);
	symbolizer_free(m.sym);
	return check_exit();
}
