// SPDX-License-Identifier: GPL-2.0-only
/*
 * Building the frame tree from sorted stacks: consecutive stacks share their
 * common prefix, so each stack only closes the frames where it leaves the
 * previous one and opens its own from there.
 */
#include "flamegraph/frametree.h"

#include <errno.h>
#include <stdlib.h>

#include "src/lib/util.h"

struct open_path {
	size_t *items;	/* node index at each depth */
	size_t nr, alloc;
};

static int open_node(struct frame_tree *t, struct open_path *path, const char *name)
{
	struct frame_node *n;
	size_t parent = path->items[path->nr - 1];

	if (array_grow(&t->nodes, t->nodes.nr + 1) || array_grow(path, path->nr + 1))
		return -ENOMEM;
	n = &t->nodes.items[t->nodes.nr];
	*n = (struct frame_node){ .name = name, .parent = parent, .depth = path->nr };
	path->items[path->nr++] = t->nodes.nr++;
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	return 0;
}

/* Close the open frames deeper than @keep: their subtrees are complete. */
static void close_to(struct frame_tree *t, struct open_path *path, size_t keep)
{
	while (path->nr > keep)
		t->nodes.items[path->items[--path->nr]].end = t->nodes.nr;
}

/* Frames of @s already open, counting the root. Names are interned. */
static size_t shared_prefix(const struct frame_tree *t, const struct open_path *path,
			    const struct flame_stack *s)
{
	size_t d = 1;

	while (d < path->nr && d - 1 < s->nr_frames &&
	       t->nodes.items[path->items[d]].name == s->frames[d - 1])
		d++;
	return d;
}

static int add_stack(struct frame_tree *t, struct open_path *path, const struct flame_stack *s)
{
	size_t d = shared_prefix(t, path, s), i;
	int err;

	close_to(t, path, d);
	for (; d - 1 < s->nr_frames; d++) {
		err = open_node(t, path, s->frames[d - 1]);
		if (err)
			return err;
	}
	for (i = 0; i < path->nr; i++) {
		t->nodes.items[path->items[i]].weight += s->weight;
		t->nodes.items[path->items[i]].weight2 += s->weight2;
	}
	return 0;
}

int frame_tree_build(struct frame_tree *t, struct flame *f, const char *root_name)
{
	const struct flame_stack *s = flame_stacks(f);
	struct open_path path = { 0 };
	size_t i, n = flame_nr_stacks(f);
	int err = -ENOMEM;

	if (array_grow(&t->nodes, 1) || array_grow(&path, 1))
		goto out;
	t->nodes.items[0] = (struct frame_node){ .name = root_name };
	t->nodes.nr = 1;
	path.items[path.nr++] = 0;
	for (i = 0, err = 0; !err && i < n; i++)
		err = add_stack(t, &path, &s[i]);
	close_to(t, &path, 0);
out:
	free(path.items);
	return err;
}

void frame_tree_release(struct frame_tree *t)
{
	free(t->nodes.items);
	*t = (struct frame_tree){ 0 };
}
