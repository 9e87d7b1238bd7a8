// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolizer_file(): offline resolution of a file's addresses, and the
 * sharing of binaries by build-id: two copies of one file at two paths are
 * one binary, so an address is resolved once for both.
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
	symbolizer_free(s);
	unlink(a);
	unlink(b);
	return check_exit();
}
