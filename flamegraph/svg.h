/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interactive SVG flame graphs from a struct flame, in three steps: merge
 * the stacks into a tree of frames (frame_tree), lay the frames out and
 * prune those too narrow to see, emit SVG with the viewer script
 * (flamegraph/viewer.js) embedded. Output depends only on the input and the
 * options: no timestamps, no randomness, colours hashed from frame names.
 * The DOM that the viewer and the tests rely on is described in
 * docs/formats.md ("Flame graph SVG").
 */
#ifndef LATPROF_SVG_H
#define LATPROF_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "flamegraph/flame.h"
#include "flamegraph/palette.h"

enum flame_svg_mode {
	FLAME_SVG_MODE_PLAIN,	/* colours by frame kind and name */
	FLAME_SVG_MODE_HOTCOLD,	/* weight2 = off-CPU part: warm on CPU, blue off CPU */
	FLAME_SVG_MODE_DIFF,	/* weight = AFTER, weight2 = BEFORE: red grew, blue shrank */
};

struct flame_svg_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL or "": none */
	unsigned int width_px;	/* 0: 1200 */
	/*
	 * Frames narrower than this are left out (with everything above them).
	 * min_width_pct > 0 (percent of the total) wins over min_width_px; both
	 * 0 keeps every frame. FlameGraph's default is 0.1 px.
	 */
	double min_width_px;
	double min_width_pct;
	bool inverted;		/* icicle: root at the top */
	enum flame_palette palette;
	enum flame_svg_mode mode;
	bool normalize;		/* DIFF: compare shares of each total, not raw weights */
	const char *unit;	/* "samples", "nanoseconds", "count"; NULL: "samples" */
	bool no_script;		/* leave the viewer out (golden files, static images) */
	bool process_frames;	/* the first frame of a stack is a process name */
	flame_category_fn category_fn;	/* colours "syscall:NAME" leaves; may be NULL */
};

/*
 * Write @f as an SVG document to @out. @f is only sorted (flame_stacks), not
 * changed. Returns 0, -ENOMEM, or -EIO when writing failed.
 */
int flame_write_svg(struct flame *f, const struct flame_svg_opts *o, FILE *out);

#endif
