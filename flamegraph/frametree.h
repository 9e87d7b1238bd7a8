/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The merge step of SVG rendering: a flame's stacks as one tree of frames,
 * each frame the sum of the stacks through it. Nodes are stored in pre-order
 * with siblings sorted by name (as folded text sorts), so a subtree is a
 * contiguous run of nodes and layout is a single pass.
 */
#ifndef LATPROF_FRAMETREE_H
#define LATPROF_FRAMETREE_H

#include <stddef.h>
#include <stdint.h>

#include "flamegraph/flame.h"

struct frame_node {
	const char *name;	/* borrowed from the flame */
	uint64_t weight, weight2;
	size_t parent;		/* index; the root is its own parent */
	size_t end;		/* one past the subtree's last node */
	size_t depth;		/* root 0, a stack's first frame 1 */
};

struct frame_tree {
	struct { struct frame_node *items; size_t nr, alloc; } nodes;
	size_t max_depth;
};

/*
 * Build @t (zeroed by the caller) from @f, under a root node named
 * @root_name, which holds the totals. Names stay borrowed from @f: keep @f
 * until frame_tree_release(). Returns 0 or -ENOMEM.
 */
int frame_tree_build(struct frame_tree *t, struct flame *f, const char *root_name);

/* Free the nodes; @t may be reused. */
void frame_tree_release(struct frame_tree *t);

#endif
