/* SPDX-License-Identifier: GPL-2.0-only */
/* Loading a profile for the reading verbs, with the one error message. */
#ifndef LATPROF_LOADPROF_H
#define LATPROF_LOADPROF_H

#include "src/profile.h"

/*
 * Read the profile at @path (NULL: latprof.pb.gz). On failure prints one
 * line naming the file and the problem and returns NULL; every failure to
 * read a profile is bad input (exit status 2).
 */
struct profile *profile_load(const char *path);

/* Index of the value column for --weight @weight ("cpu", "samples"), or -1
 * after printing why. */
int profile_weight_column(const struct profile *p, const char *weight);

#endif
