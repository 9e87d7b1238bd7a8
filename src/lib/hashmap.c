// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linear-probing hash map with a load factor of at most 1/2. Keys are hashed
 * with a 64-bit mixer (splitmix64's finalizer), which spreads the page-aligned
 * addresses and small integers this map mostly sees.
 */
#include "src/lib/hashmap.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t key_hash(const void *obj, uint64_t a, uint64_t b)
{
	return mix64(mix64(mix64((uintptr_t)obj) ^ a) ^ b);
}

static struct hashmap_slot *slot_find(struct hashmap_slot *slots, size_t nr_slots,
				      const void *obj, uint64_t a, uint64_t b)
{
	size_t mask = nr_slots - 1;
	size_t i = key_hash(obj, a, b) & mask;

	/* the load factor keeps at least one empty slot, so this ends */
	while (slots[i].value) {
		if (slots[i].obj == obj && slots[i].a == a && slots[i].b == b)
			break;
		i = (i + 1) & mask;
	}
	return &slots[i];
}

void *hashmap_get(const struct hashmap *h, const void *obj, uint64_t a, uint64_t b)
{
	if (!h->nr_slots)
		return NULL;
	return slot_find(h->slots, h->nr_slots, obj, a, b)->value;
}

static int hashmap_rehash(struct hashmap *h)
{
	size_t n = h->nr_slots ? h->nr_slots * 2 : 64, i;
	struct hashmap_slot *slots, *dst;

	if (n > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < h->nr_slots; i++) {
		if (!h->slots[i].value)
			continue;
		dst = slot_find(slots, n, h->slots[i].obj, h->slots[i].a, h->slots[i].b);
		*dst = h->slots[i];
	}
	free(h->slots);
	h->slots = slots;
	h->nr_slots = n;
	return 0;
}

int hashmap_put(struct hashmap *h, const void *obj, uint64_t a, uint64_t b, void *value)
{
	struct hashmap_slot *slot;
	int err;

	if ((h->nr + 1) * 2 > h->nr_slots) {
		err = hashmap_rehash(h);
		if (err)
			return err;
	}
	slot = slot_find(h->slots, h->nr_slots, obj, a, b);
	if (!slot->value)
		h->nr++;
	slot->obj = obj;
	slot->a = a;
	slot->b = b;
	slot->value = value;
	return 0;
}

void hashmap_release(struct hashmap *h)
{
	free(h->slots);
	h->slots = NULL;
	h->nr_slots = 0;
	h->nr = 0;
}
