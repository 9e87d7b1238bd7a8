/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof I/O: struct profile <-> gzip-compressed profile.proto, via protobuf-c
 * and zlib. latprof's metadata travels as pprof comments "latprof:KEY=VALUE"
 * (see docs/formats.md), so the file stays a plain pprof for other tools.
 */
#ifndef LATPROF_PPROF_H
#define LATPROF_PPROF_H

#include <stdio.h>

#include "src/profile.h"

/* Serialize @p as gzip'ed pprof to @f. 0 or -errno (-ENOMEM, -EIO). */
int pprof_write(const struct profile *p, FILE *f);

/* pprof_write to @path via a temporary file and rename ("-" = stdout). */
int pprof_write_file(const struct profile *p, const char *path);

/*
 * Parse a pprof file (gzip'ed or not). On success *out is a new profile (free
 * with profile_free) and 0 is returned. On failure returns -errno: -ENOENT,
 * -EACCES... for I/O, -EINVAL for a corrupt file with *why (static string)
 * saying what is wrong.
 */
int pprof_read_file(const char *path, struct profile **out, const char **why);

/* The same from memory. */
int pprof_read_mem(const void *buf, size_t len, struct profile **out, const char **why);

/*
 * Read the profile at @path (NULL: latprof.pb.gz). On failure prints one
 * line naming the file and the problem and returns NULL; every failure to
 * read a profile is bad input (exit status 2).
 */
struct profile *profile_load(const char *path);

#endif
