// SPDX-License-Identifier: GPL-2.0-only
/* Open-addressing aggregation of unwound stacks (see stackagg.h). */
#include "src/stackagg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

struct stackagg {
	struct { struct stackagg_entry **items; size_t nr, alloc; } entries;
	size_t *slots;		/* entry index + 1 */
	size_t nr_slots;
};

static uint64_t entry_hash(const struct stackagg_key *k, const uint64_t *pcs, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	const unsigned char *b = (const unsigned char *)k;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	for (i = 0; i < n; i++)
		h = (h ^ pcs[i]) * 1099511628211ULL ^ (h >> 31);
	return h;
}

static bool entry_equal(const struct stackagg_entry *e, const struct stackagg_key *k,
			const uint64_t *pcs, size_t n)
{
	return e->nr_pcs == n && !memcmp(&e->key, k, sizeof(*k)) &&
	       !memcmp(e->pcs, pcs, n * sizeof(*pcs));
}

struct stackagg *stackagg_new(void)
{
	return calloc(1, sizeof(struct stackagg));
}

void stackagg_free(struct stackagg *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->entries.nr; i++) {
		free(a->entries.items[i]->hist);
		free(a->entries.items[i]);
	}
	free(a->entries.items);
	free(a->slots);
	free(a);
}

void stackagg_clear(struct stackagg *a)
{
	size_t i;

	for (i = 0; i < a->entries.nr; i++) {
		free(a->entries.items[i]->hist);
		free(a->entries.items[i]);
	}
	a->entries.nr = 0;
	if (a->slots)
		memset(a->slots, 0, a->nr_slots * sizeof(*a->slots));
}

/* The slots made again for the entries, @n of them (a power of two). */
static int slots_rebuild(struct stackagg *a, size_t n)
{
	size_t *slots = calloc(n, sizeof(*slots)), i, j;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < a->entries.nr; i++) {
		const struct stackagg_entry *e = a->entries.items[i];

		j = entry_hash(&e->key, e->pcs, e->nr_pcs) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	free(a->slots);
	a->slots = slots;
	a->nr_slots = n;
	return 0;
}

static int stackagg_rehash(struct stackagg *a)
{
	size_t n = a->nr_slots ? a->nr_slots * 2 : 1024;

	while (n < 2 * (a->entries.nr + 1))	/* after a failed stackagg_keep */
		n *= 2;
	return slots_rebuild(a, n);
}

size_t stackagg_keep(struct stackagg *a, stackagg_keep_fn keep, void *arg)
{
	size_t i, n = 0, dropped;

	for (i = 0; i < a->entries.nr; i++) {
		struct stackagg_entry *e = a->entries.items[i];

		if (keep(arg, e)) {
			a->entries.items[n++] = e;
		} else {
			free(e->hist);
			free(e);
		}
	}
	dropped = a->entries.nr - n;
	a->entries.nr = n;
	/* a failed rebuild keeps the old slots: rebuilt at the next add's rehash */
	if (dropped && a->nr_slots && slots_rebuild(a, a->nr_slots)) {
		free(a->slots);
		a->slots = NULL;
		a->nr_slots = 0;
	}
	return dropped;
}

static int entry_add(struct stackagg_entry *e, const struct stackagg_values *v)
{
	if (v->hist && v->value) {
		if (!e->hist)
			e->hist = calloc(1, sizeof(*e->hist));
		if (!e->hist)
			return -ENOMEM;
		sys_stat_add(e->hist, v->value);
	}
	e->count += v->value > 0;
	e->sum.value += v->value;
	e->sum.blocked_ns += v->blocked_ns;
	e->sum.preempted_ns += v->preempted_ns;
	e->sum.stall_ns += v->stall_ns;
	e->sum.await_ns += v->await_ns;
	if (v->value > e->max_value)
		e->max_value = v->value;
	return 0;
}

int stackagg_add(struct stackagg *a, const struct stackagg_key *key, const uint64_t *pcs,
		 size_t nr_pcs, const struct stackagg_values *v)
{
	struct stackagg_entry *e;
	size_t i;

	if ((a->entries.nr + 1) * 2 > a->nr_slots && stackagg_rehash(a))
		return -ENOMEM;
	i = entry_hash(key, pcs, nr_pcs) & (a->nr_slots - 1);
	for (; a->slots[i]; i = (i + 1) & (a->nr_slots - 1)) {
		e = a->entries.items[a->slots[i] - 1];
		if (entry_equal(e, key, pcs, nr_pcs))
			return entry_add(e, v);
	}
	if (array_grow(&a->entries, a->entries.nr + 1))
		return -ENOMEM;
	e = calloc(1, sizeof(*e) + nr_pcs * sizeof(*pcs));
	if (!e)
		return -ENOMEM;
	e->key = *key;
	if (entry_add(e, v)) {
		free(e);
		return -ENOMEM;
	}
	e->nr_pcs = nr_pcs;
	memcpy(e->pcs, pcs, nr_pcs * sizeof(*pcs));
	a->entries.items[a->entries.nr++] = e;
	a->slots[i] = a->entries.nr;
	return 0;
}

size_t stackagg_nr(const struct stackagg *a)
{
	return a->entries.nr;
}

const struct stackagg_entry *stackagg_get(const struct stackagg *a, size_t i)
{
	return a->entries.items[i];
}
