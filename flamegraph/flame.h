/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * struct flame: weighted stacks of frame names, the boundary between
 * collection and rendering. Identical stacks merge as they are added. Out
 * comes folded text (root;...;leaf WEIGHT, sorted, so output is
 * deterministic); the SVG renderer will read the same structure.
 */
#ifndef LATPROF_FLAME_H
#define LATPROF_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flame;

struct flame_stack {
	const char **frames;	/* root first; interned, owned by the flame */
	size_t nr_frames;
	uint64_t weight;
	/*
	 * A second weight whose meaning is the caller's: the off-CPU part of
	 * @weight for wall-clock flames, the BEFORE weight for differential ones.
	 * Folded output ignores it.
	 */
	uint64_t weight2;
};

/* A new empty flame, or NULL with errno set. */
struct flame *flame_new(void);
/* NULL is a no-op. */
void flame_free(struct flame *f);

/*
 * Add @weight to the stack @frames[0..nr) (root first); names are copied.
 * A zero weight is ignored. Returns 0, -ENOMEM, or -ERANGE when the total
 * would overflow 64 bits (the flame is unchanged then).
 */
int flame_add(struct flame *f, const char *const *frames, size_t nr, uint64_t weight);

/*
 * flame_add() with a second weight (struct flame_stack.weight2); the stack
 * is ignored only when both are zero, so a stack may have weight 0 and a
 * positive @weight2 (present BEFORE, gone AFTER). Same returns.
 */
int flame_add_pair(struct flame *f, const char *const *frames, size_t nr, uint64_t weight,
		   uint64_t weight2);

/* Number of distinct stacks and the sum of all weights. Cannot fail. */
size_t flame_nr_stacks(const struct flame *f);
uint64_t flame_total(const struct flame *f);
/* The sum of all second weights. Cannot fail. */
uint64_t flame_total2(const struct flame *f);

/* The stacks, sorted by frames (as folded text sorts). Borrowed. */
const struct flame_stack *flame_stacks(struct flame *f);

/* Write folded text, one stack per line, sorted; stacks of weight 0 are left out. 0 or -errno. */
int flame_write_folded(struct flame *f, FILE *out);

#endif
