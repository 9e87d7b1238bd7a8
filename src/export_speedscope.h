/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per process (per thread when samples carry a tid
 * label), frames shared and named exactly as folded output names them
 * (without the process frame, which becomes the profile's name), with the
 * source file and line where the profile has them. docs/formats.md.
 */
#ifndef LATPROF_EXPORT_SPEEDSCOPE_H
#define LATPROF_EXPORT_SPEEDSCOPE_H

#include <stdio.h>

#include "src/weight.h"
#include "src/profile.h"

/*
 * Write the samples of @p with a positive weight @w to @out, their stacks in
 * the Python view (src/pyview.h) unless STACKS_FLAG_NATIVE is in
 * @stack_flags. Each profile's weights add up to what folded output gives
 * its process. 0 or -errno.
 */
int export_speedscope(FILE *out, const struct profile *p, const struct profile_weight *w,
		      unsigned int stack_flags);

#endif
