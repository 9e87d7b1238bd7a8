// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pyeval: the split-off part of _PyEval_EvalFrameDefault, found
 * without symbols, is the one its .symtab names _PyEval_EvalFrameDefault.cold
 * (the file's own, or its separate debuginfo's by build-id), and a part too
 * small to be the loop (pyenv's builds: 4 to 8 bytes, one jump to an abort)
 * is no answer rather than a wrong one, as is a loop in one piece:
 *  - Debian's stripped /usr/bin/python3.11, against python3.11-dbg's symbols;
 *  - every pyenv libpython3.8-3.13 (symbols in the file);
 *  - Debian testing's python3.13/3.14/3.15 in tests/pyroot/mkroot.sh's root,
 *    when it is there, against the ranges their -dbg packages' symbols gave
 *    (matched by build-id, so another build is skipped).
 * Files missing from the machine are skipped and named on stderr.
 */
#include "symbolize/pyeval.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "tests/unit/check.h"

/* A cold part this small is an error stub, not the loop. */
#define COLD_MIN 64

static bool symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_value) {
				*value = sym.st_value;
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

/* A file with .symtab names its cold part if it has one. */
static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* The build-id of @elf as hex, "" if none. */
static void build_id(Elf *elf, char *hex, size_t cap)
{
	const void *id;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);

	hex[0] = '\0';
	for (ssize_t i = 0; i < len && (size_t)(2 * i + 3) <= cap; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const uint8_t *)id)[i]);
}

/* The .cold symbol's range from @elf or its debuginfo under /usr/lib/debug. */
static bool cold_symbol(Elf *elf, uint64_t *start, uint64_t *size)
{
	char hex[128], path[300];
	bool found;
	Elf *dbg;
	int fd;

	if (symbol(elf, "_PyEval_EvalFrameDefault.cold", start, size))
		return true;
	build_id(elf, hex, sizeof(hex));
	if (!hex[0])
		return false;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	dbg = elf_begin(fd, ELF_C_READ, NULL);
	found = dbg && symbol(dbg, "_PyEval_EvalFrameDefault.cold", start, size);
	if (dbg)
		elf_end(dbg);
	close(fd);
	return found;
}

/*
 * @path's cold part: the one its symbols name, or, without symbols, the
 * range @want_start..+@want_size if its build-id is @want_id. 1 checked, 0
 * skipped.
 */
static int check_file(const char *path, const char *want_id, uint64_t want_start,
		      uint64_t want_size)
{
	uint64_t eval, eval_size, start = 0, end = 0, sym_start = 0, sym_size = 0;
	char hex[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0) {
		fprintf(stderr, "skip: %s: not on this machine\n", path);
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && symbol(elf, "_PyEval_EvalFrameDefault", &eval, &eval_size));
	if (!elf || check_failures) {
		close(fd);
		return 0;
	}
	build_id(elf, hex, sizeof(hex));
	if (!cold_symbol(elf, &sym_start, &sym_size) && !has_symtab(elf)) {
		if (!want_id || strcmp(hex, want_id)) {
			fprintf(stderr, "skip: %s: no symbols, not the build known here\n",
				path);
			elf_end(elf);
			close(fd);
			return 0;
		}
		sym_start = want_start;
		sym_size = want_size;
	}
	err = py_eval_cold_part(elf, eval, eval_size, &start, &end);
	if (sym_size >= COLD_MIN) {
		CHECK(!err && start == sym_start && end == sym_start + sym_size);
	} else {
		CHECK(err == -ENOENT);
	}
	fprintf(stderr, "%s: .cold %#lx+%lu, found %s %#lx-%#lx\n", path, (unsigned long)sym_start,
		(unsigned long)sym_size, err ? "none" : "", (unsigned long)start,
		(unsigned long)end);
	/* not a function's entry at all: nothing */
	CHECK(py_eval_cold_part(elf, eval, 0, &start, &end) == -ENOENT);
	elf_end(elf);
	close(fd);
	return 1;
}

int main(void)
{
	static const struct {
		const char *path, *id;
		uint64_t start, size;
	} pyroot[] = {
		/* from python3.1X-dbg's .symtab of Debian testing, November 2026 */
		{ "/var/cache/latprof/pyroot/root/usr/bin/python3.13",
		  "01bf30f984912a8c43fd4d623013c511c27e73c9", 0x43d839, 77285 },
		{ "/var/cache/latprof/pyroot/root/usr/bin/python3.14",
		  "eed13024f47cd567a7396bbfddf2692d02e90bbc", 0x43e429, 84389 },
		{ "/var/cache/latprof/pyroot/root/usr/bin/python3.15",
		  "fa647a3a900258aafe6354fc605c11ec04d18aa6", 0x44115d, 82040 },
	};
	const char *home = getenv("HOME");
	char path[4200];
	int checked = 0;

	elf_version(EV_CURRENT);
	checked += check_file("/usr/bin/python3.11", NULL, 0, 0);
	for (int minor = 8; minor <= 13; minor++) {
		char pattern[64];
		FILE *f;

		snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions/3.%d.*/lib",
			 home ? home : "", minor);
		snprintf(path, sizeof(path), "ls -d %s 2>/dev/null | head -n 1", pattern);
		f = popen(path, "r");
		if (!f || !fgets(path, sizeof(path) - 32, f))
			path[0] = '\0';
		if (f)
			pclose(f);
		path[strcspn(path, "\n")] = '\0';
		if (!path[0]) {
			fprintf(stderr, "skip: pyenv 3.%d: not on this machine\n", minor);
			continue;
		}
		snprintf(path + strlen(path), 32, "/libpython3.%d.so.1.0", minor);
		checked += check_file(path, NULL, 0, 0);
	}
	for (size_t i = 0; i < sizeof(pyroot) / sizeof(pyroot[0]); i++)
		checked += check_file(pyroot[i].path, pyroot[i].id, pyroot[i].start,
				      pyroot[i].size);
	if (!checked && !check_failures) {
		fprintf(stderr, "skip: no CPython on this machine\n");
		return 77;
	}
	return check_exit();
}
