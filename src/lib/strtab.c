// SPDX-License-Identifier: GPL-2.0-only
/*
 * String interning with an open-addressing hash table of pointers into
 * individually allocated copies. Pointers never move, so callers may keep them
 * until the table is freed.
 */
#include "src/lib/strtab.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct strtab {
	char **slots;
	size_t nr_slots;	/* power of two */
	size_t nr;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

struct strtab *strtab_new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->nr_slots = 1024;
	t->slots = calloc(t->nr_slots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void strtab_free(struct strtab *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_slots; i++)
		free(t->slots[i]);
	free(t->slots);
	free(t);
}

static int strtab_rehash(struct strtab *t)
{
	size_t n = t->nr_slots * 2, i, j;
	char **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->nr_slots; i++) {
		if (!t->slots[i])
			continue;
		j = hash_bytes(t->slots[i], strlen(t->slots[i])) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nr_slots = n;
	return 0;
}

const char *strtab_intern_len(struct strtab *t, const char *s, size_t len)
{
	size_t i;
	char *copy;

	if (t->nr * 2 >= t->nr_slots && strtab_rehash(t))
		return NULL;
	i = hash_bytes(s, len) & (t->nr_slots - 1);
	while (t->slots[i]) {
		if (!strncmp(t->slots[i], s, len) && t->slots[i][len] == '\0')
			return t->slots[i];
		i = (i + 1) & (t->nr_slots - 1);
	}
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->slots[i] = copy;
	t->nr++;
	return copy;
}

const char *strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_len(t, s, strlen(s));
}

size_t strtab_size(const struct strtab *t)
{
	return t->nr;
}
