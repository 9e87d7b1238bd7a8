/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inflated copies of compressed separate debuginfo, private to symbolize/.
 *
 * Debian's -dbg packages (and most distributions') ship their DWARF
 * sections SHF_COMPRESSED. libdw inflates every such section into the heap
 * each time the file is opened: 10 MB for libc6-dbg's 4 MB file, in every
 * record and every serve pull, and the zlib time with it. The first time
 * such a file is used, a copy with each section inflated is written (by
 * libelf) under CACHE/debug/.build-id/xx/yyyy.debug, where CACHE is
 * cache_dir() (src/lib/util.h); from then on libdw maps that copy and reads
 * only the pages it touches, which the kernel can drop again.
 *
 * A copy is offered only while a debug file for the binary is still where
 * the search looks (--debug-dir, /usr/lib/debug: the build-id path or the
 * .gnu_debuglink name), in place of searching it, and only when the copy's
 * own build-id is the binary's: the cache never is the only source of
 * debuginfo no longer installed. Files without a build-id, fetched from
 * debuginfod, or with a relative .gnu_debugaltlink are read as they are.
 * Copies are kept within DEBUGCACHE_MAX_BYTES, the least recently used
 * removed first; one file may take a quarter of it, and a copy is not
 * written where the disk has less than twice its size free. The tree is
 * this user's own (0700); one that is not, or a symlink in it, is not
 * used. Any failure (no cache directory, a read-only or full disk) leaves
 * the file found as it was: slower, never wrong.
 */
#ifndef LATPROF_SYMBOLIZE_DEBUGCACHE_H
#define LATPROF_SYMBOLIZE_DEBUGCACHE_H

#include <elfutils/libdwfl.h>

/* Room for a build-id in hex (GNU build-ids are 20 bytes). */
#define DEBUGCACHE_HEX_MAX (2 * 64 + 1)

/* What the copies may take on disk together. */
#define DEBUGCACHE_MAX_BYTES (2048ULL << 20)

/*
 * The descriptor of the inflated copy made for @mod's build-id, or -1 when
 * there is none (or the cache is off). *@file (malloc'ed, may be NULL) is
 * then replaced by the copy's path. Ask only when the file it was made from
 * can still be found. Cannot fail.
 */
int debugcache_open(Dwfl_Module *mod, char **file);

/*
 * Make the inflated copy of debug file @fd (found for @mod, not taken) if it
 * has compressed sections and the cache has no copy yet. Cannot fail.
 */
void debugcache_add(Dwfl_Module *mod, int fd);

#endif
