/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `latprof top`'s full screen, on ncurses: the header, one view at a time
 * (top_model.h) with a selected row, a help overlay, and the keys that
 * switch, sort, freeze, filter and zoom. The terminal is given back as it
 * was by top_screen_close, whatever ended the view.
 */
#ifndef LATPROF_TOP_SCREEN_H
#define LATPROF_TOP_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "src/top_model.h"

struct top_screen {
	enum top_view view;
	enum top_sort sort[TOP_VIEWS];
	size_t sel;			/* the selected row of the view */
	bool frozen, help, open;
};

/* What the keys read asked for (bits). */
enum top_key {
	TOP_KEY_REDRAW = 1 << 0,	/* draw again */
	TOP_KEY_COMPUTE = 1 << 1,	/* the filter or the zoom changed: compute the views */
	TOP_KEY_QUIT = 1 << 2,
	TOP_KEY_THAW = 1 << 3,		/* unfrozen: take a look now */
};

/* Take the terminal (stdin and stdout). 0, or -ENOTTY when it cannot be. */
int top_screen_open(struct top_screen *ts);
/* Give it back as it was; a no-op when not open. */
void top_screen_close(struct top_screen *ts);
/* Draw @m; @look: a new look came (the whole screen is repainted). */
void top_screen_draw(struct top_screen *ts, struct top_model *m, bool look);
/* Read every key waiting, acting on @ts and @m; enum top_key bits. */
unsigned int top_screen_keys(struct top_screen *ts, struct top_model *m);

#endif
