/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lists of records in a profile's metadata: each record a fixed number of
 * unsigned integers, written "a,b,c;a,b,c;..." in chunks of
 * METARECORDS_PER_CHUNK records under the keys PREFIX.0, PREFIX.1, ...
 * (requests, event-loop stalls). Only numbers: what a record names is
 * looked up elsewhere (a pid in the process table).
 */
#ifndef LATPROF_METARECORDS_H
#define LATPROF_METARECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

#define METARECORDS_PER_CHUNK 500
#define METARECORDS_MAX_FIELDS 32

/*
 * Store @nr records of @fields (<= METARECORDS_MAX_FIELDS) numbers each,
 * @v row by row, as PREFIX.N chunks. 0, -EINVAL or -ENOMEM.
 */
int metarecords_store(struct profile *p, const char *prefix, const uint64_t *v, size_t nr,
		      size_t fields);

/*
 * Call @fn with each well-formed record of @fields numbers in the PREFIX.N
 * chunks of @p, in the order of the metadata; a malformed one (too few or
 * too many numbers, a sign, junk) is skipped. Returns @fn's first nonzero
 * result, or 0.
 */
int metarecords_each(const struct profile *p, const char *prefix, size_t fields,
		     int (*fn)(void *arg, const uint64_t *v), void *arg);

#endif
