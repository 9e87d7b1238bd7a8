// SPDX-License-Identifier: GPL-2.0-only
/*
 * Weighted stacks with merging: frames are interned, so a stack is an array
 * of pointers and two stacks are equal when their pointer arrays are.
 */
#include "flamegraph/flame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/strtab.h"
#include "src/lib/util.h"

struct flame {
	struct strtab *names;
	struct { struct flame_stack *items; size_t nr, alloc; } stacks;
	size_t *slots;		/* open addressing: stack index + 1 */
	size_t nr_slots;
	uint64_t total, total2;
	int sorted;
};

static uint64_t stack_hash(const char *const *frames, size_t nr)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < nr; i++) {
		h ^= (uintptr_t)frames[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return h;
}

struct flame *flame_new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->names = strtab_new();
	if (!f->names) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void flame_free(struct flame *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->stacks.nr; i++)
		free(f->stacks.items[i].frames);
	free(f->stacks.items);
	free(f->slots);
	strtab_free(f->names);
	free(f);
}

/* Rebuild the slots for the stacks there are, with room for as many again. */
static int flame_rehash(struct flame *f)
{
	size_t n = 1024, i, j;
	size_t *slots;

	/* sized from the stacks, not the old table: after sorting there is none */
	while (n < (f->stacks.nr + 1) * 4)
		n *= 2;
	slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->stacks.nr; i++) {
		const struct flame_stack *s = &f->stacks.items[i];

		j = stack_hash(s->frames, s->nr_frames) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	free(f->slots);
	f->slots = slots;
	f->nr_slots = n;
	return 0;
}

static int flame_insert(struct flame *f, const char **frames, size_t nr, uint64_t weight,
			uint64_t weight2)
{
	struct flame_stack *s;
	size_t i;

	if ((f->stacks.nr + 1) * 2 > f->nr_slots && flame_rehash(f))
		return -ENOMEM;
	i = stack_hash(frames, nr) & (f->nr_slots - 1);
	for (; f->slots[i]; i = (i + 1) & (f->nr_slots - 1)) {
		s = &f->stacks.items[f->slots[i] - 1];
		if (s->nr_frames == nr && !memcmp(s->frames, frames, nr * sizeof(*frames))) {
			s->weight += weight;
			s->weight2 += weight2;
			free(frames);
			return 0;
		}
	}
	if (array_grow(&f->stacks, f->stacks.nr + 1))
		return -ENOMEM;
	s = &f->stacks.items[f->stacks.nr++];
	s->frames = frames;
	s->nr_frames = nr;
	s->weight = weight;
	s->weight2 = weight2;
	f->slots[i] = f->stacks.nr;
	f->sorted = 0;
	return 0;
}

int flame_add(struct flame *f, const char *const *frames, size_t nr, uint64_t weight)
{
	return flame_add_pair(f, frames, nr, weight, 0);
}

int flame_add_pair(struct flame *f, const char *const *frames, size_t nr, uint64_t weight,
		   uint64_t weight2)
{
	const char **copy;
	size_t i;
	int err;

	if (!weight && !weight2)
		return 0;
	/* stacks add up into frames: every per-frame sum must fit too */
	if (f->total + weight < f->total || f->total2 + weight2 < f->total2)
		return -ERANGE;
	copy = calloc(nr ? nr : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		copy[i] = strtab_intern(f->names, frames[i]);
		if (!copy[i]) {
			free(copy);
			return -ENOMEM;
		}
	}
	err = flame_insert(f, copy, nr, weight, weight2);
	if (err) {
		free(copy);
		return err;
	}
	f->total += weight;
	f->total2 += weight2;
	return 0;
}

size_t flame_nr_stacks(const struct flame *f)
{
	return f->stacks.nr;
}

uint64_t flame_total(const struct flame *f)
{
	return f->total;
}

uint64_t flame_total2(const struct flame *f)
{
	return f->total2;
}

static int stack_cmp(const void *a, const void *b)
{
	const struct flame_stack *x = a, *y = b;
	size_t i, n = x->nr_frames < y->nr_frames ? x->nr_frames : y->nr_frames;
	int c;

	for (i = 0; i < n; i++) {
		if (x->frames[i] == y->frames[i])
			continue;
		c = strcmp(x->frames[i], y->frames[i]);
		if (c)
			return c;
	}
	return (x->nr_frames > y->nr_frames) - (x->nr_frames < y->nr_frames);
}

const struct flame_stack *flame_stacks(struct flame *f)
{
	if (!f->sorted && f->stacks.nr) {
		array_sort(f->stacks.items, f->stacks.nr, sizeof(*f->stacks.items), stack_cmp);
		/* the hash slots point at old positions: rebuild them */
		free(f->slots);
		f->slots = NULL;
		f->nr_slots = 0;
		flame_rehash(f);
		f->sorted = 1;
	}
	return f->stacks.items;
}

int flame_write_folded(struct flame *f, FILE *out)
{
	const struct flame_stack *s = flame_stacks(f);
	size_t i, j;

	for (i = 0; i < f->stacks.nr; i++) {
		if (!s[i].weight)	/* only a second weight: nothing to fold */
			continue;
		for (j = 0; j < s[i].nr_frames; j++) {
			if (j)
				fputc(';', out);
			fputs(s[i].frames[j], out);
		}
		fprintf(out, " %llu\n", (unsigned long long)s[i].weight);
	}
	return ferror(out) ? -EIO : 0;
}
