// SPDX-License-Identifier: GPL-2.0-only
/*
 * Function scopes of a CU (see scopes.h). Scopes nest, so their ranges form
 * a tree: the innermost range holding pc is reached from the last range
 * starting at or below pc by following parents, since any range holding pc
 * that starts no later also holds that range's start.
 */
#include "symbolize/scopes.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "src/lib/util.h"

struct scope_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;		/* the scope's DIE */
	int32_t parent;		/* enclosing scope's range, -1 for none */
	uint32_t depth;
	bool subprogram;
};

struct scope_index {
	struct { struct scope_range *items; size_t nr, alloc; } r;	/* DIE order */
	uint32_t *by_lo;	/* range indexes sorted by (lo, depth) */
};

/* The range of scopes [first, first + nr) that holds @lo, else the first. */
static int32_t parent_of(const struct scope_index *x, int32_t first, size_t nr, Dwarf_Addr lo)
{
	size_t i;

	if (first < 0)
		return -1;
	for (i = 0; i < nr; i++)
		if (x->r.items[first + i].lo <= lo && lo < x->r.items[first + i].hi)
			return first + i;
	return first;
}

/* Add the ranges of @die if it is a function scope; then its children. */
static int walk(struct scope_index *x, Dwarf_Die *die, int32_t pfirst, size_t pnr,
		uint32_t depth)
{
	int tag = dwarf_tag(die), err = 0;
	bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int32_t first = pfirst;
	size_t nr = pnr;
	Dwarf_Die child;

	if (scope) {
		size_t before = x->r.nr;

		while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
			if (start >= end)
				continue;
			if (array_grow(&x->r, x->r.nr + 1))
				return -ENOMEM;
			x->r.items[x->r.nr] = (struct scope_range){
				.lo = start, .hi = end, .die = dwarf_dieoffset(die),
				.parent = tag == DW_TAG_subprogram ? -1 :
					  parent_of(x, pfirst, pnr, start),
				.depth = depth, .subprogram = tag == DW_TAG_subprogram,
			};
			x->r.nr++;
		}
		/* an abstract definition has no ranges: nothing below it is code */
		if (x->r.nr == before)
			return 0;
		first = before;
		nr = x->r.nr - before;
	}
	if (dwarf_child(die, &child))
		return 0;
	do {
		err = walk(x, &child, first, nr, depth + 1);
	} while (!err && !dwarf_siblingof(&child, &child));
	return err;
}

static int cmp_lo(const void *a, const void *b, void *arg)
{
	const struct scope_index *idx = arg;
	const struct scope_range *x = &idx->r.items[*(const uint32_t *)a];
	const struct scope_range *y = &idx->r.items[*(const uint32_t *)b];

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

struct scope_index *scope_index_build(Dwarf_Die *cudie)
{
	struct scope_index *x = calloc(1, sizeof(*x));
	size_t i;

	if (!x || walk(x, cudie, -1, 0, 0))
		goto fail;
	x->by_lo = malloc((x->r.nr ? x->r.nr : 1) * sizeof(*x->by_lo));
	if (!x->by_lo)
		goto fail;
	for (i = 0; i < x->r.nr; i++)
		x->by_lo[i] = i;
	array_sort_r(x->by_lo, x->r.nr, sizeof(*x->by_lo), cmp_lo, x);
	return x;
fail:
	scope_index_free(x);
	errno = ENOMEM;
	return NULL;
}

void scope_index_free(struct scope_index *x)
{
	if (!x)
		return;
	free(x->r.items);
	free(x->by_lo);
	free(x);
}

size_t scope_index_lookup(const struct scope_index *x, Dwarf_Addr pc, Dwarf_Off *offs,
			  size_t max)
{
	size_t lo = 0, hi = x->r.nr, n = 0;
	int32_t i;

	/* the last range starting at or below pc */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->r.items[x->by_lo[mid]].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	for (i = x->by_lo[lo - 1]; i >= 0; i = x->r.items[i].parent)
		if (x->r.items[i].lo <= pc && pc < x->r.items[i].hi)
			break;
	for (; i >= 0 && n < max; i = x->r.items[i].parent) {
		offs[n++] = x->r.items[i].die;
		if (x->r.items[i].subprogram)
			break;
	}
	return n;
}
