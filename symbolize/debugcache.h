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
 * cache_dir() (src/util.h); from then on libdw maps that copy and reads
 * only the pages it touches, which the kernel can drop again.
 *
 * A copy is used only in place of the file it was made from, found by the
 * usual search (debuginfo.h) and matched by build-id: the cache never
 * supplies debuginfo that is no longer installed. Files without a build-id
 * are used as they are. Copies are kept within DEBUGCACHE_MAX_BYTES, the
 * least recently used removed first. Any failure (no cache directory, a
 * read-only or full disk) leaves the file found as it was: slower, never
 * wrong.
 */
#ifndef LATPROF_SYMBOLIZE_DEBUGCACHE_H
#define LATPROF_SYMBOLIZE_DEBUGCACHE_H

#include <elfutils/libdwfl.h>

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
