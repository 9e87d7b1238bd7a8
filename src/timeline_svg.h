/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The chart `latprof timeline` draws from the timeline of a profile
 * (src/timeline.h): per interval, CPU time and syscall time by category as
 * stacked bars in seconds per second (1.0 = one CPU busy, or one thread
 * waiting, for the whole interval), the targets' resident memory as a line,
 * files opened and processes alive in the hover text. This module owns the
 * series, colours, labels and units; drawing is flamegraph/timechart.c's.
 * Prints nothing and opens no file.
 */
#ifndef LATPROF_TIMELINE_SVG_H
#define LATPROF_TIMELINE_SVG_H

#include <stdio.h>

#include "flamegraph/timechart.h"
#include "src/profile.h"

struct timeline_svg {
	struct timechart chart;	/* title, width_px and height_px may be set after init */
	struct timechart_point *points;
	char (*details)[64];		/* the points' hover text */
	char subtitle[160];
};

/* The labels and colours of the chart, titled "Timeline"; no points yet. Cannot fail. */
void timeline_svg_init(struct timeline_svg *ts);

/* Free the points of @ts. Cannot fail. */
void timeline_svg_release(struct timeline_svg *ts);

/*
 * Make the chart's points and subtitle from the timeline stored in @p.
 * Without a CPU column, the syscall series only. 0, -ENODATA when @p has
 * no timeline (recorded without one, or by an older latprof), -ENOMEM.
 */
int timeline_svg_build(struct timeline_svg *ts, const struct profile *p);

/* Write the chart of @ts (built) as an SVG document to @out. 0 or -EIO. */
int timeline_svg_write(const struct timeline_svg *ts, FILE *out);

#endif
