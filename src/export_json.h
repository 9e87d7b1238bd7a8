/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The JSON report of a profile (schema in docs/formats.md): metadata, the
 * stacks of one weight exactly as folded output has them, per-syscall
 * statistics with percentiles, and off-CPU totals.
 */
#ifndef LATPROF_EXPORT_JSON_H
#define LATPROF_EXPORT_JSON_H

#include <stdio.h>

#include "flamegraph/flame.h"
#include "src/loadprof.h"
#include "src/profile.h"

/* Write @p with the stacks of @f (built with weight @w) to @out. 0 or -errno. */
int export_json(FILE *out, const struct profile *p, const struct profile_weight *w,
		struct flame *f);

#endif
