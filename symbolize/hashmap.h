/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small open-addressing hash map private to symbolize/: the caches of
 * binaries, resolved frames and locations. A key is an object pointer plus
 * two integers (a binary and an address, a device and an inode, ...); a value
 * is a non-NULL pointer the map does not own. There is no removal: caches only
 * grow until the symbolizer is freed.
 */
#ifndef LATPROF_SYMBOLIZE_HASHMAP_H
#define LATPROF_SYMBOLIZE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct hashmap_slot {
	const void *obj;
	uint64_t a;
	uint64_t b;
	void *value;		/* NULL: empty slot */
};

/* Embedded in its owner; all-zero is a valid empty map. */
struct hashmap {
	struct hashmap_slot *slots;
	size_t nr_slots;	/* zero or a power of two */
	size_t nr;
};

/* The value stored under (@obj, @a, @b), or NULL. Cannot fail. */
void *hashmap_get(const struct hashmap *h, const void *obj, uint64_t a, uint64_t b);

/*
 * Store non-NULL @value under (@obj, @a, @b), replacing any previous value.
 * Returns 0 or -ENOMEM (the map is then unchanged).
 */
int hashmap_put(struct hashmap *h, const void *obj, uint64_t a, uint64_t b, void *value);

/* Free the slots (not the values); the map is empty and reusable afterwards. */
void hashmap_release(struct hashmap *h);

#endif
