/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The JSON report of a profile (schema in docs/formats.md): metadata, lost
 * event counters, the stacks of one weight exactly as folded output has them
 * and the heaviest of them, per-syscall statistics with percentiles, and
 * off-CPU totals. Also the one JSON string escaper the exports share.
 */
#ifndef LATPROF_EXPORT_JSON_H
#define LATPROF_EXPORT_JSON_H

#include <stdio.h>

#include "flamegraph/flame.h"
#include "src/weight.h"
#include "src/profile.h"

/*
 * Write @p with the stacks of @f (built with weight @w) to @out, @top of
 * them in "top_stacks". 0 or -errno.
 */
int export_json(FILE *out, const struct profile *p, const struct profile_weight *w,
		struct flame *f, size_t top);

/*
 * @s (NULL: "") as a JSON string with its quotes: '"', '\\' and control bytes
 * escaped, other bytes as they are. Errors show in ferror(@out).
 */
void json_put_str(FILE *out, const char *s);

#endif
