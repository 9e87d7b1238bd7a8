/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flame graph of weighted stacks as latprof draws it by default: the
 * title and unit each --weight implies, hot/cold colours for a weight of two
 * columns (wall), a subtitle made from the recorded command and duration,
 * the syscall category of "syscall:NAME" frames, and FlameGraph's minimum
 * frame width. `latprof flamegraph` and `diff` start from these defaults and
 * override them with their options; `export --format svg`, `record -o
 * FILE.svg` and serve's /flamegraph take them as they are
 * (stacks_svg_write_profile). Rendering is flamegraph/svg.c's. Prints
 * nothing and opens no file.
 */
#ifndef LATPROF_STACKS_SVG_H
#define LATPROF_STACKS_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "flamegraph/flame.h"
#include "flamegraph/svg.h"
#include "src/weight.h"
#include "src/profile.h"

/* Frames narrower than this many pixels are left out (FlameGraph's default). */
#define STACKS_SVG_MIN_WIDTH_PX 0.1

/*
 * What one flame graph is drawn with. Start from zero with
 * svg.min_width_px = STACKS_SVG_MIN_WIDTH_PX, set what the command line
 * says, and stacks_svg_finish fills in the rest.
 */
struct stacks_svg {
	struct flame_svg_opts svg;	/* for flame_write_svg; fields already set win */
	const char *weight;		/* --weight name, NULL: the profile's default
					 * (profile_weight_default), "cpu" for folded
					 * input; also titles folded input */
	unsigned int stack_flags;	/* enum stacks_flag added to the weight's */
	char *subtitle;			/* owned: set by the caller or from a profile */
	char title[96];			/* a weight's title with its wait filter */
};

/* Does stacks_svg_finish know the title and unit of weight @name? Cannot fail. */
bool stacks_svg_knows_weight(const char *name);

/*
 * Add the stacks of @p weighted by @w (and @s->stack_flags) to @f. A weight
 * of two columns switches @s to hot/cold colours; unless @s has a subtitle
 * already, it gets one from @p ("COMMAND, 2.01 s"; none if @p says
 * neither). 0 or -ENOMEM.
 */
int stacks_svg_add_profile(struct stacks_svg *s, const struct profile *p,
			   const struct profile_weight *w, struct flame *f);

/*
 * Fill in the SVG options left open: the title (@default_title, else the
 * weight's), the subtitle (@s->subtitle, borrowed until stacks_svg_release),
 * the unit, whether the first frame is a process, and syscall categories.
 * Call once, before flame_write_svg(f, &s->svg, out). Cannot fail.
 */
void stacks_svg_finish(struct stacks_svg *s, const char *default_title);

/* Free what @s owns: the subtitle, which s->svg.subtitle may borrow. */
void stacks_svg_release(struct stacks_svg *s);

/*
 * Write the interactive SVG flame graph of @p weighted by @w to @out, with
 * every default above (hot/cold for wall). @stack_flags (enum stacks_flag)
 * add to the weight's. 0, -ENOMEM or -EIO (the write failed).
 */
int stacks_svg_write_profile(FILE *out, const struct profile *p, const struct profile_weight *w,
			     unsigned int stack_flags);

#endif
