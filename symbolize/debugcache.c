// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inflated copies of compressed separate debuginfo (debugcache.h): libelf
 * inflates each SHF_COMPRESSED section (elf_compress) and writes the copy
 * under a temporary name, renamed into place when whole.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf, mkostemp */
#endif
#include "symbolize/debugcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "src/util.h"

#define DEBUGCACHE_SUBDIR "debug/.build-id"
/* A temporary file this old was left by a process that died writing it. */
#define DEBUGCACHE_STALE_TMP_S 3600

/* Whether @elf has a section libdw would inflate at every open. */
static bool has_compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return true;
	return false;
}

/* Section @scn of @src, inflated if compressed, as section @n of the copy. */
static int copy_section(Elf_Scn *scn, Elf_Scn *n)
{
	Elf_Data *d, *nd;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return -1;
	if ((sh.sh_flags & SHF_COMPRESSED) &&
	    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
		return -1;
	d = elf_getdata(scn, NULL);
	if (d) {
		nd = elf_newdata(n);
		if (!nd)
			return -1;
		nd->d_buf = d->d_buf;
		nd->d_type = d->d_type;
		nd->d_size = d->d_size;
		nd->d_align = d->d_align;
		nd->d_version = d->d_version;
		nd->d_off = 0;
	}
	return gelf_update_shdr(n, &sh) ? 0 : -1;
}

/*
 * Write @src to @fd with every compressed section inflated; libelf lays the
 * sections out again. 0, or -1 (a libelf error).
 */
static int write_inflated(Elf *src, int fd)
{
	size_t i, phnum, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *dst;
	int err = -1;

	if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &phnum) ||
	    elf_getshdrstrndx(src, &shstrndx) || shstrndx >= SHN_LORESERVE)
		return -1;
	dst = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!dst)
		return -1;
	if (!gelf_newehdr(dst, gelf_getclass(src)) || (phnum && !gelf_newphdr(dst, phnum)))
		goto out;
	for (i = 0; i < phnum; i++)
		if (!gelf_getphdr(src, i, &ph) || !gelf_update_phdr(dst, i, &ph))
			goto out;
	while ((scn = elf_nextscn(src, scn))) {
		Elf_Scn *n = elf_newscn(dst);

		if (!n || copy_section(scn, n))
			goto out;
	}
	eh.e_shstrndx = shstrndx;
	if (gelf_update_ehdr(dst, &eh) && elf_update(dst, ELF_C_WRITE) >= 0)
		err = 0;
out:
	elf_end(dst);
	return err;
}

/* mkdir -p for the directories of @path (its last component is a file). */
static int make_dirs(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

struct cached {
	char *path;
	off_t size;
	time_t mtime;
};

struct cached_list {
	struct cached *items;
	size_t nr, alloc;
};

static int cmp_older(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Read one xx/ directory of the cache into @v; stale temporaries removed. */
static void list_dir(const char *dir, struct cached_list *v, off_t *total)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char *p;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (lstat(p, &st) || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (!str_has_suffix(e->d_name, ".debug")) {
			if (time(NULL) - st.st_mtime > DEBUGCACHE_STALE_TMP_S)
				unlink(p);
			free(p);
			continue;
		}
		if (array_grow(v, v->nr + 1)) {
			free(p);
			break;
		}
		v->items[v->nr++] = (struct cached){ p, st.st_size, st.st_mtime };
		*total += st.st_size;
	}
	if (d)
		closedir(d);
}

/* Remove the least recently used copies but @keep until all fit the budget. */
static void evict(const char *root, const char *keep)
{
	struct cached_list v = { 0 };
	DIR *d = opendir(root);
	struct dirent *e;
	off_t total = 0;
	size_t i;
	char *p;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || asprintf(&p, "%s/%s", root, e->d_name) < 0)
			continue;
		list_dir(p, &v, &total);
		free(p);
	}
	if (d)
		closedir(d);
	if (v.nr)
		array_sort(v.items, v.nr, sizeof(*v.items), cmp_older);
	for (i = 0; i < v.nr; i++) {
		if ((unsigned long long)total > DEBUGCACHE_MAX_BYTES && strcmp(v.items[i].path, keep) &&
		    !unlink(v.items[i].path))
			total -= v.items[i].size;
		free(v.items[i].path);
	}
	free(v.items);
}

/* Write the inflated copy of @src at @path (under @root). 0 or -1. */
static int make_copy(Elf *src, const char *root, char *path)
{
	char *tmp;
	int fd, err;

	if (make_dirs(path) || asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	err = fd < 0 ? -1 : write_inflated(src, fd);
	if (fd >= 0 && close(fd))
		err = -1;
	if (!err && rename(tmp, path))
		err = -1;
	if (err && fd >= 0)
		unlink(tmp);
	free(tmp);
	if (!err)
		evict(root, path);
	return err;
}

/* Build-id @bits (@len bytes) in hex; false when it is none or too long. */
static bool hex_id(const unsigned char *bits, ssize_t len, char *hex, size_t size)
{
	ssize_t i;

	if (len < 2 || (size_t)len * 2 + 1 > size)
		return false;
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	return true;
}

/* The hex build-id of the file of @elf. */
static bool elf_build_id(Elf *elf, char *hex, size_t size)
{
	const void *bits;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &bits);

	return hex_id(bits, len, hex, size);
}

/* The hex build-id of @mod's own file. */
static bool module_build_id(Dwfl_Module *mod, char *hex, size_t size)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	return hex_id(bits, dwfl_module_build_id(mod, &bits, &vaddr), hex, size);
}

/* The cache's directory for copies, and the copy's path for build-id @hex. */
static bool copy_path(const char *hex, char **root, char **path)
{
	const char *dir = cache_dir();

	*root = *path = NULL;
	if (!dir || asprintf(root, "%s/" DEBUGCACHE_SUBDIR, dir) < 0)
		return false;
	if (asprintf(path, "%s/%.2s/%s.debug", *root, hex, hex + 2) < 0) {
		free(*root);
		*root = *path = NULL;
		return false;
	}
	return true;
}

int debugcache_open(Dwfl_Module *mod, char **file)
{
	char hex[2 * 64 + 1], *root, *path;
	struct stat st;
	int fd = -1;

	if (!module_build_id(mod, hex, sizeof(hex)) || !copy_path(hex, &root, &path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		futimens(fd, NULL);	/* recently used: evicted last */
		free(*file);
		*file = path;
		path = NULL;
	}
	free(root);
	free(path);
	return fd;
}

void debugcache_add(Dwfl_Module *mod, int fd)
{
	char hex[2 * 64 + 1], own[2 * 64 + 1], *root = NULL, *path = NULL;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (elf && has_compressed(elf) && elf_build_id(elf, hex, sizeof(hex)) &&
	    module_build_id(mod, own, sizeof(own)) && !strcmp(hex, own) &&
	    copy_path(hex, &root, &path) && access(path, F_OK))
		make_copy(elf, root, path);
	/* the sections inflated for the copy go with it */
	elf_end(elf);
	free(root);
	free(path);
}
