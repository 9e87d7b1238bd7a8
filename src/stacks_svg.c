// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default look of a flame graph of weighted stacks (stacks_svg.h): what
 * each weight is called and counted in, and what a profile says about
 * itself. Layout and drawing are flamegraph/svg.c's.
 */
#include "src/runmeta.h"
#include "src/stacks_svg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/stackflame.h"
#include "src/stacks.h"
#include "src/syscalls.h"
#include "src/lib/util.h"

/* What a weight means on the picture, also for folded input (no profile to ask). */
static const struct weight_look {
	const char *weight, *title, *unit;
} weight_looks[] = {
	{ "cpu", "CPU flame graph", "samples" },
	{ "samples", "CPU flame graph", "samples" },
	{ "cpu-time", "CPU time flame graph", "nanoseconds" },
	{ "latency", "Syscall latency flame graph", "nanoseconds" },
	{ "syscalls", "Slow syscall count flame graph", "count" },
	{ "offcpu", "Off-CPU flame graph", "nanoseconds" },
	{ "wall", "Wall-clock (hot/cold) flame graph", "nanoseconds" },
	{ "stall", "Event-loop stall flame graph", "nanoseconds" },
	{ "await", "asyncio await flame graph", "nanoseconds" },
};

/* The look of weight @name; a ":path"/":idle"/":readiness" filter is not part of the name. */
static const struct weight_look *weight_look(const char *name)
{
	size_t i, len = strcspn(name, ":");

	for (i = 0; i < ARRAY_SIZE(weight_looks); i++)
		if (!strncmp(name, weight_looks[i].weight, len) && !weight_looks[i].weight[len])
			return &weight_looks[i];
	return NULL;
}

bool stacks_svg_knows_weight(const char *name)
{
	return weight_look(name) != NULL;
}

static const char *category_of(const char *syscall_name)
{
	int nr = syscall_number(syscall_name);

	return nr < 0 ? NULL : syscall_category_name(syscall_category(nr));
}

/* "record -F 99 -- ./app, 2.01 s": what a recorded profile says about itself. */
static char *profile_subtitle(const struct profile *p)
{
	const char *cmdline = profile_get_meta(p, RUN_META_COMMAND_LINE);
	char *s = NULL;
	int n;

	if (cmdline && p->duration_ns > 0)
		n = asprintf(&s, "%s, %.2f s", cmdline, p->duration_ns / 1e9);
	else if (p->duration_ns > 0)
		n = asprintf(&s, "%.2f s", p->duration_ns / 1e9);
	else
		n = cmdline ? asprintf(&s, "%s", cmdline) : 0;
	return n > 0 ? s : NULL;
}

int stacks_svg_add_profile(struct stacks_svg *s, const struct profile *p,
			   const struct profile_weight *w, struct flame *f)
{
	int err = stacks_to_flame(p, w, s->stack_flags, f);

	if (err)
		return err;
	if (w->nr_cols == 2)
		s->svg.mode = FLAME_SVG_MODE_HOTCOLD;
	if (!s->subtitle)
		s->subtitle = profile_subtitle(p);
	return 0;
}

void stacks_svg_finish(struct stacks_svg *s, const char *default_title)
{
	const struct weight_look *look;
	const char *wait;

	if (!s->weight)	/* folded text only: no profile chose one */
		s->weight = "cpu";
	look = weight_look(s->weight);
	wait = strchr(s->weight, ':');

	if (!s->svg.title && !default_title && look && wait) {
		snprintf(s->title, sizeof(s->title), "%s, %s waits only", look->title,
			 !strcmp(wait + 1, "path") ? "on-path" :
			 !strcmp(wait + 1, "idle") ? "idle" : "undecided readiness");
		s->svg.title = s->title;
	}
	if (!s->svg.title)
		s->svg.title = default_title ? default_title : look ? look->title : NULL;
	if (!s->svg.subtitle)
		s->svg.subtitle = s->subtitle;
	s->svg.unit = look ? look->unit : NULL;
	s->svg.process_frames = !(s->stack_flags & STACKS_FLAG_NO_COMM);
	s->svg.category_fn = category_of;
}

void stacks_svg_release(struct stacks_svg *s)
{
	free(s->subtitle);
	s->subtitle = NULL;
}

int stacks_svg_write_profile(FILE *out, const struct profile *p, const struct profile_weight *w,
			     unsigned int stack_flags)
{
	struct stacks_svg s = { .weight = w->name, .svg.min_width_px = STACKS_SVG_MIN_WIDTH_PX,
				.stack_flags = stack_flags };
	struct flame *f = flame_new();
	int err = f ? stacks_svg_add_profile(&s, p, w, f) : -ENOMEM;

	if (!err) {
		stacks_svg_finish(&s, NULL);
		err = flame_write_svg(f, &s.svg, out);
	}
	flame_free(f);
	stacks_svg_release(&s);
	return err;
}
