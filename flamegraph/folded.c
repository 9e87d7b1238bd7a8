// SPDX-License-Identifier: GPL-2.0-only
/*
 * The folded-text parser. It works on a buffer rather than a stream, so a
 * NUL byte in the input is seen (and refused) instead of silently cutting a
 * line, and a line's length is limited by the input only.
 */
#include "flamegraph/folded.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/util.h"

/* Scratch space reused line after line: a copy of the stack, frame pointers. */
struct folded_scratch {
	struct { char *items; size_t nr, alloc; } text;
	struct { const char **items; size_t nr, alloc; } frames;
};

static int folded_fail(struct folded_error *e, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int folded_fail(struct folded_error *e, size_t line, const char *fmt, ...)
{
	va_list ap;

	e->line = line;
	va_start(ap, fmt);
	vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A printable excerpt of untrusted @s[0..n) for an error message. */
static void excerpt(char *out, size_t size, const char *s, size_t n)
{
	size_t i, max = size - 4;

	for (i = 0; i < n && i < max; i++)
		out[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (n > max)
		memcpy(out + i, "...", 3), i += 3;
	out[i] = '\0';
}

/* 0, -EINVAL (not digits) or -ERANGE (does not fit 64 bits). */
static int parse_weight(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	for (i = 0; i < n; i++) {
		if (v > (UINT64_MAX - (s[i] - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Where the last blank-separated token of @s[0..n) starts (n if none). */
static size_t last_token(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && !is_blank(s[i - 1]))
		i--;
	return i;
}

static size_t trim_end(const char *s, size_t n)
{
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	return n;
}

/* The weight at the end of @s[0..*n); *n becomes the length before it. */
static int take_weight(const char *s, size_t *n, size_t line, uint64_t *w,
		       struct folded_error *e)
{
	size_t t = last_token(s, *n);
	char buf[40];
	int err;

	if (t == 0)
		return folded_fail(e, line, "missing weight");
	err = parse_weight(s + t, *n - t, w);
	if (err == -ERANGE)
		return folded_fail(e, line, "weight out of range");
	if (err) {
		excerpt(buf, sizeof(buf), s + t, *n - t);
		return folded_fail(e, line, "weight '%s' is not a number", buf);
	}
	*n = trim_end(s, t);
	return 0;
}

/* Split the stack @s[0..n) into the scratch frames. */
static int split_frames(struct folded_scratch *sc, const char *s, size_t n, size_t line,
			struct folded_error *e)
{
	size_t i, start = 0;

	sc->text.nr = 0;
	sc->frames.nr = 0;
	if (array_grow(&sc->text, n + 1))
		return -ENOMEM;
	memcpy(sc->text.items, s, n);
	sc->text.items[n] = '\0';
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != ';')
			continue;
		if (i == start)
			return folded_fail(e, line, "empty frame");
		if (sc->frames.nr == FOLDED_MAX_FRAMES)
			return folded_fail(e, line, "more than %d frames", FOLDED_MAX_FRAMES);
		if (array_grow(&sc->frames, sc->frames.nr + 1))
			return -ENOMEM;
		sc->text.items[i] = '\0';
		sc->frames.items[sc->frames.nr++] = sc->text.items + start;
		start = i + 1;
	}
	return 0;
}

static int parse_line(struct flame *f, struct folded_scratch *sc, const char *s, size_t n,
		      unsigned flags, size_t line, struct folded_error *e)
{
	uint64_t w, w2 = 0;
	size_t rest;
	int err;

	if (memchr(s, '\0', n))
		return folded_fail(e, line, "NUL byte");
	err = take_weight(s, &n, line, &w, e);
	if (err)
		return err;
	/* "STACK BEFORE AFTER": the token before the weight is a number too */
	rest = last_token(s, n);
	if ((flags & FOLDED_FLAG_PAIRS) && rest > 0 && !parse_weight(s + rest, n - rest, &w2))
		n = trim_end(s, rest);
	if (!n)
		return folded_fail(e, line, "empty stack");
	err = split_frames(sc, s, n, line, e);
	if (!err)
		err = flame_add_pair(f, sc->frames.items, sc->frames.nr, w, w2);
	if (err == -ERANGE)
		return folded_fail(e, line, "total weight out of range");
	return err;
}

int folded_parse(struct flame *f, const char *buf, size_t len, unsigned flags,
		 struct folded_error *e)
{
	struct folded_scratch sc = { 0 };
	size_t line = 0, off = 0, n;
	const char *nl;
	int err = 0;

	e->line = 0;
	e->reason[0] = '\0';
	while (!err && off < len) {
		nl = memchr(buf + off, '\n', len - off);
		n = nl ? (size_t)(nl - (buf + off)) : len - off;
		line++;
		if (n && buf[off + n - 1] == '\r')
			n--;
		n = trim_end(buf + off, n);
		if (n)
			err = parse_line(f, &sc, buf + off, n, flags, line, e);
		off = nl ? (size_t)(nl - buf) + 1 : len;
	}
	free(sc.text.items);
	free(sc.frames.items);
	return err;
}
