// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for CPython code objects read from a target's memory
 * (symbolize/pycode.c), which the profiled process controls. Byte 0 picks
 * the version (3.8 + byte % 6), bit 0 of byte 1 takes the struct offsets
 * from bytes 4..27 (twelve little-endian int16, -1 allowed) instead of the
 * version's real x86-64 layout, bytes 2-3 are the code object's offset in
 * the image; the rest is the memory at FUZZ_IMAGE_BASE, served by a read
 * callback that fails outside it. The code object is read, then offsets and
 * lines are asked for across and past its line table. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/pycode.h"

#define FUZZ_HEADER 28
#define FUZZ_IMAGE_BASE 0x10000ull
#define FUZZ_MAX_READS 12	/* 4 code fields, 3 per string, 2 for the table */
#define FUZZ_NR_LINES 64

struct fuzz_image {
	const uint8_t *data;
	size_t size;
	size_t nr_reads;
};

/* PyCodeObject, PyBytesObject and PyUnicodeObject of x86-64 3.8 to 3.13 (gdb ptype /o). */
struct fuzz_layout {
	int16_t name, qualname, filename, firstlineno, linetable, adaptive;
	int16_t ascii_size, compact_size;
};

static const struct fuzz_layout layouts[6] = {
	{ 112, -1, 104, 40, 120, -1, 48, 72 },	/* 3.8: co_lnotab */
	{ 112, -1, 104, 40, 120, -1, 48, 72 },	/* 3.9 */
	{ 112, -1, 104, 40, 120, -1, 48, 72 },	/* 3.10: co_linetable */
	{ 120, 128, 112, 72, 136, 184, 48, 72 },	/* 3.11 */
	{ 120, 128, 112, 68, 136, 192, 40, 56 },	/* 3.12: no wstr */
	{ 120, 128, 112, 68, 136, 200, 40, 56 },	/* 3.13 */
};

static int fuzz_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_image *img = arg;

	/* every read is bounded, and nothing is read twice */
	if (len > PY_CODE_MAX_LINETABLE || ++img->nr_reads > FUZZ_MAX_READS)
		abort();
	if (addr < FUZZ_IMAGE_BASE || addr - FUZZ_IMAGE_BASE > img->size ||
	    len > img->size - (addr - FUZZ_IMAGE_BASE))
		return -EFAULT;
	memcpy(buf, img->data + (addr - FUZZ_IMAGE_BASE), len);
	return 0;
}

static int16_t le16(const uint8_t *p)
{
	return (int16_t)(p[0] | p[1] << 8);
}

static void fuzz_offsets(const uint8_t *data, struct py_offsets *o)
{
	const struct fuzz_layout *l = &layouts[data[0] % 6];
	const uint8_t *p = data + 4;

	memset(o, 0xff, sizeof(*o));
	o->version = PY_VERSION_OF(3, 8 + data[0] % 6, 0);
	if (data[1] & 1) {
		o->code_name = le16(p);
		o->code_qualname = le16(p + 2);
		o->code_filename = le16(p + 4);
		o->code_firstlineno = le16(p + 6);
		o->code_linetable = le16(p + 8);
		o->code_adaptive = le16(p + 10);
		o->bytes_size = le16(p + 12);
		o->bytes_sval = le16(p + 14);
		o->unicode_length = le16(p + 16);
		o->unicode_state = le16(p + 18);
		o->unicode_ascii_size = le16(p + 20);
		o->unicode_compact_size = le16(p + 22);
		return;
	}
	o->code_name = l->name;
	o->code_qualname = l->qualname;
	o->code_filename = l->filename;
	o->code_firstlineno = l->firstlineno;
	o->code_linetable = l->linetable;
	o->code_adaptive = l->adaptive;
	o->bytes_size = 16;
	o->bytes_sval = 32;
	o->unicode_length = 16;
	o->unicode_state = 32;
	o->unicode_ascii_size = l->ascii_size;
	o->unicode_compact_size = l->compact_size;
}

static bool name_ok(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t n = 0;
	int more;

	if (!s)
		return false;
	for (; *p; p++, n++) {
		if (*p < 0x80)
			continue;
		if (*p >= 0xc2 && *p <= 0xdf)
			more = 1;
		else if (*p >= 0xe0 && *p <= 0xef)
			more = 2;
		else if (*p >= 0xf0 && *p <= 0xf4)
			more = 3;
		else
			return false;
		for (; more; more--, n++)
			if ((*++p & 0xc0) != 0x80)
				return false;
	}
	return n <= PY_CODE_MAX_NAME;
}

/* Offsets from instruction pointers around the code's start, and lines across the table. */
static void fuzz_lines(const struct py_offsets *o, const struct py_code *c, uint64_t code)
{
	/* an entry covers at most 255 bytes per 2 (3.8-3.10) or 16 per byte (3.11+) */
	int64_t span = (int64_t)c->linetable_len * 128 + 16, stride, off;
	uint64_t instr;
	int i;

	stride = (span / FUZZ_NR_LINES + 2) & ~1ll;
	for (off = -2; off < span; off += stride)
		(void)py_code_line(c, o->version, off);
	if (PY_MM(o->version) >= PY_VERSION_OF(3, 10, 0) && py_code_line(c, o->version, span))
		abort();	/* past the table: no line */
	for (i = -2; i < 30; i++) {
		if (PY_MM(o->version) <= PY_VERSION_OF(3, 10, 0))
			instr = (uint64_t)(int64_t)i;
		else
			instr = code + (uint64_t)(int64_t)o->code_adaptive + (uint64_t)(int64_t)i;
		off = py_code_offset(o, code, instr);
		if (off != -1 && (off < 0 || off % 2))
			abort();
		(void)py_code_line(c, o->version, off);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img = { .data = data + FUZZ_HEADER };
	struct py_offsets o;
	struct py_code c;
	uint64_t code;
	int err;

	if (size < FUZZ_HEADER)
		return 0;
	img.size = size - FUZZ_HEADER;
	fuzz_offsets(data, &o);
	code = FUZZ_IMAGE_BASE + (uint16_t)le16(data + 2);
	err = py_code_read(&o, fuzz_read, &img, code, &c);
	if (err) {
		/* the contract: the read's error, EINVAL or ENOMEM, and nothing kept */
		if ((err != -EFAULT && err != -EINVAL && err != -ENOMEM) || c.qualname ||
		    c.filename || c.linetable || c.linetable_len)
			abort();
	} else if (!name_ok(c.qualname) || !name_ok(c.filename) ||
		   c.linetable_len > PY_CODE_MAX_LINETABLE || (!c.linetable && c.linetable_len)) {
		abort();
	}
	fuzz_lines(&o, &c, code);
	py_code_release(&c);
	py_code_release(&c);
	return 0;
}
