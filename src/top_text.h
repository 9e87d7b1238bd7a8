/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof top`'s lines: the header, each view's column heading and rows,
 * formatted once for both the full screen (top_screen.c) and the plain
 * snapshots that -b prints (top_text_print). Rates are per second of the
 * last interval; shares are of the targets' CPU in it.
 */
#ifndef LATPROF_TOP_TEXT_H
#define LATPROF_TOP_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "src/top_model.h"

/* The two header lines. */
void top_text_header(const struct top_model *m, char *l1, char *l2, size_t size);
/* A view's title (@zoom: the callers and callees of m->zoom). */
void top_text_title(const struct top_model *m, enum top_view v, char *buf, size_t size);
/* The column heading of a view's rows. */
const char *top_text_columns(enum top_view v);
/* One row, name last (cut to @size). */
void top_text_func(const struct top_model *m, const struct top_func *f, char *buf, size_t size);
void top_text_site(const struct top_model *m, const struct top_site *s, char *buf, size_t size);
void top_text_sys(const struct top_model *m, const struct top_sys *s, char *buf, size_t size);
/* A site group's line ("on the path of work: 1.2s/s in 40 calls/s"). */
void top_text_group(const struct top_model *m, enum hot_wait w, char *buf, size_t size);

/*
 * One snapshot as -b prints it: the header, then every view with at most
 * @rows rows each of what ran or waited in the last interval (the zoom's
 * callers and callees instead of the functions when set), and a blank line. Write errors
 * are left in @out's error indicator.
 */
void top_text_print(FILE *out, struct top_model *m, unsigned int rows);

#endif
