/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DWARF unwinding of a copied user stack, private to symbolize/: libdwfl's
 * unwinder (CFI from .eh_frame/.debug_frame) over one process's modules,
 * reading memory only from the stack snapshot, and through code without CFI
 * (JIT code, Python's perf trampolines) with checked frame-pointer steps of
 * its own. The symbolizer keeps one unwinder per process snapshot.
 */
#ifndef LATPROF_SYMBOLIZE_UNWIND_H
#define LATPROF_SYMBOLIZE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

struct unwinder;

/* One executable mapping of the process. */
struct unwind_module {
	const char *path;	/* module name (for libdwfl messages) */
	int fd;			/* duplicated by unwinder_new; -1: not for libdwfl */
	uint64_t start, limit;	/* the mapping's addresses */
	uint64_t offset;	/* and its file offset */
	bool jit;		/* anonymous or memfd: code generated at run time */
};

/*
 * An unwinder over @mods, every executable mapping of the process sorted by
 * address, as one snapshot of its maps saw them; NULL with errno set on
 * failure. The mappings with a descriptor are handed to libdwfl (one module
 * per path); the others still tell a return address into code without CFI
 * (JIT, a file libdwfl refused) from data. @pid is libdwfl's process (<= 0:
 * none). The mappings come from the caller, not from a later read of
 * /proc/@pid/maps: the samples of a process are often unwound after it
 * exited, when its maps read empty.
 */
struct unwinder *unwinder_new(int pid, const struct unwind_module *mods, size_t nr);
/* NULL is a no-op. */
void unwinder_free(struct unwinder *u);

/*
 * Modules of unwinder_new()'s @mods (one per distinct path) that libdwfl
 * refused, or that could not be handed to it (no descriptor left): no
 * unwinding through them. Cannot fail.
 */
size_t unwinder_nr_refused(const struct unwinder *u);

/* See symbolizer_unwind(). */
int unwinder_run(struct unwinder *u, const struct sym_unwind_input *in, uint64_t *pcs,
		 size_t max, size_t *nr, enum sym_unwind_status *status);

#endif
