// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython code objects read from another process (pycode.h): the names as
 * UTF-8, the first line, a copy of the line table, and the three line table
 * formats decoded as CPython's own PyCode_Addr2Line does. What a code object
 * says about its strings and tables is the target's word, so lengths are
 * capped before anything is allocated or read, and decoding never leaves
 * the copied table. Frames and threads are not read here (the BPF walk
 * does that); this module only turns one code object into names and lines.
 */
#include "symbolize/pycode.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MM(minor) PY_VERSION_OF(3, minor, 0)

/*
 * PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1 from 3.8 to
 * 3.15 (Include/cpython/unicodeobject.h); the free-threaded build of 3.14
 * and 3.15 makes interned a byte of its own, and is not read here.
 */
#define PY_STATE_KIND(s) ((s) >> 2 & 7)
#define PY_STATE_COMPACT(s) ((s) >> 5 & 1)
#define PY_STATE_ASCII(s) ((s) >> 6 & 1)

/* A code object's name or file longer than this (code points) is garbage. */
#define PY_STR_MAX_LENGTH INT32_MAX
/* Offsets past this are no instruction of a real code object. */
#define PY_CODE_MAX_OFFSET (1 << 30)

/* PEP 657 location entry codes (Objects/locations.md) */
#define PY_LOC_ONE_LINE0 10
#define PY_LOC_ONE_LINE2 12
#define PY_LOC_NO_COLUMNS 13
#define PY_LOC_LONG 14
#define PY_LOC_NONE 15

/* The 3.10 line table's line delta for "no line" (Objects/lnotab_notes.txt). */
#define PY_LINETABLE_NO_LINE (-128)

static int read_u64(py_read_fn read, void *arg, uint64_t addr, uint64_t *v)
{
	return read(arg, addr, v, sizeof(*v));
}

/* 0 when the object at @addr has type @type (or @type is 0: unchecked). */
static int check_type(const struct py_offsets *o, uint64_t type, py_read_fn read, void *arg,
		      uint64_t addr)
{
	uint64_t v;
	int err;

	if (!type)
		return 0;
	if (o->object_type < 0)
		return -EINVAL;
	err = read_u64(read, arg, addr + o->object_type, &v);
	return err ? err : v == type ? 0 : -EINVAL;
}

/* Append @cp to @out as UTF-8 if it fits in @cap bytes; false when it does not. */
static bool utf8_put(char *out, size_t *len, size_t cap, uint32_t cp)
{
	uint8_t b[4];
	size_t n;

	/* a NUL would end the C string early; surrogates are not UTF-8 */
	if (!cp || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = '?';
	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | cp >> 6;
		b[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | cp >> 12;
		b[1] = 0x80 | (cp >> 6 & 0x3f);
		b[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		b[0] = 0xf0 | cp >> 18;
		b[1] = 0x80 | (cp >> 12 & 0x3f);
		b[2] = 0x80 | (cp >> 6 & 0x3f);
		b[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	if (*len + n > cap)
		return false;
	memcpy(out + *len, b, n);
	*len += n;
	return true;
}

/* Code point @i of @data, @kind bytes each (the target's byte order is ours). */
static uint32_t code_point(const uint8_t *data, unsigned int kind, size_t i)
{
	uint16_t u16;
	uint32_t u32;

	switch (kind) {
	case 1:
		return data[i];
	case 2:
		memcpy(&u16, data + 2 * i, sizeof(u16));
		return u16;
	default:
		memcpy(&u32, data + 4 * i, sizeof(u32));
		return u32;
	}
}

/* @nr code points of @kind at @data as an owned UTF-8 string, cut at PY_CODE_MAX_NAME. */
static char *utf8_from(const uint8_t *data, unsigned int kind, bool ascii, size_t nr)
{
	char *out = malloc(PY_CODE_MAX_NAME + 1), *shrunk;
	size_t i, len = 0;

	if (!out)
		return NULL;
	for (i = 0; i < nr; i++) {
		uint32_t cp = code_point(data, kind, i);

		if (ascii && cp >= 0x80)
			cp = '?';	/* the state says ASCII: anything else is garbage */
		if (!utf8_put(out, &len, PY_CODE_MAX_NAME, cp))
			break;
	}
	out[len] = '\0';
	shrunk = realloc(out, len + 1);
	return shrunk ? shrunk : out;
}

/*
 * The str at @addr as an owned UTF-8 string. Code object names and files are
 * always compact (created ready, never resized), so a legacy string is not
 * one of them.
 */
static int read_unicode(const struct py_offsets *o, uint64_t type, py_read_fn read, void *arg,
			uint64_t addr, char **out)
{
	uint64_t length;
	uint32_t state;
	unsigned int kind;
	uint8_t *data;
	size_t nr;
	int err;

	if (!addr)
		return -EINVAL;
	err = check_type(o, type, read, arg, addr);
	if (!err)
		err = read_u64(read, arg, addr + o->unicode_length, &length);
	if (!err)
		err = read(arg, addr + o->unicode_state, &state, sizeof(state));
	if (err)
		return err;
	kind = PY_STATE_KIND(state);
	if ((int64_t)length < 0 || length > PY_STR_MAX_LENGTH || !PY_STATE_COMPACT(state) ||
	    (kind != 1 && kind != 2 && kind != 4) || (PY_STATE_ASCII(state) && kind != 1))
		return -EINVAL;
	/* each code point is at least one byte of UTF-8: no need to read more */
	nr = length < PY_CODE_MAX_NAME ? length : PY_CODE_MAX_NAME;
	data = malloc(nr * kind + 1);
	if (!data)
		return -ENOMEM;
	addr += PY_STATE_ASCII(state) ? o->unicode_ascii_size : o->unicode_compact_size;
	err = nr ? read(arg, addr, data, nr * kind) : 0;
	if (!err) {
		*out = utf8_from(data, kind, PY_STATE_ASCII(state), nr);
		err = *out ? 0 : -ENOMEM;
	}
	free(data);
	return err;
}

int py_str_read(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		void *arg, uint64_t addr, char **out)
{
	return read_unicode(o, t ? t->unicode : 0, read, arg, addr, out);
}

/*
 * The bytes object at @addr into c->linetable. One that cannot be read or is
 * too long only costs the line numbers; a negative size is not a bytes
 * object. An empty table is kept (a one-byte allocation of length 0): in 3.8
 * and 3.9 it means every instruction is on the first line.
 */
static int read_linetable(const struct py_offsets *o, uint64_t type, py_read_fn read,
			  void *arg, uint64_t addr, struct py_code *c)
{
	uint64_t size;
	uint8_t *buf;

	if (!addr || read_u64(read, arg, addr + o->bytes_size, &size))
		return 0;
	if (check_type(o, type, read, arg, addr))
		return -EINVAL;
	if ((int64_t)size < 0)
		return -EINVAL;
	if (size > PY_CODE_MAX_LINETABLE)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	if (size && read(arg, addr + o->bytes_sval, buf, size)) {
		free(buf);
		return 0;
	}
	c->linetable = buf;
	c->linetable_len = size;
	return 0;
}

static bool offsets_usable(const struct py_offsets *o)
{
	return o->code_name >= 0 && o->code_filename >= 0 && o->code_firstlineno >= 0 &&
	       o->code_linetable >= 0 && o->bytes_size >= 0 && o->bytes_sval >= 0 &&
	       o->unicode_length >= 0 && o->unicode_state >= 0 && o->unicode_ascii_size >= 0 &&
	       o->unicode_compact_size >= 0;
}

/*
 * A qualified name is identifiers joined by dots, with <locals>, <lambda>,
 * <module>, <listcomp>, ... (any non-ASCII letters allowed; ? is what
 * utf8_from put for a bad code point): a space, a
 * control character or a ';' means the memory was something else.
 */
static bool qualname_plausible(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch >= 0x80 || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("_.<>-?", ch))
			continue;
		return false;
	}
	return true;
}

/* A file name has no control characters; ';' (the folded separator) becomes '?'. */
static bool filename_clean(char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
		if (*s == ';')
			*s = '?';
	}
	return true;
}

/* The members of the code object at @addr that name it, into @ref. */
static int read_ref(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		    void *arg, uint64_t addr, struct py_code_ref *ref)
{
	int32_t name_off = o->code_qualname >= 0 ? o->code_qualname : o->code_name;
	int32_t first = 0;
	int err;

	err = check_type(o, t->code, read, arg, addr);
	if (!err)
		err = read_u64(read, arg, addr + name_off, &ref->name);
	if (!err)
		err = read_u64(read, arg, addr + o->code_filename, &ref->file);
	if (!err)
		err = read(arg, addr + o->code_firstlineno, &first, sizeof(first));
	if (!err)
		err = read_u64(read, arg, addr + o->code_linetable, &ref->table);
	ref->type = t->code;
	ref->firstlineno = (uint32_t)first;
	return err;
}

/*
 * The compact ASCII string whose bytes from its length member on are @raw:
 * 0 and *out set, -ENOENT when it is not one or does not fit.
 */
static int unicode_from_raw(const struct py_offsets *o, const uint8_t *raw, size_t len,
			    char **out)
{
	size_t state_at = (size_t)(o->unicode_state - o->unicode_length);
	size_t data_at = (size_t)(o->unicode_ascii_size - o->unicode_length);
	uint64_t length;
	uint8_t state;

	if (!raw || o->unicode_state <= o->unicode_length ||
	    o->unicode_ascii_size <= o->unicode_length || data_at > len || state_at >= len)
		return -ENOENT;
	memcpy(&length, raw, sizeof(length));
	state = raw[state_at];
	if (!PY_STATE_COMPACT(state) || !PY_STATE_ASCII(state) || PY_STATE_KIND(state) != 1 ||
	    !length || length > len - data_at)
		return -ENOENT;
	*out = utf8_from(raw + data_at, 1, true, (size_t)length);
	return *out ? 0 : -ENOMEM;
}

/* The strings and line table @ref points at, into @c. */
static int read_named(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		      void *arg, const struct py_code_ref *ref, struct py_code *c)
{
	int32_t first = (int32_t)ref->firstlineno;
	int err;

	if (t->code && ref->type != t->code)
		return -EINVAL;
	err = unicode_from_raw(o, ref->name_raw, ref->name_raw_len, &c->qualname);
	if (err == -ENOENT)
		err = read_unicode(o, t->unicode, read, arg, ref->name, &c->qualname);
	if (!err)
		err = read_unicode(o, t->unicode, read, arg, ref->file, &c->filename);
	if (err)
		return err;
	if (!qualname_plausible(c->qualname) || !filename_clean(c->filename))
		return -EINVAL;
	c->firstlineno = first > 0 ? (uint32_t)first : 0;
	err = read_linetable(o, t->bytes, read, arg, ref->table, c);
	/* a copy outlives its code object, whose line table went with it: no lines */
	return err == -EINVAL && ref->name_raw ? 0 : err;
}

int py_code_read_typed(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		       void *arg, uint64_t addr, struct py_code *out)
{
	struct py_code_ref ref = { 0 };
	int err;

	memset(out, 0, sizeof(*out));
	if (!offsets_usable(o))
		return -EINVAL;
	err = read_ref(o, t, read, arg, addr, &ref);
	if (!err)
		err = read_named(o, t, read, arg, &ref, out);
	if (err)
		py_code_release(out);
	return err;
}

int py_code_name_from_ref(const struct py_offsets *o, const struct py_code_ref *ref, char **out)
{
	int err;

	*out = NULL;
	if (!offsets_usable(o))
		return -EINVAL;
	err = unicode_from_raw(o, ref->name_raw, ref->name_raw_len, out);
	if (err)
		return err == -ENOENT ? -EINVAL : err;
	if (!qualname_plausible(*out)) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

int py_code_file_from_ref(const struct py_offsets *o, const struct py_code_ref *ref, char **out)
{
	size_t state_at = (size_t)(o->unicode_state - o->unicode_length), n, cut;
	uint64_t length;
	uint8_t state;
	char *tail;

	*out = NULL;
	if (!offsets_usable(o) || !ref->file_hdr || !ref->file_tail || !ref->file_tail_len ||
	    o->unicode_state <= o->unicode_length || state_at >= ref->file_hdr_len ||
	    ref->file_hdr_len < sizeof(length))
		return -EINVAL;
	memcpy(&length, ref->file_hdr, sizeof(length));
	state = ref->file_hdr[state_at];
	if (!length || !PY_STATE_COMPACT(state) || !PY_STATE_ASCII(state) ||
	    PY_STATE_KIND(state) != 1)
		return -EINVAL;
	n = length < ref->file_tail_len ? (size_t)length : ref->file_tail_len;
	cut = length > n ? 3 : 0;
	/* a NUL: not the string the header is of (freed, or cut by a failed read) */
	if (memchr(ref->file_tail, 0, n))
		return -EINVAL;
	tail = utf8_from(ref->file_tail, 1, true, n);
	if (!tail)
		return -ENOMEM;
	if (!filename_clean(tail)) {
		free(tail);
		return -EINVAL;
	}
	*out = malloc(cut + n + 1);
	if (*out) {
		memcpy(*out, "...", cut);
		memcpy(*out + cut, tail, n + 1);
	}
	free(tail);
	return *out ? 0 : -ENOMEM;
}

int py_code_read_ref(const struct py_offsets *o, const struct py_types *t, py_read_fn read,
		     void *arg, const struct py_code_ref *ref, struct py_code *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (!offsets_usable(o) || !ref->name || !ref->file)
		return -EINVAL;
	err = read_named(o, t, read, arg, ref, out);
	if (err)
		py_code_release(out);
	return err;
}

int py_code_read(const struct py_offsets *o, py_read_fn read, void *arg, uint64_t addr,
		 struct py_code *out)
{
	static const struct py_types unchecked;

	return py_code_read_typed(o, &unchecked, read, arg, addr, out);
}

void py_code_release(struct py_code *c)
{
	if (!c)
		return;
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

int64_t py_code_offset(const struct py_offsets *o, uint64_t code_addr, uint64_t instr)
{
	uint32_t mm = PY_MM(o->version);
	uint64_t base;
	int64_t off;

	if (mm < MM(8) || mm > PY_MM(PY_VERSION_MAX))
		return -1;
	if (mm <= MM(10)) {
		/* f_lasti is a C int: the BPF side stores the low 32 bits */
		off = (int32_t)(uint32_t)instr;
		if (mm == MM(10))
			off *= 2;	/* 3.10 counts 2-byte code units */
	} else {
		/* 3.11 and 3.12 point before the first instruction until it runs */
		if (o->code_adaptive < 0)
			return -1;
		base = code_addr + (uint64_t)o->code_adaptive;
		if (instr < base || instr - base >= PY_CODE_MAX_OFFSET)
			return -1;
		off = (int64_t)(instr - base);
	}
	if (off < 0 || off >= PY_CODE_MAX_OFFSET || off % 2)
		return -1;
	return off;
}

/*
 * 3.8 and 3.9 co_lnotab: (address delta, signed line delta) pairs; the line
 * of an instruction is that of the last pair starting at or before it, so an
 * offset past the code still gets the last line, as in CPython.
 */
static int64_t lnotab_line(const uint8_t *t, size_t len, int64_t line, int64_t offset)
{
	int64_t addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > offset)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/*
 * 3.10 co_linetable (PEP 626): each pair is an address range of its byte
 * length and a line delta from the previous range's line, -128 for a range
 * without a line (which leaves the running line alone). Zero-length ranges
 * carry line jumps over 127.
 */
static int64_t linetable_line(const uint8_t *t, size_t len, int64_t line, int64_t offset)
{
	int64_t start, end = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		start = end;
		end += t[i];
		if ((int8_t)t[i + 1] != PY_LINETABLE_NO_LINE)
			line += (int8_t)t[i + 1];
		if (start <= offset && offset < end)
			return (int8_t)t[i + 1] == PY_LINETABLE_NO_LINE ? -1 : line;
	}
	return -1;
}

/* A PEP 657 varint: 6 bits a byte, least significant first, bit 6 = more. */
static uint32_t loc_varint(const uint8_t *p, const uint8_t *end)
{
	unsigned int shift = 0;
	uint32_t v = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (shift < 32)
			v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

/* The line delta of the location entry at @p: a signed varint has its sign in bit 0. */
static int64_t loc_line_delta(const uint8_t *p, const uint8_t *end)
{
	unsigned int code = *p >> 3 & 15;
	uint32_t v;

	if (code >= PY_LOC_ONE_LINE0 && code <= PY_LOC_ONE_LINE2)
		return code - PY_LOC_ONE_LINE0;
	if (code != PY_LOC_NO_COLUMNS && code != PY_LOC_LONG)
		return 0;	/* short forms: same line; no location: unchanged */
	v = loc_varint(p + 1, end);
	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/*
 * 3.11+ location table (PEP 657, Objects/locations.md; the same to 3.15):
 * entries of a header byte (bit 7 set: code in bits 3-6, length in code
 * units - 1 in bits 0-2) and data bytes with bit 7 clear. Line deltas are from the previous entry's
 * line, starting at co_firstlineno; code 15 has no line.
 */
static int64_t locations_line(const uint8_t *t, size_t len, int64_t line, int64_t offset)
{
	const uint8_t *p = t, *end = t + len;
	int64_t start, stop = 0;

	while (p < end) {
		line += loc_line_delta(p, end);
		start = stop;
		stop += ((*p & 7) + 1) * 2;
		if (start <= offset && offset < stop)
			return (*p >> 3 & 15) == PY_LOC_NONE ? -1 : line;
		do
			p++;
		while (p < end && !(*p & 0x80));
	}
	return -1;
}

uint32_t py_code_line(const struct py_code *c, uint32_t version, int64_t offset)
{
	uint32_t mm = PY_MM(version);
	int64_t line;

	if (!c->linetable || offset < 0)
		return 0;
	if (mm == MM(8) || mm == MM(9))
		line = lnotab_line(c->linetable, c->linetable_len, c->firstlineno, offset);
	else if (mm == MM(10))
		line = linetable_line(c->linetable, c->linetable_len, c->firstlineno, offset);
	else if (mm >= MM(11) && mm <= PY_MM(PY_VERSION_MAX))
		line = locations_line(c->linetable, c->linetable_len, c->firstlineno, offset);
	else
		return 0;
	return line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
}
