/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One ELF binary (executable, shared library or the vDSO) with its own libdwfl
 * session, private to symbolize/. It translates file offsets to the file's
 * virtual addresses and resolves those to frames: the symbol table for the
 * function, DWARF (in the file or separate debuginfo found by build-id or
 * .gnu_debuglink) for file:line and inline chains. It knows nothing about
 * processes; the symbolizer caches one binary per file.
 */
#ifndef LATPROF_SYMBOLIZE_BINARY_H
#define LATPROF_SYMBOLIZE_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

struct strtab;
struct binary;
struct debuginfo;

/* A growable array of frames, filled by binary_resolve(). */
struct sym_frames {
	struct sym_frame *items;
	size_t nr, alloc;
};

/*
 * The ELF file open on @fd, which is consumed (closed now or when the binary
 * is freed) even on failure. @path names the file for separate-debuginfo
 * lookups (.gnu_debuglink is searched next to it), which follow @di (see
 * symbolize/debuginfo.h; borrowed, must outlive the binary) when the
 * binary's symbols or lines are first needed. A file that is not ELF still
 * gives a binary, one that resolves nothing. Returns NULL with errno set
 * only on ENOMEM.
 */
struct binary *binary_new(int fd, const char *path, const struct debuginfo *di,
			  struct strtab *strs);

/*
 * The vDSO of this process, which is the one every native process of the
 * running kernel maps. NULL with errno set if there is none (ENOENT) or on
 * failure.
 */
struct binary *binary_new_vdso(const struct debuginfo *di, struct strtab *strs);

/* NULL is a no-op. */
void binary_free(struct binary *b);

/* A descriptor of the file (owned by @b, do not close), -1 if none. */
int binary_fd(const struct binary *b);

/*
 * Did libdwfl refuse the file (not ELF, truncated, corrupt)? Then @b
 * resolves nothing and unwinding cannot use it. Cannot fail.
 */
bool binary_refused(const struct binary *b);

/* Lower-case hex GNU build-id, "" if none. Borrowed from the strtab. */
const char *binary_build_id(const struct binary *b);

/* The vDSO image size in bytes (page-rounded), 0 for other binaries. */
uint64_t binary_vdso_size(const struct binary *b);

/*
 * Translate @file_offset (where a mapping put it) to the ELF virtual address
 * through the PT_LOAD segment that holds it, preferring executable ones.
 * Returns false if no segment does (or @b is not ELF).
 */
bool binary_file_to_vaddr(const struct binary *b, uint64_t file_offset, uint64_t *vaddr);

/*
 * Append the frames for ELF virtual address @vaddr to @out, innermost first
 * (see struct sym_location). @is_return: look up the call at @vaddr - 1, but
 * report offsets for @vaddr. @no_lines: symbol table only. At least one frame
 * is appended; its function is NULL when no symbol covers the address. Names
 * are interned in @strs. Returns 0 or -ENOMEM.
 */
int binary_resolve(struct binary *b, uint64_t vaddr, bool is_return, bool no_lines,
		   struct strtab *strs, struct sym_frames *out);

#endif
