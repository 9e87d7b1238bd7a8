/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An index of one compilation unit's function scopes (subprograms and
 * inlined subroutines, with their PC ranges), built once by walking the DIE
 * tree, so that the inline chain at an address is a binary search instead of
 * a walk of the CU's DIEs per address (what dwarf_getscopes does). Private
 * to symbolize/.
 */
#ifndef LATPROF_SYMBOLIZE_SCOPES_H
#define LATPROF_SYMBOLIZE_SCOPES_H

#include <elfutils/libdw.h>
#include <stddef.h>

struct scope_index;

/* The index of the CU @cudie, or NULL with errno set (ENOMEM). */
struct scope_index *scope_index_build(Dwarf_Die *cudie);

/* NULL is a no-op. */
void scope_index_free(struct scope_index *x);

/*
 * The DIE offsets of the scopes containing CU address @pc, innermost first,
 * ending with the subprogram (out-of-line function) that holds them: at most
 * @max of them into @offs. Returns how many (0: no function covers @pc).
 */
size_t scope_index_lookup(const struct scope_index *x, Dwarf_Addr pc, Dwarf_Off *offs,
			  size_t max);

#endif
