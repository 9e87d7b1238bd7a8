/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Flame graph colours. A frame's colour follows from its name alone (kind
 * by suffix, shade by a hash), so the same function has the same colour in
 * every graph and in every run. Hot/cold and differential colours come from
 * a frame's two weights instead. Pure functions: cannot fail.
 */
#ifndef LATPROF_PALETTE_H
#define LATPROF_PALETTE_H

#include <stdbool.h>
#include <stdint.h>

/* The base colours of ordinary (user) frames; other kinds keep theirs. */
enum flame_palette {
	FLAME_PALETTE_HOT,	/* red to yellow (default) */
	FLAME_PALETTE_MEM,	/* greens */
	FLAME_PALETTE_IO,	/* blue-greys */
	FLAME_PALETTE_BLUE,
	FLAME_PALETTE_AQUA,
};

/* The names flame_palette_parse() accepts, for help and error messages. */
#define FLAME_PALETTES "hot, mem, io, blue or aqua"

/*
 * The category of a syscall by name ("network", "file", "sync", "sleep";
 * anything else counts as other), or NULL when unknown. Supplied by the
 * program, which owns the syscall table.
 */
typedef const char *(*flame_category_fn)(const char *syscall_name);

struct flame_rgb {
	uint8_t r, g, b;
};

/* What a frame is, from its name and position. */
enum flame_kind {
	FLAME_KIND_USER,
	FLAME_KIND_KERNEL,	/* "..._[k]" */
	FLAME_KIND_INLINE,	/* "..._[i]" */
	FLAME_KIND_JIT,		/* "..._[j]" */
	FLAME_KIND_PYTHON,	/* "function (file.py)", "function (file.py:LINE)" */
	FLAME_KIND_SYSCALL,	/* "syscall:NAME" */
	FLAME_KIND_UNKNOWN,	/* "[unknown]...", "MODULE+0xOFFSET..." */
	FLAME_KIND_PROCESS,	/* first frame of a stack */
	FLAME_KIND_ROOT,	/* the "all" frame under everything */
};

/* 0 and *@out set, or -EINVAL for an unknown @name. */
int flame_palette_parse(const char *name, enum flame_palette *out);

/* The kind of frame @name; @process: it is a stack's first frame. */
enum flame_kind flame_kind_of(const char *name, bool process);

/* The colour of frame @name of kind @k in palette @p; @cat_fn may be NULL. */
struct flame_rgb flame_color(enum flame_palette p, enum flame_kind k, const char *name,
			     flame_category_fn cat_fn);

/* Hot/cold: warm when @off_frac (off-CPU share, 0..1) is 0, blue when 1, blends between. */
struct flame_rgb flame_color_hotcold(const char *name, double off_frac);

/* Differential: @delta in -1..1 (shrank..grew, scaled to the largest change): blue, white, red. */
struct flame_rgb flame_color_diff(double delta);

#endif
