/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `export --format pprof`: a pprof file with only the value columns of one
 * weight and only the samples that weigh something in it, so `go tool pprof`
 * shows that weight by default and its total equals folded output's.
 * Columns by weight (docs/formats.md):
 *   cpu, samples         samples/count (default), cpu/nanoseconds
 *   cpu-time             samples/count, cpu/nanoseconds (default)
 *   latency              syscalls/count, latency/nanoseconds (default)
 *   syscalls             syscalls/count (default), latency/nanoseconds
 *   offcpu               offcpu/nanoseconds (default)
 *   wall                 cpu/nanoseconds, offcpu/nanoseconds, wall/nanoseconds
 *                        (default; their sum per sample)
 * Locations, functions, mappings, labels and metadata are kept, so file:line
 * and the syscall statistics survive. A sample's stack is the one folded
 * output shows: in the Python view (src/pyview.h) unless STACKS_FLAG_NATIVE
 * is in @stack_flags; its unused locations stay in the file.
 */
#ifndef LATPROF_EXPORT_PPROF_H
#define LATPROF_EXPORT_PPROF_H

#include <stdio.h>

#include "src/weight.h"
#include "src/profile.h"

/* The column a wall-weighted export adds: cpu + offcpu of each sample. */
#define PROFILE_TYPE_WALL "wall"

/*
 * The profile described above as a new struct profile (free with
 * profile_free), or NULL with errno set. @w NULL: every column and every
 * sample, as recorded, only the stacks in the view of @stack_flags.
 */
struct profile *profile_for_weight(const struct profile *p, const struct profile_weight *w,
				   unsigned int stack_flags);

/* Write profile_for_weight(@p, @w, @stack_flags) to @out as gzip'ed pprof. 0 or -errno. */
int export_pprof(FILE *out, const struct profile *p, const struct profile_weight *w,
		 unsigned int stack_flags);

#endif
