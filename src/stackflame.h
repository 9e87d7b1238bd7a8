/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A profile's samples as a flame graph's stacks: named by stacks.h, weighed
 * by a --weight (weight.h). What folded output, the report's stacks and
 * every SVG are made from.
 */
#ifndef LATPROF_STACKFLAME_H
#define LATPROF_STACKFLAME_H

#include "flamegraph/flame.h"
#include "src/weight.h"
#include "src/profile.h"

/*
 * Add every sample of @p with a positive weight @w to @f; @flags (enum
 * stacks_flag) add to the weight's own. A two-column weight (wall) puts its
 * second column (off-CPU time) in the stacks' weight2 as well. 0, -ENOMEM or
 * -ERANGE.
 */
int stacks_to_flame(const struct profile *p, const struct profile_weight *w, unsigned flags,
		    struct flame *f);

#endif
