/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `record -o FILE` writes: the full profile (.pb.gz, .pb, .pprof or a
 * name without extension, and "-"), or the export format the extension
 * names (export_formats.h), weighted by --weight or by the first collector that has
 * values, its Python stacks in the Python view unless --native (the full
 * profile always keeps the native stacks). Both checked before recording, so a bad -o or --weight costs
 * nothing; the file is written completely or not at all.
 */
#ifndef LATPROF_RECORD_OUTPUT_H
#define LATPROF_RECORD_OUTPUT_H

#include <stdbool.h>

#include "src/collectopts.h"
#include "src/profile.h"

struct record_output {
	const char *path;	/* -o */
	const char *weight;	/* --weight, NULL: chosen (see record_output_write) */
	unsigned int stack_flags;	/* --native: STACKS_FLAG_NATIVE (src/stacks.h) */
	struct collector_modes modes;	/* the collectors that run */
	int format;		/* enum export_format; set by record_output_check */
};

/*
 * Set @o->format from the extension of @o->path and check that --weight can
 * be filled by the collectors. 0, or -EINVAL after printing why (an unknown
 * extension, a weight the modes cannot fill); -ENOMEM.
 */
int record_output_check(struct record_output *o);

/*
 * Before recording (record, top -o): @o->modes from @modes, then
 * record_output_check, then whether @o->path can be written. 0, or -EINVAL
 * or -errno after printing why.
 */
int record_output_ready(struct record_output *o, const struct collector_modes *modes);

/*
 * Write @p to @o->path in @o->format. Without --weight a derived format is
 * weighted by cpu, or when no CPU sample was taken latency, else offcpu,
 * whichever has values (said at info level). 0 or -errno; prints only the
 * weight's own error.
 */
int record_output_write(const struct record_output *o, const struct profile *p);

#endif
