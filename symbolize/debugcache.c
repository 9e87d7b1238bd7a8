// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inflated copies of compressed separate debuginfo (debugcache.h): libelf
 * inflates each SHF_COMPRESSED section (elf_compress) and writes the copy
 * under a temporary name, synced and renamed into place when whole. A copy
 * is read only from a directory tree this user made (0700, no symlinks),
 * and only when its own build-id is the module's: one damaged on disk is
 * removed, and the search goes on without it.
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
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "src/lib/util.h"

#define DEBUGCACHE_SUBDIR "debug"
/* A temporary file this old was left by a process that died writing it. */
#define DEBUGCACHE_STALE_TMP_S 3600
/* The temporary name's suffix: ".XXXXXX" after "yyyy.debug". */
#define DEBUGCACHE_TMP_SUFFIX_LEN 7

/* The budget: DEBUGCACHE_MAX_BYTES, or the hidden LATPROF_DEBUG_CACHE_MAX=BYTES (tests). */
static unsigned long long budget(void)
{
	const char *v = getenv("LATPROF_DEBUG_CACHE_MAX");
	uint64_t n;

	return v && !parse_u64(v, 1, UINT64_MAX, &n) ? n : DEBUGCACHE_MAX_BYTES;
}

/*
 * The bytes @elf takes with its compressed sections inflated, 0 when none
 * is compressed or it has a relative .gnu_debugaltlink (libdw would look
 * for that file beside the copy).
 */
static uint64_t inflated_size(Elf *elf, uint64_t file_size)
{
	uint64_t grow = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Chdr ch;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			return 0;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".gnu_debugaltlink")) {
			d = elf_getdata(scn, NULL);
			if (!d || !d->d_size || ((const char *)d->d_buf)[0] != '/')
				return 0;
		}
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch) && ch.ch_size > sh.sh_size)
			grow += ch.ch_size - sh.sh_size;
	}
	return grow ? file_size + grow : 0;
}

/* Section @scn of @src, inflated if compressed, as section @n of the copy. */
static int copy_section(Elf_Scn *scn, Elf_Scn *n)
{
	Elf_Data *d, *nd;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return -EINVAL;
	if ((sh.sh_flags & SHF_COMPRESSED) &&
	    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
		return -EINVAL;
	d = elf_getdata(scn, NULL);
	if (d) {
		nd = elf_newdata(n);
		if (!nd)
			return -ENOMEM;
		nd->d_buf = d->d_buf;
		nd->d_type = d->d_type;
		nd->d_size = d->d_size;
		nd->d_align = d->d_align;
		nd->d_version = d->d_version;
		nd->d_off = 0;
	}
	return gelf_update_shdr(n, &sh) ? 0 : -EINVAL;
}

/*
 * Write @src to @fd with every compressed section inflated; libelf lays the
 * sections out again (the program headers' offsets are kept: a debug file's
 * segments are not loaded, libdwfl reads their addresses). 0 or -errno.
 */
static int write_inflated(Elf *src, int fd)
{
	size_t i, phnum, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *dst;
	int err = -EINVAL;

	if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &phnum) ||
	    elf_getshdrstrndx(src, &shstrndx) || shstrndx >= SHN_LORESERVE)
		return -EINVAL;
	dst = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!dst)
		return -ENOMEM;
	if (!gelf_newehdr(dst, gelf_getclass(src)) || (phnum && !gelf_newphdr(dst, phnum)))
		goto out;
	for (i = 0; i < phnum; i++)
		if (!gelf_getphdr(src, i, &ph) || !gelf_update_phdr(dst, i, &ph))
			goto out;
	while ((scn = elf_nextscn(src, scn))) {
		Elf_Scn *n = elf_newscn(dst);

		err = n ? copy_section(scn, n) : -ENOMEM;
		if (err)
			goto out;
	}
	err = -EIO;
	eh.e_shstrndx = shstrndx;
	if (gelf_update_ehdr(dst, &eh) && elf_update(dst, ELF_C_WRITE) >= 0)
		err = fsync(fd) ? -errno : 0;
out:
	elf_end(dst);
	return err;
}

/* Whether @path is a directory of this user that only this user can write. */
static bool own_dir(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* mkdir @path (0700) unless it is there; then it must be own_dir(). */
static bool make_dir(const char *path)
{
	return (!mkdir(path, 0700) || errno == EEXIST) && own_dir(path);
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

/* A name the cache writes: "yyyy.debug", or its temporary "yyyy.debug.XXXXXX". */
static bool cache_name(const char *name, bool *tmp)
{
	const char *dot = strstr(name, ".debug");

	if (!dot || dot == name)
		return false;
	*tmp = dot[6] == '.' && strlen(dot + 6) == DEBUGCACHE_TMP_SUFFIX_LEN;
	return !dot[6] || *tmp;
}

/* One xx/ directory of the cache into @v; stale temporaries removed. */
static void list_dir(const char *dir, struct cached_list *v, off_t *total)
{
	DIR *d = own_dir(dir) ? opendir(dir) : NULL;
	struct dirent *e;
	struct stat st;
	bool tmp;
	char *p;

	while (d && (e = readdir(d))) {
		if (!cache_name(e->d_name, &tmp) || asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (lstat(p, &st) || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (tmp) {
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
	unsigned long long max = budget();
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
		if ((unsigned long long)total > max && strcmp(v.items[i].path, keep) &&
		    !unlink(v.items[i].path))
			total -= v.items[i].size;
		free(v.items[i].path);
	}
	free(v.items);
}

/* The build-id @bits (@len bytes) in hex, or false when there is none. */
static bool hex_id(const void *bits, ssize_t len, char *hex, size_t size)
{
	return len >= 2 && hex_encode(bits, len, hex, size);
}

/* The hex build-id of @mod's own file. */
static bool module_build_id(Dwfl_Module *mod, char *hex, size_t size)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	return hex_id(bits, dwfl_module_build_id(mod, &bits, &vaddr), hex, size);
}

/* Whether the file of @fd has the build-id @hex. */
static bool fd_has_build_id(int fd, const char *hex)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	char own[DEBUGCACHE_HEX_MAX];
	const void *bits;
	bool yes;

	yes = elf && hex_id(bits, dwelf_elf_gnu_build_id(elf, &bits), own, sizeof(own)) &&
	      !strcmp(own, hex);
	elf_end(elf);
	return yes;
}

/*
 * The directories for build-id @hex, made if @make, and the copy's path:
 * CACHE/debug/.build-id (*@root) and CACHE/debug/.build-id/xx/yyyy.debug.
 * false when the cache is off, or a directory is not this user's own.
 */
static bool copy_path(const char *hex, bool make, char **root, char **path)
{
	const char *dir = cache_dir();
	char *debug = NULL, *xx = NULL;
	bool ok;

	*root = *path = NULL;
	if (!dir)
		return false;
	if (make && mkdir(dir, 0755) && errno != EEXIST)
		return false;
	ok = asprintf(&debug, "%s/" DEBUGCACHE_SUBDIR, dir) >= 0 &&
	     asprintf(root, "%s/.build-id", debug) >= 0 &&
	     asprintf(&xx, "%s/%.2s", *root, hex) >= 0 &&
	     asprintf(path, "%s/%s.debug", xx, hex + 2) >= 0;
	if (ok)
		ok = make ? make_dir(debug) && make_dir(*root) && make_dir(xx) :
			    own_dir(debug) && own_dir(*root) && own_dir(xx);
	free(debug);
	free(xx);
	if (!ok) {
		free(*root);
		free(*path);
		*root = *path = NULL;
	}
	return ok;
}

/* Write the inflated copy of @src (@size bytes) at @path, under @root. 0 or -errno. */
static int make_copy(Elf *src, uint64_t size, const char *root, const char *path)
{
	struct statvfs vfs;
	char *tmp;
	int fd, err;

	/* one file must not take the budget, nor the disk */
	if (size > budget() / 4 || statvfs(root, &vfs) ||
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < 2 * size)
		return -ENOSPC;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	err = fd < 0 ? -errno : write_inflated(src, fd);
	if (fd >= 0 && close(fd) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err && fd >= 0)
		unlink(tmp);
	free(tmp);
	if (!err)
		evict(root, path);
	return err;
}

int debugcache_open(Dwfl_Module *mod, char **file)
{
	char hex[DEBUGCACHE_HEX_MAX], *root, *path;
	struct stat st;
	int fd;

	if (!module_build_id(mod, hex, sizeof(hex)) || !copy_path(hex, false, &root, &path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
	} else if (fd >= 0 && !fd_has_build_id(fd, hex)) {
		/* damaged (a crash before the data reached the disk): made again */
		close(fd);
		fd = -1;
		unlink(path);
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
	char hex[DEBUGCACHE_HEX_MAX], *root = NULL, *path = NULL;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct stat st;
	uint64_t size;

	size = elf && !fstat(fd, &st) ? inflated_size(elf, st.st_size) : 0;
	if (size && module_build_id(mod, hex, sizeof(hex)) && fd_has_build_id(fd, hex) &&
	    copy_path(hex, true, &root, &path) && access(path, F_OK))
		make_copy(elf, size, root, path);
	/* the sections inflated for the copy go with it */
	elf_end(elf);
	free(root);
	free(path);
}
