/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Time charts as SVG: one stacked bar per interval (series in a fixed order,
 * values in units per second on the left axis) and one line on a second,
 * right-hand axis, with axis labels, a legend and a <title> per interval
 * that browsers show on hover. `latprof timeline` draws CPU and syscall time
 * by category as bars and resident memory as the line. Output depends only
 * on the input: fixed precision, no timestamps, no script.
 */
#ifndef LATPROF_TIMECHART_H
#define LATPROF_TIMECHART_H

#include <stddef.h>
#include <stdio.h>

#include "flamegraph/palette.h"

#define TIMECHART_MAX_SERIES 8

struct timechart_series {
	const char *name;		/* legend and hover text */
	struct flame_rgb color;
};

/* One interval. */
struct timechart_point {
	double start_s, duration_s;		/* from the chart's time 0 */
	double value[TIMECHART_MAX_SERIES];	/* per series, stacked bottom up */
	double line;				/* second axis; < 0: no point */
	const char *detail;			/* more hover text, or NULL */
};

struct timechart {
	const char *title;
	const char *subtitle;		/* NULL or "": none */
	const char *x_label;		/* "time (s)" */
	const char *y_label;		/* left axis */
	const char *line_label;		/* right axis and legend; NULL: no line */
	const char *line_unit;		/* hover text after the line's value, e.g. "MB" */
	struct flame_rgb line_color;
	const char *value_unit;		/* hover text after each value, e.g. "s/s" */
	struct timechart_series series[TIMECHART_MAX_SERIES];
	size_t nr_series;
	const struct timechart_point *points;	/* in time order */
	size_t nr_points;
	unsigned int width_px, height_px;	/* 0: 1200 x 480 */
};

/* Write @c as an SVG document to @out. 0, -EINVAL (too many series) or -EIO. */
int timechart_write_svg(const struct timechart *c, FILE *out);

/*
 * The smallest of 1, 2, 2.5, 5 x 10^k that is at least @v (1 for @v <= 0):
 * the top of an axis. Cannot fail.
 */
double timechart_nice_ceil(double v);

#endif
