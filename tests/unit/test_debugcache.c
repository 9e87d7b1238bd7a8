// SPDX-License-Identifier: GPL-2.0-only
/*
 * The inflated copies of compressed separate debuginfo (symbolize/
 * debugcache.h), through the symbolizer: a stripped copy of this test
 * whose DWARF is in a compressed debug file found by build-id under a
 * debug directory (objcopy makes both, as Debian's -dbg packages ship
 * them). The first symbolizer writes the inflated copy; the next reads it
 * (its time touched) and answers the same; no copy is used once the file
 * it was made from is gone; LATPROF_CACHE_DIR= writes none.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "symbolize/symbolize.h"
#include "tests/unit/check.h"

__attribute__((noinline)) int probe_function(int x)
{
	return x * 3 + 1;
}

static int run(const char *fmt, const char *a, const char *b)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

/* The GNU build-id of @path in hex, "" if none. */
static void build_id_of(const char *path, char *hex, size_t size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	const unsigned char *bits = NULL;
	ssize_t len = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&bits) : -1, i;

	hex[0] = 0;
	for (i = 0; i < len && (size_t)(2 * i + 2) < size; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* Sections of @path compressed, or -1 when it cannot be read; *@debug_info: has one. */
static int compressed_sections(const char *path, int *debug_info)
{
	int fd = open(path, O_RDONLY), n = 0;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	*debug_info = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		n = -1;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		n += !!(sh.sh_flags & SHF_COMPRESSED);
		*debug_info |= name && !strcmp(name, ".debug_info") && sh.sh_size > 0;
	}
out:
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n;
}

/* The innermost frame's file:line of probe_function in @stripped, with @dir searched. */
static const char *line_of(const char *stripped, const char *dir, uint64_t vaddr, uint32_t *line)
{
	const char *dirs[] = { dir };
	struct symbolizer_opts o = { .no_kernel = true, .debug_dirs = dirs, .nr_debug_dirs = 1 };
	struct symbolizer *s = symbolizer_new(&o);
	const struct sym_location *l = s ? symbolizer_file(s, stripped, vaddr) : NULL;
	static char file[4096];

	*line = 0;
	file[0] = 0;
	CHECK(l != NULL);
	if (l) {
		CHECK_STR(l->frames[l->nr_frames - 1].function, "probe_function");
		if (l->frames[0].file)
			snprintf(file, sizeof(file), "%s", l->frames[0].file);
		*line = l->frames[0].line;
	}
	symbolizer_free(s);
	return file[0] ? file : NULL;
}

int main(void)
{
	char self[4096], dir[] = "/tmp/latprof-debugcache-XXXXXX", hex[160];
	char dd[4200], debug[4400], stripped[4200], cache[4200], copy[4400];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint32_t line = 0, again = 0;
	const char *file;
	struct stat st;
	Dl_info info;
	uint64_t vaddr;
	int has_info;

	elf_version(EV_CURRENT);
	CHECK(n > 0 && mkdtemp(dir));
	if (n <= 0 || !dir[0])
		return check_exit();
	self[n] = 0;
	build_id_of(self, hex, sizeof(hex));
	if (strlen(hex) < 4) {
		fprintf(stderr, "skip: %s has no build-id\n", self);
		return 77;
	}
	CHECK(dladdr((void *)probe_function, &info) && info.dli_fbase);
	vaddr = (uintptr_t)probe_function - (uintptr_t)info.dli_fbase;
	snprintf(dd, sizeof(dd), "%s/dd", dir);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", dd, hex, hex + 2);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(copy, sizeof(copy), "%s/debug/.build-id/%.2s/%s.debug", cache, hex, hex + 2);
	CHECK(run("mkdir -p \"$(dirname '%s')\"%s", debug, "") == 0);
	CHECK(run("objcopy --only-keep-debug --compress-debug-sections=zlib '%s' '%s'", self,
		  debug) == 0);
	CHECK(run("objcopy --strip-debug '%s' '%s'", self, stripped) == 0);
	CHECK(compressed_sections(debug, &has_info) > 0 && has_info);
	setenv("LATPROF_CACHE_DIR", cache, 1);

	/* first use: the answer from the compressed file, and a copy made */
	file = line_of(stripped, dd, vaddr, &line);
	CHECK(file && strstr(file, "test_debugcache.c") && line > 0);
	CHECK(compressed_sections(copy, &has_info) == 0 && has_info);
	{
		char copy_id[160];

		build_id_of(copy, copy_id, sizeof(copy_id));
		CHECK_STR(copy_id, hex);
	}

	/* next use: the copy is read (its time touched), the same answer */
	CHECK(run("touch -d @1000 '%s'%s", copy, "") == 0);
	file = line_of(stripped, dd, vaddr, &again);
	CHECK(file && strstr(file, "test_debugcache.c") && again == line);
	CHECK(stat(copy, &st) == 0 && st.st_mtime > 1000);

	/* a copy damaged on disk (zeros, as after a crash): removed, made again */
	CHECK(run("dd if=/dev/zero of='%s' bs=4096 count=4 conv=notrunc status=none%s", copy,
		  "") == 0);
	file = line_of(stripped, dd, vaddr, &again);
	CHECK(file && strstr(file, "test_debugcache.c") && again == line);
	CHECK(compressed_sections(copy, &has_info) == 0 && has_info);

	/*
	 * The budget: planted older copies go first, the new one stays; a
	 * stale temporary is removed, a fresh one and other files are not.
	 */
	{
		char planted[4500], stale[4600], fresh[4600], other[4600], budget[32], cmd[64];
		long long size;

		snprintf(planted, sizeof(planted), "%s/debug/.build-id/ab/cdef.debug", cache);
		snprintf(stale, sizeof(stale), "%s.Ab12Cd", planted);
		snprintf(fresh, sizeof(fresh), "%s.Zz98Yy", planted);
		snprintf(other, sizeof(other), "%s/debug/.build-id/ab/notes.txt", cache);
		CHECK(run("mkdir -m 700 -p \"$(dirname '%s')\"%s", planted, "") == 0);
		/* the budget is 5 copies (one may take a quarter); the planted file alone is over it */
		CHECK(stat(copy, &st) == 0);
		size = (long long)st.st_size;
		snprintf(budget, sizeof(budget), "%lld", size * 5);
		snprintf(cmd, sizeof(cmd), "head -c %lld /dev/urandom", size * 5 + 1);
		CHECK(run("%s >'%s'", cmd, planted) == 0);
		CHECK(run("touch -d @2000 '%s'%s", planted, "") == 0);
		CHECK(run("touch -d @2000 '%s' '%s'", stale, other) == 0);
		CHECK(run("touch '%s'%s", fresh, "") == 0);
		CHECK(unlink(copy) == 0);
		setenv("LATPROF_DEBUG_CACHE_MAX", budget, 1);
		file = line_of(stripped, dd, vaddr, &again);
		CHECK(file && again == line);
		CHECK(stat(copy, &st) == 0);
		CHECK(stat(planted, &st) != 0 && stat(stale, &st) != 0);
		CHECK(stat(fresh, &st) == 0 && stat(other, &st) == 0);
		unsetenv("LATPROF_DEBUG_CACHE_MAX");
	}

	/* the file it was made from is gone: no line information */
	CHECK(unlink(debug) == 0);
	CHECK(line_of(stripped, dd, vaddr, &again) == NULL && again == 0);

	/* the cache off: the answer still, and nothing written */
	CHECK(run("objcopy --only-keep-debug --compress-debug-sections=zlib '%s' '%s'", self,
		  debug) == 0);
	CHECK(run("rm -rf '%s'%s", cache, "") == 0);
	setenv("LATPROF_CACHE_DIR", "", 1);
	file = line_of(stripped, dd, vaddr, &again);
	CHECK(file && again == line);
	CHECK(stat(cache, &st) != 0);

	/* a cache directory that is not one (a file): no copy, the answer still */
	CHECK(run("touch '%s'%s", cache, "") == 0);
	setenv("LATPROF_CACHE_DIR", cache, 1);
	file = line_of(stripped, dd, vaddr, &again);
	CHECK(file && again == line);

	/* one not this user's own (group-writable): not read, not written */
	CHECK(run("rm -f '%s'; mkdir -m 777 -p '%s/debug'", cache, cache) == 0);
	file = line_of(stripped, dd, vaddr, &again);
	CHECK(file && again == line);
	CHECK(stat(copy, &st) != 0);

	CHECK(run("rm -rf '%s'%s", dir, "") == 0);
	return check_exit();
}
