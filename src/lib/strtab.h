/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * String interning. A strtab owns one copy of each distinct string; the
 * pointers it returns stay valid and unique until strtab_free(), so interned
 * strings compare equal exactly when their pointers do.
 */
#ifndef LATPROF_STRTAB_H
#define LATPROF_STRTAB_H

#include <stddef.h>

struct strtab;

/* A new empty table, or NULL with errno set. */
struct strtab *strtab_new(void);
/* Frees the table and every string it returned. NULL is a no-op. */
void strtab_free(struct strtab *t);
/* The table's copy of @s (interned on first use), or NULL on ENOMEM. */
const char *strtab_intern(struct strtab *t, const char *s);
/* Same for the first @len bytes of @s. */
const char *strtab_intern_len(struct strtab *t, const char *s, size_t len);
/* Number of distinct strings. Cannot fail. */
size_t strtab_size(const struct strtab *t);

#endif
