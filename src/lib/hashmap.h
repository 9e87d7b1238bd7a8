/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small open-addressing hash map, a leaf utility like util.h and strtab.h
 * (symbolize/ may use it). A key is an object pointer plus two integers (a
 * binary and an address, a device and an inode, interned strings, ...); a
 * value is a non-NULL pointer the map does not own, or a small integer stored
 * with HASHMAP_NUM (ids, indexes + 1). There is no removal: maps only grow
 * until released.
 */
#ifndef LATPROF_HASHMAP_H
#define LATPROF_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* A non-zero integer as a value, and back. */
#define HASHMAP_NUM(n) ((void *)(uintptr_t)(n))
#define HASHMAP_TO_NUM(v) ((uint64_t)(uintptr_t)(v))

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
