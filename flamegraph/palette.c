// SPDX-License-Identifier: GPL-2.0-only
/*
 * Colour choices. Each kind of frame has a base colour and a range around
 * it; the hash of the name picks the point in the range, so neighbouring
 * frames differ a little while a kind stays recognisable at a glance.
 */
#include "flamegraph/palette.h"

#include <errno.h>
#include <string.h>

#include "src/lib/util.h"

/* A base colour and how far each channel may move up from it. */
struct color_range {
	uint8_t r, g, b;
	uint8_t dr, dg, db;
	bool tied;	/* one hash value for all channels: shades of one hue */
};

static const struct color_range palettes[] = {
	[FLAME_PALETTE_HOT] = { 205, 0, 0, 50, 230, 55, false },
	[FLAME_PALETTE_MEM] = { 0, 190, 0, 0, 60, 190, false },
	[FLAME_PALETTE_IO] = { 80, 80, 190, 60, 60, 55, true },
	[FLAME_PALETTE_BLUE] = { 80, 80, 205, 60, 60, 50, false },
	[FLAME_PALETTE_AQUA] = { 50, 165, 165, 60, 55, 55, true },
};

static const struct color_range kinds[] = {
	[FLAME_KIND_KERNEL] = { 225, 110, 0, 30, 60, 40, false },
	[FLAME_KIND_INLINE] = { 40, 180, 180, 40, 50, 50, true },
	[FLAME_KIND_JIT] = { 50, 185, 50, 60, 55, 60, false },
	[FLAME_KIND_PYTHON] = { 60, 120, 205, 40, 50, 40, false },
	[FLAME_KIND_UNKNOWN] = { 160, 160, 160, 40, 40, 40, true },
	[FLAME_KIND_PROCESS] = { 180, 160, 210, 25, 25, 30, true },
	[FLAME_KIND_ROOT] = { 215, 215, 200, 0, 0, 0, true },
};

static const struct {
	const char *category;
	struct color_range range;
} syscall_colors[] = {
	{ "network", { 150, 90, 225, 40, 40, 30, true } },
	{ "file", { 190, 140, 60, 40, 40, 40, true } },
	{ "sync", { 225, 210, 60, 30, 35, 50, false } },
	{ "sleep", { 140, 185, 235, 35, 35, 20, true } },
};

static const struct color_range syscall_other = { 235, 140, 170, 20, 40, 40, true };

static const char *const palette_names[] = {
	[FLAME_PALETTE_HOT] = "hot", [FLAME_PALETTE_MEM] = "mem", [FLAME_PALETTE_IO] = "io",
	[FLAME_PALETTE_BLUE] = "blue", [FLAME_PALETTE_AQUA] = "aqua",
};

int flame_palette_parse(const char *name, enum flame_palette *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(palette_names); i++) {
		if (!strcmp(name, palette_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* "MODULE+0x1f0" (optionally with a suffix): an address without a symbol. */
static bool is_module_offset(const char *name)
{
	const char *p = strstr(name, "+0x");

	if (!p || p == name || strchr(name, ' '))
		return false;
	for (p += 3; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		;
	return !*p || *p == '_';
}

/*
 * "NAME (FILE)" or "NAME (FILE:LINE)", the Python frame text (src/stacks.h):
 * C and C++ names put no space before a parenthesis.
 */
static bool is_python_frame(const char *name)
{
	const char *open = strstr(name, " (");
	size_t len = strlen(name);

	if (!open || open == name || len < 4 || name[len - 1] != ')')
		return false;
	while (strstr(open + 2, " ("))
		open = strstr(open + 2, " (");
	return !memchr(open + 2, '(', name + len - 1 - (open + 2));
}

enum flame_kind flame_kind_of(const char *name, bool process)
{
	if (process)
		return FLAME_KIND_PROCESS;
	if (!strncmp(name, "syscall:", 8))
		return FLAME_KIND_SYSCALL;
	if (!strncmp(name, "[unknown]", 9) || is_module_offset(name))
		return FLAME_KIND_UNKNOWN;
	if (str_has_suffix(name, "_[k]"))
		return FLAME_KIND_KERNEL;
	if (str_has_suffix(name, "_[i]"))
		return FLAME_KIND_INLINE;
	if (str_has_suffix(name, "_[j]"))
		return FLAME_KIND_JIT;
	if (is_python_frame(name))
		return FLAME_KIND_PYTHON;
	return FLAME_KIND_USER;
}

/* FNV-1a: stable across runs and machines, unlike pointer hashes. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 31);
}

/* Three values in [0, 1] from the name's hash. */
static void name_shades(const char *name, double v[3])
{
	uint64_t h = name_hash(name);
	int i;

	for (i = 0; i < 3; i++)
		v[i] = (double)((h >> (i * 21)) & 0xfffff) / 0xfffff;
}

static struct flame_rgb pick(const struct color_range *c, const char *name)
{
	double v[3];

	name_shades(name, v);
	if (c->tied)
		v[1] = v[2] = v[0];
	return (struct flame_rgb){ c->r + c->dr * v[0], c->g + c->dg * v[1], c->b + c->db * v[2] };
}

static const struct color_range *syscall_range(const char *name, flame_category_fn cat_fn)
{
	const char *cat = cat_fn ? cat_fn(name + 8) : NULL;
	size_t i;

	for (i = 0; cat && i < ARRAY_SIZE(syscall_colors); i++)
		if (!strcmp(cat, syscall_colors[i].category))
			return &syscall_colors[i].range;
	return &syscall_other;
}

struct flame_rgb flame_color(enum flame_palette p, enum flame_kind k, const char *name,
			     flame_category_fn cat_fn)
{
	if (k == FLAME_KIND_USER)
		return pick(&palettes[p < ARRAY_SIZE(palettes) ? p : 0], name);
	if (k == FLAME_KIND_SYSCALL)
		return pick(syscall_range(name, cat_fn), name);
	return pick(&kinds[k], name);
}

static uint8_t mix(uint8_t a, uint8_t b, double t)
{
	return (uint8_t)(a + (b - a) * t + 0.5);
}

struct flame_rgb flame_color_hotcold(const char *name, double off_frac)
{
	static const struct color_range cold = { 60, 110, 215, 40, 40, 40, false };
	struct flame_rgb w = pick(&palettes[FLAME_PALETTE_HOT], name), c = pick(&cold, name);
	double t = off_frac < 0 ? 0 : off_frac > 1 ? 1 : off_frac;

	return (struct flame_rgb){ mix(w.r, c.r, t), mix(w.g, c.g, t), mix(w.b, c.b, t) };
}

struct flame_rgb flame_color_diff(double delta)
{
	double t = delta < 0 ? -delta : delta;
	uint8_t fade;

	if (t > 1)
		t = 1;
	/* the faded channels go down to 40: the strongest change is red, not black */
	fade = mix(255, 40, t);
	if (delta > 0)
		return (struct flame_rgb){ 255, fade, fade };
	return (struct flame_rgb){ fade, fade, 255 };
}
