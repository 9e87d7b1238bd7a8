/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inputs of `latprof flamegraph` and `latprof diff` read into a struct
 * flame: a recorded profile weighted by a --weight, folded stacks from any
 * tool (a file, or stdin), or the BEFORE and AFTER sides of a diff. These
 * are files named on the command line, so each failure is printed here,
 * once, naming the file: -EINVAL means bad input (exit status 2), any other
 * error a runtime failure. Drawing is stacks_svg.h's.
 */
#ifndef LATPROF_STACKS_LOAD_H
#define LATPROF_STACKS_LOAD_H

#include <stdbool.h>

#include "flamegraph/flame.h"
#include "src/stacks_svg.h"

/*
 * Parse the folded text at @path ("-": stdin, at most 1 GiB) into @f with
 * @folded_flags (enum folded_flag). 0, -EINVAL (unreadable, or malformed:
 * printed with the line) or -ENOMEM (printed).
 */
int stacks_load_folded(const char *path, unsigned int folded_flags, struct flame *f);

/*
 * Add the profile at @path (NULL: latprof.pb.gz) weighted by @s->weight to
 * @f through stacks_svg_add_profile, which may set @s's mode and subtitle;
 * @s->weight NULL: set to the profile's default (profile_weight_default).
 * 0, -EINVAL (unreadable, or no such weight; printed) or -ENOMEM (printed).
 */
int stacks_load_profile(const char *path, struct stacks_svg *s, struct flame *f);

/*
 * The two sides of a diff into @f: @paths[0] (BEFORE) as second weights and
 * @paths[1] (AFTER) as weights, each a profile or folded text told apart by
 * its gzip magic (folded text always if @force_folded). With @nr == 1, one
 * folded file of "STACK BEFORE AFTER" lines. @s as for stacks_load_profile.
 * 0, -EINVAL (printed) or -ENOMEM.
 */
int stacks_load_diff(char *const *paths, int nr, bool force_folded, struct stacks_svg *s,
		     struct flame *f);

#endif
