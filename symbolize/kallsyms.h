/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel symbols from a /proc/kallsyms-format file, private to symbolize/.
 * Owns a sorted table of text symbols and one mapping per kernel image or
 * module ("[kernel.kallsyms]", "[nf_tables]", "[bpf]" ...). It does not look
 * at vmlinux or module ELF files, so there are no kernel file:line numbers.
 */
#ifndef LATPROF_SYMBOLIZE_KALLSYMS_H
#define LATPROF_SYMBOLIZE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

struct strtab;

struct ksym {
	uint64_t addr;
	const char *name;	/* in kallsyms.names; NULL marks the end of a text range */
	uint32_t map;		/* index into kallsyms.maps */
	uint32_t rank;		/* alias preference while loading */
};

struct kallsyms_names;

/* Embedded in the symbolizer; all-zero is "not loaded". */
struct kallsyms {
	struct kallsyms_names *names;	/* the names kept, in chunks that never move */
	struct { struct ksym *items; size_t nr, alloc; } syms;	/* sorted by addr */
	struct { struct sym_mapping *items; size_t nr, alloc; } maps;	/* [0]: kernel */
	bool usable;		/* false: no addresses (kptr_restrict, no_kernel) */
};

/*
 * Load @path (NULL: load nothing) and the module sizes in @modules_path (NULL:
 * none; it only sharpens where the last function of a module ends). Mapping
 * paths are interned in @strs. When the file cannot be read or shows only zero
 * addresses, @k still works: every address then falls in one catch-all
 * "[kernel.kallsyms]" mapping without symbols. Returns 0 or -ENOMEM (@k is
 * then released).
 */
int kallsyms_load(struct kallsyms *k, const char *path, const char *modules_path,
		  struct strtab *strs);

/* Free everything @k owns; it is all-zero afterwards. */
void kallsyms_release(struct kallsyms *k);

/*
 * Free @k's symbols and names but hand its mappings to the caller, who frees
 * the array (mappings returned by kallsyms_lookup() point into it); @k is
 * all-zero afterwards. NULL when @k held none.
 */
struct sym_mapping *kallsyms_release_keep_maps(struct kallsyms *k);

/*
 * Look up @addr in a loaded @k. *@map: the kernel image or module containing
 * it, NULL if none. *@name: the text symbol containing it (borrowed from @k),
 * NULL if none, starting at *@sym_addr. Cannot fail.
 */
void kallsyms_lookup(const struct kallsyms *k, uint64_t addr, const struct sym_mapping **map,
		     const char **name, uint64_t *sym_addr);

#endif
