/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Flame graphs of recorded profiles, for the verbs that write one without
 * the flamegraph verb's options: `export --format svg` and `record -o
 * FILE.svg`. The SVG is what `latprof flamegraph` draws by default.
 */
#ifndef LATPROF_FLAMEGRAPH_H
#define LATPROF_FLAMEGRAPH_H

#include <stdio.h>

#include "src/loadprof.h"
#include "src/profile.h"

/* Frames narrower than this many pixels are left out (FlameGraph's default). */
#define FLAMEGRAPH_MIN_WIDTH_PX 0.1

/*
 * Write the interactive SVG flame graph of @p weighted by @w to @out, with
 * the default title, subtitle, width and colours of that weight (hot/cold
 * for wall). @stack_flags (enum stacks_flag) add to the weight's. 0,
 * -ENOMEM or -errno of the write. Prints nothing.
 */
int flamegraph_write_profile(FILE *out, const struct profile *p, const struct profile_weight *w,
			     unsigned int stack_flags);

#endif
