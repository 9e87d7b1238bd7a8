// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layout and emission of time charts (timechart.h): axes first, then the
 * bars of each interval in a group with its hover title, then the line, then
 * the legend. Coordinates are printed with two decimals so that golden files
 * compare byte for byte.
 */
#include "flamegraph/timechart.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flamegraph/xml.h"

#define LEFT_PX 70		/* left axis, its ticks and label */
#define RIGHT_PX 80		/* right axis */
#define TOP_PX 60		/* title and subtitle */
#define BOTTOM_PX 84		/* time axis, its label, the legend */
#define Y_TICKS 5
#define X_TICKS_MAX 12

/* Plot area and scales. */
struct chart_layout {
	double x0, x1, y0, y1;		/* y0 top, y1 bottom */
	double t_total;			/* seconds across the x axis */
	double y_max, line_max;
	unsigned int w, h;
};

double timechart_nice_ceil(double v)
{
	static const double steps[] = { 1, 2, 2.5, 5, 10 };
	double mag;
	size_t i;

	if (!(v > 0))
		return 1;
	mag = pow(10, floor(log10(v)));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] * mag >= v * (1 - 1e-12))
			return steps[i] * mag;
	return 10 * mag;
}

static double point_sum(const struct timechart *c, const struct timechart_point *pt)
{
	double s = 0;
	size_t k;

	for (k = 0; k < c->nr_series; k++)
		s += pt->value[k] > 0 ? pt->value[k] : 0;
	return s;
}

static void chart_layout(const struct timechart *c, struct chart_layout *l)
{
	double y_max = 0, line_max = 0, end;
	size_t i;

	l->w = c->width_px ? c->width_px : 1200;
	l->h = c->height_px ? c->height_px : 480;
	l->x0 = LEFT_PX;
	l->x1 = l->w - RIGHT_PX;
	l->y0 = TOP_PX;
	l->y1 = l->h - BOTTOM_PX;
	l->t_total = 0;
	for (i = 0; i < c->nr_points; i++) {
		const struct timechart_point *pt = &c->points[i];

		end = pt->start_s + pt->duration_s;
		if (end > l->t_total)
			l->t_total = end;
		if (point_sum(c, pt) > y_max)
			y_max = point_sum(c, pt);
		if (pt->line > line_max)
			line_max = pt->line;
	}
	if (!(l->t_total > 0))
		l->t_total = 1;
	l->y_max = timechart_nice_ceil(y_max);
	l->line_max = timechart_nice_ceil(line_max);
}

static double x_of(const struct chart_layout *l, double t)
{
	return l->x0 + (l->x1 - l->x0) * t / l->t_total;
}

static double y_of(const struct chart_layout *l, double v, double max)
{
	return l->y1 - (l->y1 - l->y0) * v / max;
}

/* A tick label: as few decimals as the step needs. */
static void put_number(FILE *out, double v, double step)
{
	int decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;

	fprintf(out, "%.*f", decimals, v);
}

static void put_axes(const struct timechart *c, const struct chart_layout *l, FILE *out)
{
	double step = l->y_max / Y_TICKS, lstep = l->line_max / Y_TICKS;
	double tstep = timechart_nice_ceil(l->t_total / X_TICKS_MAX), t, y;
	int i;

	fputs("<g id=\"axes\">\n", out);
	for (i = 0; i <= Y_TICKS; i++) {
		y = y_of(l, i * step, l->y_max);
		fprintf(out, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"yl\" x=\"%.2f\" y=\"%.2f\">", l->x0, y, l->x1, y, l->x0 - 6,
			y + 4);
		put_number(out, i * step, step);
		fputs("</text>", out);
		if (c->line_label) {
			fprintf(out, "<text class=\"yr\" x=\"%.2f\" y=\"%.2f\">", l->x1 + 6, y + 4);
			put_number(out, i * lstep, lstep);
			fputs("</text>", out);
		}
		fputc('\n', out);
	}
	for (t = 0; t <= l->t_total * (1 + 1e-9); t += tstep) {
		fprintf(out, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"xl\" x=\"%.2f\" y=\"%.2f\">", x_of(l, t), l->y1, x_of(l, t),
			l->y1 + 5, x_of(l, t), l->y1 + 18);
		put_number(out, t, tstep);
		fputs("</text>\n", out);
	}
	fprintf(out, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
		"<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
		l->x0, l->y0, l->x0, l->y1, l->x0, l->y1, l->x1, l->y1);
	fprintf(out, "<text id=\"xlabel\" x=\"%.2f\" y=\"%.2f\">", (l->x0 + l->x1) / 2, l->y1 + 36);
	xml_put(out, c->x_label ? c->x_label : "", SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"ylabel\" transform=\"translate(18 %.2f) rotate(-90)\">",
		(l->y0 + l->y1) / 2);
	xml_put(out, c->y_label ? c->y_label : "", SIZE_MAX);
	fputs("</text>\n", out);
	if (c->line_label) {
		fprintf(out, "<text id=\"y2label\" transform=\"translate(%.2f %.2f) rotate(90)\">",
			(double)l->w - 14, (l->y0 + l->y1) / 2);
		xml_put(out, c->line_label, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
}

static void put_title(const struct timechart *c, const struct timechart_point *pt, FILE *out)
{
	size_t k;

	fprintf(out, "<title>%.2f-%.2f s:", pt->start_s, pt->start_s + pt->duration_s);
	for (k = 0; k < c->nr_series; k++) {
		fprintf(out, "%s ", k ? "," : "");
		xml_put(out, c->series[k].name, SIZE_MAX);
		fprintf(out, " %.3f ", pt->value[k]);
		xml_put(out, c->value_unit ? c->value_unit : "", SIZE_MAX);
	}
	if (c->line_label && pt->line >= 0) {
		fputs(", ", out);
		xml_put(out, c->line_label, SIZE_MAX);
		fprintf(out, " %.1f ", pt->line);
		xml_put(out, c->line_unit ? c->line_unit : "", SIZE_MAX);
	}
	if (pt->detail) {
		fputs(", ", out);
		xml_put(out, pt->detail, SIZE_MAX);
	}
	fputs("</title>", out);
}

static void put_bars(const struct timechart *c, const struct chart_layout *l, FILE *out)
{
	size_t i, k;

	fputs("<g id=\"bars\">\n", out);
	for (i = 0; i < c->nr_points; i++) {
		const struct timechart_point *pt = &c->points[i];
		double xa = x_of(l, pt->start_s), xb = x_of(l, pt->start_s + pt->duration_s);
		double w = xb - xa > 3 ? xb - xa - 1 : xb - xa, base = 0, ya, yb;

		fprintf(out, "<g class=\"iv\" data-start=\"%.3f\">", pt->start_s);
		put_title(c, pt, out);
		/* the whole column catches the hover, even where it is empty */
		fprintf(out, "<rect class=\"hit\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>",
			xa, l->y0, w, l->y1 - l->y0);
		for (k = 0; k < c->nr_series; k++) {
			const struct flame_rgb *rgb = &c->series[k].color;

			if (!(pt->value[k] > 0))
				continue;
			yb = y_of(l, base, l->y_max);
			base += pt->value[k];
			ya = y_of(l, base, l->y_max);
			fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"#%02x%02x%02x\"/>", xa, ya, w, yb - ya, rgb->r, rgb->g, rgb->b);
		}
		fputs("</g>\n", out);
	}
	fputs("</g>\n", out);
}

/* The line: a point at the end of each interval (when the value was read). */
static void put_line(const struct timechart *c, const struct chart_layout *l, FILE *out)
{
	const struct flame_rgb *rgb = &c->line_color;
	size_t i, n = 0;

	if (!c->line_label)
		return;
	fprintf(out, "<polyline id=\"line\" fill=\"none\" stroke=\"#%02x%02x%02x\" "
		"stroke-width=\"2\" points=\"", rgb->r, rgb->g, rgb->b);
	for (i = 0; i < c->nr_points; i++) {
		const struct timechart_point *pt = &c->points[i];

		if (pt->line < 0)
			continue;
		fprintf(out, "%s%.2f,%.2f", n++ ? " " : "", x_of(l, pt->start_s + pt->duration_s),
			y_of(l, pt->line, l->line_max));
	}
	fputs("\"/>\n", out);
}

static void put_legend_item(FILE *out, double *x, double y, const char *name,
			    const struct flame_rgb *rgb, bool line)
{
	if (line)
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#%02x%02x%02x\" "
			"stroke-width=\"2\"/>", *x, y - 4, *x + 12, y - 4, rgb->r, rgb->g, rgb->b);
	else
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"10\" "
			"fill=\"#%02x%02x%02x\"/>", *x, y - 9, rgb->r, rgb->g, rgb->b);
	fprintf(out, "<text x=\"%.2f\" y=\"%.2f\">", *x + 16, y);
	xml_put(out, name, SIZE_MAX);
	fputs("</text>\n", out);
	*x += 16 + 7.5 * xml_strlen(name) + 18;
}

static void put_legend(const struct timechart *c, const struct chart_layout *l, FILE *out)
{
	double x = l->x0, y = l->h - 12;
	size_t k;

	fputs("<g id=\"legend\">\n", out);
	for (k = 0; k < c->nr_series; k++)
		put_legend_item(out, &x, y, c->series[k].name, &c->series[k].color, false);
	if (c->line_label)
		put_legend_item(out, &x, y, c->line_label, &c->line_color, true);
	fputs("</g>\n", out);
}

static const char chart_style[] =
	"<style type=\"text/css\">\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { text-anchor: middle; fill: #555; }\n"
	"#xlabel, #ylabel, #y2label, .xl { text-anchor: middle; }\n"
	".yl { text-anchor: end; }\n"
	".grid { stroke: #ddd; stroke-width: 1; }\n"
	".axis, .tick { stroke: #333; stroke-width: 1; }\n"
	".hit { fill: #000; fill-opacity: 0; }\n"
	".iv:hover .hit { fill-opacity: 0.06; }\n"
	"#line { pointer-events: none; }\n"
	"</style>\n";

int timechart_write_svg(const struct timechart *c, FILE *out)
{
	struct chart_layout l;

	if (c->nr_series > TIMECHART_MAX_SERIES)
		return -EINVAL;
	chart_layout(c, &l);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", l.w, l.h, l.w, l.h);
	fputs(chart_style, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f7f7f2\"/>\n", l.w,
		l.h);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", l.w / 2);
	xml_put(out, c->title ? c->title : "Timeline", SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"42\">", l.w / 2);
	xml_put(out, c->subtitle ? c->subtitle : "", SIZE_MAX);
	fputs("</text>\n", out);
	put_axes(c, &l, out);
	put_bars(c, &l, out);
	put_line(c, &l, out);
	put_legend(c, &l, out);
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
