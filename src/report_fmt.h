/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The formatting every section of `latprof report` shares: headings, bold
 * or plain, durations in at most six columns, percentages. A leaf: it knows
 * nothing of profiles or of the report's options, includes nothing from src/
 * but util.h, and writes only to the FILE it is given.
 */
#ifndef LATPROF_REPORT_FMT_H
#define LATPROF_REPORT_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The escape sequences around bold text with @color, "" without. Cannot fail. */
const char *report_fmt_bold(bool color);
const char *report_fmt_reset(bool color);

/*
 * A section heading on @out: a blank line, @title (bold with @color), then
 * a space and @fmt's text unless @fmt is NULL, then a newline. Write errors
 * are left in @out's error indicator.
 */
void report_fmt_heading(FILE *out, bool color, const char *title, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Percentage of @part in @total, 0 for an empty total. Cannot fail. */
double report_fmt_pct(uint64_t part, uint64_t total);

/*
 * @ns as a duration, in at most 6 characters below 1000 s ("1.23s", "45ms",
 * "7.8us", "120ns"), into @buf of @size bytes (cut to fit). Cannot fail.
 */
void report_fmt_ns(char *buf, size_t size, uint64_t ns);

#endif
