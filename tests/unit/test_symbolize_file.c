// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolizer_file(): offline resolution of a file's addresses; the sharing
 * of binaries by build-id (two copies of one file at two paths are one
 * binary, so an address is resolved once for both); the bounded cache.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

__attribute__((noinline)) int probe_function(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int probe_other(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int probe_third(int x)
{
	return x * 7 + 3;
}

static uint64_t file_vaddr(void *fn)
{
	Dl_info info;

	CHECK(dladdr(fn, &info) && info.dli_fbase);
	return (uintptr_t)fn - (uintptr_t)info.dli_fbase;
}

static const char *function_at(struct symbolizer *s, const char *path, void *fn)
{
	const struct sym_location *l = symbolizer_file(s, path, file_vaddr(fn));

	return l ? l->frames[l->nr_frames - 1].function : NULL;
}

/*
 * With room for two cached addresses, a third is still resolved right (its
 * location lasts until the next call), and the cached ones stay cached.
 */
static void test_bounded_cache(const char *path)
{
	struct symbolizer_opts o = { .no_kernel = true, .max_cached = 2 };
	struct symbolizer *s = symbolizer_new(&o);
	const struct sym_location *first, *again;

	CHECK(s != NULL);
	if (!s)
		return;
	first = symbolizer_file(s, path, file_vaddr((void *)probe_function));
	CHECK_STR(first ? first->frames[first->nr_frames - 1].function : NULL, "probe_function");
	CHECK_STR(function_at(s, path, (void *)probe_other), "probe_other");
	CHECK_STR(function_at(s, path, (void *)probe_third), "probe_third");	/* past the bound */
	CHECK_STR(function_at(s, path, (void *)probe_third), "probe_third");
	again = symbolizer_file(s, path, file_vaddr((void *)probe_function));
	CHECK(again && first && again->frames == first->frames);	/* still cached */
	CHECK_STR(function_at(s, path, (void *)file_vaddr), "file_vaddr");
	/* nothing past the bound is kept: both used the one spare location */
	CHECK(symbolizer_file(s, path, file_vaddr((void *)probe_third)) ==
	      symbolizer_file(s, path, file_vaddr((void *)file_vaddr)));
	symbolizer_free(s);
}

static void copy(const char *from, const char *to)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	struct symbolizer_opts o = { .no_kernel = true };
	struct symbolizer *s = symbolizer_new(&o);
	char self[4096], a[] = "/tmp/latprof-symfile-a-XXXXXX", b[] = "/tmp/latprof-symfile-b-XXXXXX";
	const struct sym_location *la, *lb;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	Dl_info info;
	uint64_t vaddr;
	int fa = mkstemp(a), fb = mkstemp(b);

	CHECK(s && n > 0 && fa >= 0 && fb >= 0);
	self[n > 0 ? n : 0] = 0;
	close(fa);
	close(fb);
	copy(self, a);
	copy(self, b);
	/* a PIE's first segment is at 0: the file address is the offset from the base */
	CHECK(dladdr((void *)probe_function, &info) && info.dli_fbase);
	vaddr = (uintptr_t)probe_function - (uintptr_t)info.dli_fbase;

	la = symbolizer_file(s, a, vaddr);
	lb = symbolizer_file(s, b, vaddr);
	CHECK(la && lb);
	if (la && lb) {
		CHECK_STR(la->frames[la->nr_frames - 1].function, "probe_function");
		CHECK(la->frames[0].file && strstr(la->frames[0].file, "test_symbolize_file.c"));
		/* one binary for both copies: the frames were resolved once */
		CHECK(la->frames == lb->frames);
	}
	CHECK(symbolizer_file(s, "/nonexistent/latprof", vaddr) == NULL && errno == ENOENT);
	test_bounded_cache(a);
	symbolizer_free(s);
	unlink(a);
	unlink(b);
	return check_exit();
}
