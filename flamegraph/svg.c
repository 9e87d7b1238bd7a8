// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layout and emission of flame graph SVGs (merging is frametree.c's, colours
 * palette.c's). The SVG is written for two readers: a browser, through the
 * embedded viewer (viewer.js), which finds every frame's data in attributes,
 * and tests, which compare the output without the viewer byte for byte. So
 * numbers are printed with fixed precision and frames in tree order.
 */
#include "flamegraph/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/frametree.h"
#include "flamegraph/xml.h"
#include "gen/viewer_js.h"
#include "src/lib/util.h"

#define FRAME_H 16		/* one stack level, 1 px of it a gap */
#define XPAD 10			/* left and right margins */
#define HEADER_H 60		/* title, subtitle, buttons */
#define FOOTER_H 44		/* details line, legend */
#define FONT_PX 12
#define CHAR_W (FONT_PX * 0.59)	/* average glyph width of Verdana-like fonts */
#define DEFAULT_WIDTH_PX 1200

struct svg_frame {
	size_t node;
	double x, w;		/* px */
};

/* The layout step's result: the visible frames, in tree order. */
struct svg_layout {
	struct { struct svg_frame *items; size_t nr, alloc; } frames;
	size_t max_depth;
	double max_delta;	/* DIFF: the largest |change| of a visible frame */
	unsigned int width_px, height_px;
};

struct svg_ctx {
	const struct flame_svg_opts *o;
	const struct frame_tree *t;
	struct svg_layout l;
	uint64_t total, total2;
	const char *unit;
	FILE *out;
};

/* --- layout --- */

/* DIFF: how much a frame changed, in shares of each total or in raw weight. */
static double frame_delta(const struct svg_ctx *c, const struct frame_node *n)
{
	double after, before;

	if (!c->o->normalize)
		return (double)n->weight - (double)n->weight2;
	after = c->total ? (double)n->weight / c->total : 0;
	before = c->total2 ? (double)n->weight2 / c->total2 : 0;
	return after - before;
}

static double min_width_px(const struct flame_svg_opts *o, double area_px)
{
	if (o->min_width_pct > 0)
		return o->min_width_pct / 100 * area_px;
	return o->min_width_px;
}

static int layout_add(struct svg_ctx *c, size_t i, double x, double w)
{
	struct svg_layout *l = &c->l;
	const struct frame_node *n = &c->t->nodes.items[i];
	double d;

	if (array_grow(&l->frames, l->frames.nr + 1))
		return -ENOMEM;
	l->frames.items[l->frames.nr++] = (struct svg_frame){ .node = i, .x = x, .w = w };
	if (n->depth > l->max_depth)
		l->max_depth = n->depth;
	d = fabs(frame_delta(c, n));
	if (c->o->mode == FLAME_SVG_MODE_DIFF && d > l->max_delta)
		l->max_delta = d;
	return 0;
}

/*
 * Place every frame at its parent's left edge plus the weight of its elder
 * siblings; a frame narrower than the minimum is skipped with its subtree
 * (everything above it is narrower still) but keeps its place.
 */
static int layout(struct svg_ctx *c)
{
	const struct frame_node *nodes = c->t->nodes.items;
	double area = c->l.width_px - 2 * XPAD, min = min_width_px(c->o, area);
	double scale = c->total ? area / c->total : 0;
	uint64_t *next = calloc(c->t->nodes.nr, sizeof(*next));	/* children's offset */
	size_t i = 1;
	int err = next ? 0 : -ENOMEM;

	if (!err && c->total)
		err = layout_add(c, 0, XPAD, area);
	while (!err && c->total && i < c->t->nodes.nr) {
		const struct frame_node *n = &nodes[i];
		uint64_t off = next[n->parent];

		next[n->parent] += n->weight;
		if (!n->weight || n->weight * scale < min) {
			i = n->end;
			continue;
		}
		next[i] = off;
		err = layout_add(c, i, XPAD + off * scale, n->weight * scale);
		i++;
	}
	free(next);
	c->l.height_px = HEADER_H + (c->l.max_depth + 1) * FRAME_H + FOOTER_H;
	return err;
}

/* --- text --- */

/* The frame's label: as much of @name as fits @w px, cut with "..". */
static void put_label(FILE *out, const char *name, double w)
{
	long fit = (long)((w - 6) / CHAR_W);
	size_t n;

	if (fit < 3)
		return;
	n = xml_strlen(name);
	if (n <= (size_t)fit) {
		xml_put(out, name, n);
		return;
	}
	xml_put(out, name, fit - 2);
	fputs("..", out);
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * v / total : 0;
}

/* The hover text of a frame, as <title> shows it without the viewer. */
static void put_title(const struct svg_ctx *c, const struct frame_node *n)
{
	char a[64], b[64];

	xml_put(c->out, n->name, SIZE_MAX);
	xml_format_value(a, sizeof(a), c->unit, n->weight);
	if (c->o->mode == FLAME_SVG_MODE_DIFF) {
		xml_format_value(b, sizeof(b), c->unit, n->weight2);
		fprintf(c->out, " (after %s, %.2f%%; before %s, %.2f%%)", a,
			pct(n->weight, c->total), b, pct(n->weight2, c->total2));
		return;
	}
	fprintf(c->out, " (%s, %.2f%%", a, pct(n->weight, c->total));
	if (c->o->mode == FLAME_SVG_MODE_HOTCOLD)
		fprintf(c->out, ", off-CPU %.1f%%", pct(n->weight2, n->weight));
	fputc(')', c->out);
}

/* --- emission --- */

static struct flame_rgb frame_color(const struct svg_ctx *c, size_t i)
{
	const struct frame_node *n = &c->t->nodes.items[i];
	enum flame_kind k;

	if (c->o->mode == FLAME_SVG_MODE_HOTCOLD)
		return flame_color_hotcold(n->name, n->weight ? (double)n->weight2 / n->weight : 0);
	if (c->o->mode == FLAME_SVG_MODE_DIFF)
		return flame_color_diff(c->l.max_delta > 0 ? frame_delta(c, n) / c->l.max_delta : 0);
	k = i == 0 ? FLAME_KIND_ROOT : flame_kind_of(n->name, c->o->process_frames && n->depth == 1);
	return flame_color(c->o->palette, k, n->name, c->o->category_fn);
}

static unsigned int frame_y(const struct svg_ctx *c, size_t depth)
{
	if (c->o->inverted)
		return HEADER_H + depth * FRAME_H;
	return HEADER_H + (c->l.max_depth - depth) * FRAME_H;
}

static void put_frame(const struct svg_ctx *c, const struct svg_frame *fr)
{
	const struct frame_node *n = &c->t->nodes.items[fr->node];
	struct flame_rgb rgb = frame_color(c, fr->node);
	unsigned int y = frame_y(c, n->depth);
	FILE *out = c->out;

	fputs("<g class=\"f\" data-name=\"", out);
	xml_put(out, n->name, SIZE_MAX);
	fprintf(out, "\" data-w=\"%" PRIu64 "\"", n->weight);
	if (c->o->mode != FLAME_SVG_MODE_PLAIN)
		fprintf(out, " data-w2=\"%" PRIu64 "\"", n->weight2);
	fputs("><title>", out);
	put_title(c, n);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
		"fill=\"#%02x%02x%02x\"/><text x=\"%.2f\" y=\"%u\">", fr->x, y, fr->w,
		FRAME_H - 1, rgb.r, rgb.g, rgb.b, fr->x + 3, y + 11);
	put_label(out, n->name, fr->w);
	fputs("</text></g>\n", out);
}

static const char *mode_name(enum flame_svg_mode m)
{
	return m == FLAME_SVG_MODE_HOTCOLD ? "hotcold" : m == FLAME_SVG_MODE_DIFF ? "diff" : "plain";
}

static const char svg_style[] =
	"<style type=\"text/css\">\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { text-anchor: middle; fill: #555; }\n"
	"#legend { font-size: 11px; fill: #555; }\n"
	"#matched { text-anchor: end; }\n"
	"#search { text-anchor: end; }\n"
	"#search, #unzoom { cursor: pointer; fill: #2a5db0; }\n"
	"#unzoom.off { opacity: 0.35; cursor: default; }\n"
	".f { cursor: pointer; }\n"
	".f text { pointer-events: none; }\n"
	".f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	".f rect.m { fill: #e600e6; }\n"
	".f.dim rect { opacity: 0.5; }\n"
	".f.gone { display: none; }\n"
	"</style>\n";

static const char *legend_of(const struct flame_svg_opts *o)
{
	if (o->mode == FLAME_SVG_MODE_HOTCOLD)
		return "Colour: each frame's share of off-CPU time: warm = on CPU, blue = off CPU "
		       "(blocked or sleeping), in between = both";
	if (o->mode == FLAME_SVG_MODE_DIFF)
		return o->normalize ?
			"Width: AFTER. Colour: change of each frame's share of its total: "
			"red = grew, blue = shrank, white = unchanged" :
			"Width: AFTER. Colour: change of each frame's weight: red = grew, "
			"blue = shrank, white = unchanged";
	return "Colours: kernel _[k] orange, inlined _[i] aqua, JIT _[j] green, "
	       "Python \"f (file.py)\" blue, syscall:NAME by category, unknown grey, "
	       "processes lilac";
}

static void put_header(const struct svg_ctx *c)
{
	const struct svg_layout *l = &c->l;
	FILE *out = c->out;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", l->width_px, l->height_px,
		l->width_px, l->height_px);
	fputs(svg_style, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f7f7f2\"/>\n",
		l->width_px, l->height_px);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", l->width_px / 2);
	xml_put(out, c->o->title ? c->o->title : "Flame Graph", SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"42\">", l->width_px / 2);
	xml_put(out, c->o->subtitle ? c->o->subtitle : "", SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"unzoom\" class=\"off\" x=\"%u\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%u\" y=\"24\">Search</text>\n", XPAD,
		l->width_px - XPAD);
	fprintf(out, "<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", XPAD, l->height_px - 26,
		l->width_px - XPAD, l->height_px - 26);
	fprintf(out, "<text id=\"legend\" x=\"%u\" y=\"%u\">%s</text>\n", XPAD,
		l->height_px - 8, legend_of(c->o));
}

static void put_frames(const struct svg_ctx *c)
{
	size_t i;

	fprintf(c->out, "<g id=\"frames\" data-total=\"%" PRIu64 "\" data-total2=\"%" PRIu64
		"\" data-unit=\"", c->total, c->total2);
	xml_put(c->out, c->unit, SIZE_MAX);
	fprintf(c->out, "\" data-mode=\"%s\" data-normalize=\"%d\" data-inverted=\"%d\" "
		"data-xpad=\"%u\" data-area=\"%u\" data-frame-h=\"%u\">\n",
		mode_name(c->o->mode), c->o->normalize, c->o->inverted, XPAD,
		c->l.width_px - 2 * XPAD, FRAME_H);
	for (i = 0; i < c->l.frames.nr; i++)
		put_frame(c, &c->l.frames.items[i]);
	fputs("</g>\n", c->out);
}

static void put_script(FILE *out)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(flame_viewer_js, out);
	fputs("]]></script>\n", out);
}

int flame_write_svg(struct flame *f, const struct flame_svg_opts *o, FILE *out)
{
	struct frame_tree t = { 0 };
	struct svg_ctx c = { .o = o, .t = &t, .out = out, .total = flame_total(f),
			     .total2 = flame_total2(f), .unit = o->unit ? o->unit : "samples" };
	int err;

	c.l.width_px = o->width_px ? o->width_px : DEFAULT_WIDTH_PX;
	if (c.l.width_px < 2 * XPAD + 10)
		c.l.width_px = 2 * XPAD + 10;
	err = frame_tree_build(&t, f, "all");
	if (!err)
		err = layout(&c);
	if (!err) {
		put_header(&c);
		put_frames(&c);
		if (!o->no_script)
			put_script(out);
		fputs("</svg>\n", out);
		err = ferror(out) ? -EIO : 0;
	}
	free(c.l.frames.items);
	frame_tree_release(&t);
	return err;
}
