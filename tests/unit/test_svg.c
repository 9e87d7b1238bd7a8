// SPDX-License-Identifier: GPL-2.0-only
/*
 * flamegraph/svg: golden files (without the viewer; UPDATE=1 rewrites them),
 * escaping, pruning, the colours of diff and hot/cold graphs, and xmllint
 * on everything rendered here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flamegraph/folded.h"
#include "flamegraph/svg.h"
#include "tests/unit/check.h"
#include "tests/unit/golden.h"

static const char small_folded[] =
	"app;main;hot_a 75\n"
	"app;main;hot_b 25\n"
	"app;main;read;vfs_read_[k] 5\n"
	"app;main;inl_[i] 3\n"
	"app;main;syscall:read 4\n"
	"app;jit_fn_[j] 3\n"
	"app;[unknown];libc.so.6+0x1f0 2\n"
	"app;main;a_function_with_a_very_long_name_that_cannot_fit_here 1\n";

static struct flame *flame_of(const char *text, unsigned int flags)
{
	struct flame *f = flame_new();
	struct folded_error e;

	CHECK(f && folded_parse(f, text, strlen(text), flags, &e) == 0);
	return f;
}

static const char *category(const char *name)
{
	return !strcmp(name, "read") ? "file" : NULL;
}

/* Render @f; the document is also checked with xmllint. Free the result. */
static char *render(struct flame *f, const struct flame_svg_opts *o)
{
	char path[] = "/tmp/latprof-test-svg.XXXXXX", cmd[96];
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int fd;

	CHECK(flame_write_svg(f, o, out) == 0);
	fclose(out);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	if (system(cmd) != 0) {
		fprintf(stderr, "xmllint rejects the SVG (is libxml2-utils installed? make setup)\n");
		check_failures++;
	}
	unlink(path);
	return buf;
}

static void check_goldens(void)
{
	struct flame *f = flame_of(small_folded, 0);
	struct flame *d = flame_of("app;main;grew 20 80\napp;main;shrank 80 20\napp;main;same 50 50\n"
				   "app;main;gone 10 0\n", FOLDED_FLAG_PAIRS);
	/* "STACK WEIGHT2 WEIGHT": spin on CPU, sleep off CPU, both half and half */
	struct flame *w = flame_of("app;main;spin 0 1000000000\napp;main;sleep 1000000000 1000000000\n"
				   "app;main;both 300000000 600000000\n", FOLDED_FLAG_PAIRS);
	struct flame_svg_opts o = { .title = "Small <test>", .subtitle = "a & b", .width_px = 600,
				    .no_script = true, .process_frames = true,
				    .category_fn = category };
	char *s;

	s = render(f, &o);
	check_golden("svg_plain.svg", s);
	free(s);
	o = (struct flame_svg_opts){ .width_px = 600, .no_script = true, .inverted = true,
				     .mode = FLAME_SVG_MODE_DIFF, .normalize = true };
	s = render(d, &o);
	check_golden("svg_diff_inverted.svg", s);
	free(s);
	o = (struct flame_svg_opts){ .width_px = 600, .no_script = true, .unit = "nanoseconds",
				     .mode = FLAME_SVG_MODE_HOTCOLD, .palette = FLAME_PALETTE_HOT };
	s = render(w, &o);
	check_golden("svg_hotcold.svg", s);
	free(s);
	flame_free(f);
	flame_free(d);
	flame_free(w);
}

/* The value of attribute @attr (still escaped) in the frame named @name. */
static char *frame_attr(const char *svg, const char *name, const char *attr)
{
	char key[256], *r = NULL;
	const char *g, *end, *a;

	snprintf(key, sizeof(key), "data-name=\"%s\"", name);
	g = strstr(svg, key);
	end = g ? strstr(g, "</g>") : NULL;
	g = g ? g - 1 : NULL;	/* from the blank before data-name */
	snprintf(key, sizeof(key), " %s=\"", attr);
	a = g ? strstr(g, key) : NULL;
	if (!a || a > end)
		return NULL;
	a += strlen(key);
	r = strndup(a, strchr(a, '"') - a);
	return r;
}

static void unescape(char *s)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&apos;", '\'' },
	};
	char *w = s;
	size_t i;

	while (*s) {
		for (i = 0; i < 5; i++)
			if (!strncmp(s, ents[i].ent, strlen(ents[i].ent)))
				break;
		*w++ = i < 5 ? ents[i].c : *s;
		s += i < 5 ? strlen(ents[i].ent) : 1;
	}
	*w = '\0';
}

static void check_escaping(void)
{
	const char *cxx = "std::vector<int>::push_back(int const&)";
	const char *q = "say \"hi\" & 'bye' <now>";
	const char *stack[] = { "app", cxx, q, "bad\x01utf8\xff\xc3" };
	struct flame *f = flame_new();
	struct flame_svg_opts o = { .no_script = true };
	char *s, *name;

	CHECK(flame_add(f, stack, 4, 10) == 0);
	s = render(f, &o);
	CHECK(strstr(s, "std::vector&lt;int&gt;::push_back(int const&amp;)") != NULL);
	name = frame_attr(s, "std::vector&lt;int&gt;::push_back(int const&amp;)", "data-name");
	CHECK(name != NULL);
	if (name) {
		unescape(name);
		CHECK_STR(name, cxx);
	}
	free(name);
	name = frame_attr(s, "say &quot;hi&quot; &amp; &apos;bye&apos; &lt;now&gt;", "data-name");
	CHECK(name != NULL);
	if (name) {
		unescape(name);
		CHECK_STR(name, q);
	}
	free(name);
	CHECK(strstr(s, "data-name=\"bad?utf8??\"") != NULL);	/* xmllint passed too */
	free(s);
	flame_free(f);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void check_pruning(void)
{
	const char *big[] = { "app", "main", "big" };
	const char *tiny[] = { "app", "main", NULL, "deeper" };
	struct flame *f = flame_new();
	struct flame_svg_opts o = { .no_script = true, .min_width_px = 0.1 };
	char name[32], *s;
	int i;

	CHECK(flame_add(f, big, 3, 1000000) == 0);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "tiny%d", i);
		tiny[2] = name;
		CHECK(flame_add(f, tiny, 4, 1) == 0);
	}
	s = render(f, &o);
	/* all, app, main, big: 1000 frames of 0.001 px are left out */
	CHECK(count(s, "<g class=\"f\"") == 4);
	CHECK(strstr(s, "tiny") == NULL);
	free(s);
	o.min_width_pct = 99.95;	/* big is 99.90% */
	s = render(f, &o);
	CHECK(count(s, "<g class=\"f\"") == 3);
	free(s);
	o = (struct flame_svg_opts){ .no_script = true };	/* no minimum: every frame */
	s = render(f, &o);
	CHECK(count(s, "<g class=\"f\"") == 4 + 2000);
	free(s);
	flame_free(f);
}

static unsigned int fill_of(const char *svg, const char *name, int channel)
{
	char *fill = frame_attr(svg, name, "fill");
	unsigned int rgb = 0;

	CHECK(fill && fill[0] == '#' && sscanf(fill + 1, "%x", &rgb) == 1);
	free(fill);
	return (rgb >> (16 - 8 * channel)) & 0xff;
}

static void check_colors(void)
{
	struct flame *d = flame_of("a;grew 20 80\na;shrank 80 20\na;same 50 50\n", FOLDED_FLAG_PAIRS);
	struct flame *w = flame_of("a;spin 0 100\na;sleep 100 100\n", FOLDED_FLAG_PAIRS);
	struct flame_svg_opts o = { .no_script = true, .mode = FLAME_SVG_MODE_DIFF,
				    .normalize = true };
	char *s = render(d, &o);

	CHECK(fill_of(s, "grew", 0) == 255 && fill_of(s, "grew", 2) < 100);
	CHECK(fill_of(s, "shrank", 2) == 255 && fill_of(s, "shrank", 0) < 100);
	CHECK(fill_of(s, "same", 0) == 255 && fill_of(s, "same", 1) == 255 &&
	      fill_of(s, "same", 2) == 255);
	CHECK(strstr(s, "data-name=\"grew\" data-w=\"80\" data-w2=\"20\"") != NULL);
	free(s);
	o.mode = FLAME_SVG_MODE_HOTCOLD;
	s = render(w, &o);
	CHECK(fill_of(s, "spin", 0) > 200 && fill_of(s, "spin", 2) < 60);
	CHECK(fill_of(s, "sleep", 2) > 200 && fill_of(s, "sleep", 0) < 110);
	CHECK(strstr(s, "off-CPU 100.0%") != NULL);
	free(s);
	flame_free(d);
	flame_free(w);
}

static void check_labels(void)
{
	const char *st[] = { "app", "a_function_with_a_long_name", "x" };
	struct flame *f = flame_new();
	struct flame_svg_opts o = { .no_script = true, .width_px = 200 };
	char *s;

	/* 180 px of frames: 24 characters fit, so 22 and ".." */
	CHECK(flame_add(f, st, 3, 1) == 0);
	s = render(f, &o);
	CHECK(strstr(s, ">a_function_with_a_long..</text>") != NULL);
	CHECK(strstr(s, "<title>a_function_with_a_long_name (1 samples, 100.00%)</title>") != NULL);
	free(s);
	o.no_script = false;
	s = render(f, &o);
	CHECK(strstr(s, "window.flameSearch") != NULL);
	CHECK(strstr(s, "<![CDATA[") != NULL);
	free(s);
	flame_free(f);
}

int main(void)
{
	check_goldens();
	check_escaping();
	check_pruning();
	check_colors();
	check_labels();
	return check_exit();
}
