// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/iotrack: paths are resolved like the kernel would (against the cwd or
 * the directory descriptor of an openat), I/O of dup'ed descriptors lands on
 * their file, peers are named, and entries survive the trip through
 * metadata.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/iotrack.h"
#include "tests/unit/check.h"

static const char *resolve(const char *base, const char *path)
{
	static char out[256];	/* a test helper: one result at a time */

	if (path_resolve(base, path, out, sizeof(out)))
		return "(error)";
	return out;
}

static void test_path_resolve(void)
{
	char small[8];

	CHECK_STR(resolve("/srv/app", "model.bin"), "/srv/app/model.bin");
	CHECK_STR(resolve("/srv/app", "./data/../model.bin"), "/srv/app/model.bin");
	CHECK_STR(resolve("/srv/app", "../../../etc//passwd"), "/etc/passwd");
	CHECK_STR(resolve("/srv/app", "/abs/./x"), "/abs/x");
	CHECK_STR(resolve("/", "."), "/");
	CHECK_STR(resolve(NULL, "/a/b/.."), "/a");
	CHECK(path_resolve("/a", "bcdefghij", small, sizeof(small)) == -ENAMETOOLONG);
}

static const struct io_entry *find(const struct iotrack *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->entries.nr; i++)
		if (!strcmp(t->entries.items[i].name, name))
			return &t->entries.items[i];
	return NULL;
}

/* A /proc-shaped tree for path resolution: ROOT/42/cwd -> /work/dir. */
static void test_open_and_io(void)
{
	char root[] = "/tmp/latprof-test-iotrack-XXXXXX", dir[64], link[80];
	const struct io_entry *e;
	struct iotrack t;
	uint8_t addr[4] = { 10, 0, 0, 7 }, six[16] = { 0 };

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/42", root);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(link, sizeof(link), "%s/cwd", dir);
	CHECK(symlink("/work/dir", link) == 0);
	CHECK(iotrack_init(&t, root) == 0);
	CHECK(iotrack_open(&t, 42, 5, -100, 1, "model.bin") == 0);
	CHECK(iotrack_open(&t, 42, 6, -100, 2, "/etc/hosts") == 0);
	/* openat(6 = "/etc/hosts" as if a directory, "x") */
	CHECK(iotrack_open(&t, 42, 7, 6, 3, "../x") == 0);
	CHECK(iotrack_open(&t, 42, 8, -100, 4, "./model.bin") == 0);
	iotrack_io(&t, 1, 1000, 0, 50, 2);
	iotrack_io(&t, 1, 24, 0, 10, 1);	/* a dup of fd 5: same id */
	iotrack_io(&t, 4, 1024, 0, 5, 1);
	iotrack_io(&t, 99, 1, 1, 1, 1);		/* unknown id: ignored */
	e = find(&t, "/work/dir/model.bin");
	CHECK(e && e->opens == 2 && e->bytes_in == 2048 && e->io_ns == 65 && e->ops == 4);
	CHECK(e && e->pids == 1);
	CHECK(find(&t, "/etc/x") != NULL);
	CHECK(iotrack_peer(&t, 42, false, 5, AF_INET, addr, 8080) == 0);
	CHECK(iotrack_peer(&t, 42, true, 6, AF_INET, addr, 55555) == 0);
	six[15] = 1;
	CHECK(iotrack_peer(&t, 42, false, 7, AF_INET6, six, 443) == 0);
	iotrack_io(&t, 5, 10, 20, 30, 2);
	e = find(&t, "10.0.0.7:8080");
	CHECK(e && e->kind == IO_KIND_CONNECT && e->bytes_in == 10 && e->bytes_out == 20);
	e = find(&t, "10.0.0.7");
	CHECK(e && e->kind == IO_KIND_ACCEPT);
	CHECK(find(&t, "[::1]:443") != NULL);
	iotrack_release(&t);
	unlink(link);
	rmdir(dir);
	rmdir(root);
}

static void test_roundtrip(void)
{
	struct profile *p = profile_new();
	struct io_entries e = { 0 };
	struct iotrack t;

	CHECK(p && iotrack_init(&t, "/nonexistent") == 0);
	CHECK(iotrack_open(&t, 1, 3, -100, 1, "/data/a b=c.bin") == 0);
	CHECK(iotrack_open(&t, 1, 4, -100, 2, "/data/small") == 0);
	iotrack_io(&t, 1, 22263577, 0, 9000, 1600);
	iotrack_io(&t, 2, 10, 5, 90000, 3);
	CHECK(iotrack_store(&t, p) == 0);
	CHECK(profile_set_meta(p, "io.77", "kind=bogus opens=1") == 0);
	CHECK(io_entries_load(p, &e) == 0);
	CHECK(e.nr == 2);
	io_entries_sort(e.items, e.nr);
	CHECK(e.nr == 2 && !strcmp(e.items[0].name, "/data/small") && e.items[0].io_ns == 90000);
	CHECK(e.nr == 2 && !strcmp(e.items[1].name, "/data/a b=c.bin") &&
	      e.items[1].bytes_in == 22263577 && e.items[1].ops == 1600 &&
	      e.items[1].kind == IO_KIND_FILE);
	io_entries_free(&e);
	iotrack_release(&t);
	profile_free(p);
}

int main(void)
{
	test_path_resolve();
	test_open_and_io();
	test_roundtrip();
	return check_exit();
}
