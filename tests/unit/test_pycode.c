// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pycode: line tables against CPython itself, code objects from a
 * synthetic memory image, and (when symbolize/pyoffsets.c can read the
 * interpreter's DWARF) code objects of a live Python child.
 *
 * The truth for line numbers comes from each interpreter found (the
 * system's python3.11 and pyenv's 3.8 to 3.13): it compiles test functions
 * (loops, multi-line expressions, blank lines, a 3,000-line gap, a line
 * with 150 terms, a 3,000-line function) and prints each code object's line
 * table with the line of every instruction offset, by co_lines() from 3.10
 * and by dis.findlinestarts() before. Missing interpreters are skipped, and
 * the ones tested are named on stderr.
 */
#include "symbolize/pycode.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "tests/unit/check.h"

#define V(minor) PY_VERSION_OF(3, minor, 0)

/* --- line tables against CPython ---------------------------------------- */

/*
 * Prints "version MAJOR MINOR MICRO", then per code object "code FIRSTLINENO
 * CODELEN NAME :HEX" (co_lnotab up to 3.9, co_linetable from 3.10) followed
 * by one "OFFSET LINE" per instruction offset, LINE 0 for none.
 */
static const char truth_py[] =
	"import dis, sys\n"
	"L = []\n"
	"a = L.append\n"
	"a('import os')\n"
	"a('def loops(n):')\n"
	"a('    total = 0')\n"
	"a('    for i in range(n):')\n"
	"a('        if i % 3 == 0:')\n"
	"a('            continue')\n"
	"a('        while total < i:')\n"
	"a('            total += 1')\n"
	"a('            if total > 100: break')\n"
	"a('    else:')\n"
	"a('        total -= 1')\n"
	"a('    return total')\n"
	"a('')\n"
	"a('# a comment between functions')\n"
	"a('def multiline(a, b):')\n"
	"a('    x = foo(a,')\n"
	"a('            b,')\n"
	"a('            # a comment inside a call')\n"
	"a('')\n"
	"a('            bar(a +')\n"
	"a('                b))')\n"
	"a('    d = {')\n"
	"a('        \"k\": a,')\n"
	"a('        \"l\": [b,')\n"
	"a('              a],')\n"
	"a('    }')\n"
	"a('    return (x .')\n"
	"a('            strip() .')\n"
	"a('            lower(d))')\n"
	"a('def gap():')\n"
	"a('    x = 1')\n"
	"L += ['    # nothing here'] * 300\n"
	"a('    y = x + 2')\n"
	"L += [''] * 3000\n"
	"a('    z = y * 3')\n"
	"a('    return z')\n"
	"a('def long_call(f, a, b):')\n"
	"a('    r = f(')\n"
	"L += ['        a,'] * 300\n"
	"a('        b)')\n"
	"a('    return r')\n"
	"a('def big_loop(xs):')\n"
	"a('    for x in xs:')\n"
	"L += ['        x = x + %d' % i for i in range(200)]\n"
	"a('    return x')\n"
	"a('def one(): return 1')\n"
	"a('def long_line(v):')\n"
	"a('    return ' + ' + '.join('v[%d]' % i for i in range(150)))\n"
	"a('def long_function(v):')\n"
	"L += ['    v = v + %d' % i for i in range(3000)]\n"
	"a('    return v')\n"
	"a('class C:')\n"
	"a('    attr = [i for i in range(3)]')\n"
	"a('    def method(self):')\n"
	"a('        try:')\n"
	"a('            return 1 / 0')\n"
	"a('        except ZeroDivisionError as e:')\n"
	"a('            raise ValueError(\"x\") from e')\n"
	"a('        finally:')\n"
	"a('            print(\"done\")')\n"
	"a('    async def coro(self):')\n"
	"a('        async with self as s:')\n"
	"a('            await s')\n"
	"a('    def gen(self):')\n"
	"a('        with open(__file__) as f:')\n"
	"a('            yield from f')\n"
	"a('        yield (lambda q:')\n"
	"a('               q * 2)')\n"
	"a('def closure(n):')\n"
	"a('    def inner(m):')\n"
	"a('        return {k: [n * m for _ in range(k)] for k in range(m)}')\n"
	"a('    return inner')\n"
	"src = '\\n'.join(L) + '\\n'\n"
	"top = compile(src, 'pycode_truth.py', 'exec')\n"
	"print('version %d %d %d' % sys.version_info[:3])\n"
	"new = sys.version_info >= (3, 10)\n"
	"def walk(co):\n"
	"    t = co.co_linetable if new else co.co_lnotab\n"
	"    print('code %d %d %s :%s' % (co.co_firstlineno, len(co.co_code), co.co_name,\n"
	"                                 t.hex()))\n"
	"    if new:\n"
	"        for start, end, line in co.co_lines():\n"
	"            for off in range(start, end, 2):\n"
	"                print(off, line or 0)\n"
	"    else:\n"
	"        starts = dict(dis.findlinestarts(co))\n"
	"        line = 0\n"
	"        for ins in dis.get_instructions(co):\n"
	"            line = starts.get(ins.offset, line)\n"
	"            print(ins.offset, line)\n"
	"    for k in co.co_consts:\n"
	"        if hasattr(k, 'co_code'):\n"
	"            walk(k)\n"
	"walk(top)\n";

struct truth_run {
	uint32_t version;
	struct py_code code;
	char name[128];
	uint64_t code_len;
	size_t nr_codes, nr_offsets, nr_bad;
};

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* @hex (up to a space or newline) as owned bytes; a 1-byte buffer for "". */
static uint8_t *hex_decode(const char *hex, size_t *len)
{
	size_t n = strcspn(hex, " \n"), i;
	uint8_t *out = malloc(n / 2 + 1);

	if (!out)
		return NULL;
	for (i = 0; i + 1 < n; i += 2)
		out[i / 2] = hex_nibble(hex[i]) << 4 | hex_nibble(hex[i + 1]);
	*len = n / 2;
	return out;
}

/* Past its code, a 3.10+ table has no line; 3.8 and 3.9 tables cannot tell. */
static void truth_end_code(struct truth_run *r)
{
	if (!r->nr_codes)
		return;
	if (PY_MM(r->version) >= V(10)) {
		CHECK(py_code_line(&r->code, r->version, r->code_len) == 0);
		CHECK(py_code_line(&r->code, r->version, r->code_len + 1000) == 0);
	}
	CHECK(py_code_line(&r->code, r->version, -1) == 0);
	py_code_release(&r->code);
}

static void truth_line(struct truth_run *r, const char *line)
{
	unsigned int major, minor, micro, first;
	unsigned long long len, off, want;
	const char *hex = strchr(line, ':');
	uint32_t got;

	if (sscanf(line, "version %u %u %u", &major, &minor, &micro) == 3) {
		r->version = PY_VERSION_OF(major, minor, micro);
	} else if (sscanf(line, "code %u %llu %127s :", &first, &len, r->name) == 3 && hex) {
		truth_end_code(r);
		r->code.firstlineno = first;
		r->code_len = len;
		r->code.linetable = hex_decode(hex + 1, &r->code.linetable_len);
		r->nr_codes++;
	} else if (sscanf(line, "%llu %llu", &off, &want) == 2 && r->nr_codes) {
		got = py_code_line(&r->code, r->version, off);
		r->nr_offsets++;
		if (got != want && r->nr_bad++ < 10)
			fprintf(stderr, "%u.%u: %s offset %llu: line %u, CPython says %llu\n",
				PY_MAJOR(r->version), PY_MINOR(r->version), r->name, off, got,
				want);
	} else {
		fprintf(stderr, "unexpected output: %s", line);
		r->nr_bad++;
	}
}

/* Compare py_code_line with what @python says; false when it could not run. */
static bool truth_check(const char *python, const char *script)
{
	struct truth_run r = { .version = 0 };
	char cmd[PATH_MAX * 2 + 32], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' -I '%s'", python, script);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0)
		truth_line(&r, line);
	truth_end_code(&r);
	free(line);
	CHECK(pclose(f) == 0);
	CHECK(r.version && r.nr_codes >= 15 && r.nr_offsets > 10000);
	CHECK(r.nr_bad == 0);
	fprintf(stderr, "tested %s (%u.%u.%u): %zu code objects, %zu offsets, %zu wrong\n",
		python, PY_MAJOR(r.version), PY_MINOR(r.version), PY_MICRO(r.version),
		r.nr_codes, r.nr_offsets, r.nr_bad);
	return true;
}

static void pyenv_root(char *buf, size_t size)
{
	const char *env = getenv("PYENV_ROOT");
	FILE *f;

	buf[0] = '\0';
	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	f = popen("pyenv root 2>/dev/null", "r");
	if (f) {
		if (!fgets(buf, size, f))
			buf[0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		pclose(f);
	}
	if (!buf[0] && getenv("HOME"))
		snprintf(buf, size, "%s/.pyenv", getenv("HOME"));
}

/* /usr/bin/python3.11 and pyenv's 3.8..3.13 that exist, into @g (globfree it). */
static void find_pythons(glob_t *g)
{
	char root[PATH_MAX], pat[PATH_MAX + 64];
	int minor, flags = 0;

	memset(g, 0, sizeof(*g));
	if (!access("/usr/bin/python3.11", X_OK)) {
		glob("/usr/bin/python3.11", 0, NULL, g);
		flags = GLOB_APPEND;
	}
	pyenv_root(root, sizeof(root));
	for (minor = 8; minor <= 13; minor++) {
		/* "3.1" followed by a dot, so that 3.1* is not 3.10 to 3.13 */
		snprintf(pat, sizeof(pat), "%s/versions/3.%d.*/bin/python3", root, minor);
		if (!glob(pat, flags, NULL, g))
			flags = GLOB_APPEND;
	}
}

static void test_truth(void)
{
	char script[] = "/tmp/latprof-pycode-XXXXXX.py";
	size_t i, nr = 0;
	glob_t g;
	int fd;

	fd = mkstemps(script, 3);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, truth_py, sizeof(truth_py) - 1) == (ssize_t)sizeof(truth_py) - 1);
	close(fd);
	find_pythons(&g);
	for (i = 0; i < g.gl_pathc; i++)
		nr += truth_check(g.gl_pathv[i], script);
	if (!nr)
		fprintf(stderr, "skip: no Python interpreter for the line table truth\n");
	else
		fprintf(stderr, "line tables: %zu interpreters tested\n", nr);
	globfree(&g);
	unlink(script);
}

/* --- line tables by hand: bounds and garbage ------------------------------ */

static uint32_t line_of(uint32_t version, uint32_t first, const uint8_t *t, size_t len,
			int64_t off)
{
	struct py_code c = { .firstlineno = first, .linetable = (uint8_t *)t,
			     .linetable_len = len };

	return py_code_line(&c, version, off);
}

static void test_tables_by_hand(void)
{
	/* 3.11: short form 3 units; one-line +1; no column +2 (svarint 4);
	 * long form -3 (svarint 7), 2 units; no location; no column +4100 */
	static const uint8_t loc[] = {
		0x82, 0x05, 0xd8, 0x00, 0x04, 0xe8, 0x04, 0xf1, 0x07, 0x00, 0x01, 0x02,
		0xf8, 0xe8, 0x48, 0x40, 0x02,
	};
	static const uint8_t trunc_long[] = { 0xf0, 0x45 };	/* varint runs off the end */
	static const uint8_t no_header[] = { 0x7f, 0x7f, 0x7f };
	/* 3.10: 6 bytes +1; zero-length +127; 4 bytes no line; 2 bytes +1 */
	static const uint8_t lt310[] = { 6, 1, 0, 127, 4, 0x80, 2, 1, 9 };
	/* 3.8: 4 bytes at the first line, then +2, then -1 */
	static const uint8_t lnotab[] = { 4, 2, 6, 0xff, 7 };

	CHECK(line_of(V(11), 10, loc, sizeof(loc), 0) == 10);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 4) == 10);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 6) == 11);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 8) == 13);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 10) == 10);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 12) == 10);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 14) == 0);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 16) == 4110);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), 18) == 0);
	CHECK(line_of(V(13), 10, loc, sizeof(loc), 16) == 4110);
	CHECK(line_of(V(11), 10, trunc_long, sizeof(trunc_long), 0) == 10 - 2);
	CHECK(line_of(V(11), 10, trunc_long, sizeof(trunc_long), 2) == 0);
	CHECK(line_of(V(12), 10, no_header, sizeof(no_header), 0) == 0);
	/* line 1 - 1: no line */
	CHECK(line_of(V(11), 1, (const uint8_t[]){ 0xe8, 0x03 }, 2, 0) == 0);

	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 0) == 6);
	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 4) == 6);
	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 6) == 0);
	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 8) == 0);
	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 10) == 134);
	CHECK(line_of(V(10), 5, lt310, sizeof(lt310), 12) == 0);	/* odd byte ignored */

	CHECK(line_of(V(8), 20, lnotab, sizeof(lnotab), 0) == 20);
	CHECK(line_of(V(8), 20, lnotab, sizeof(lnotab), 4) == 22);
	CHECK(line_of(V(9), 20, lnotab, sizeof(lnotab), 10) == 21);
	CHECK(line_of(V(9), 20, lnotab, sizeof(lnotab), 1000) == 21);
	CHECK(line_of(V(8), 20, lnotab, 0, 8) == 20);	/* empty: all on the first line */

	CHECK(line_of(V(7), 20, lnotab, sizeof(lnotab), 0) == 0);
	CHECK(line_of(PY_VERSION_OF(3, 16, 0), 10, loc, sizeof(loc), 0) == 0);
	CHECK(line_of(V(11), 10, loc, sizeof(loc), -2) == 0);
	CHECK(line_of(V(11), 10, NULL, 0, 0) == 0);
}

static void test_offsets(void)
{
	struct py_offsets o = { .version = V(8), .code_adaptive = -1 };
	uint64_t code = 0x7f0000001000, base = code + 184;

	CHECK(py_code_offset(&o, code, 0) == 0);
	CHECK(py_code_offset(&o, code, 24) == 24);
	CHECK(py_code_offset(&o, code, 0xffffffff) == -1);		/* f_lasti -1 */
	CHECK(py_code_offset(&o, code, 0xdead00000010ull) == 16);	/* high bits not ours */
	CHECK(py_code_offset(&o, code, 7) == -1);
	o.version = PY_VERSION_OF(3, 9, 18);
	CHECK(py_code_offset(&o, code, 24) == 24);
	o.version = PY_VERSION_OF(3, 10, 13);
	CHECK(py_code_offset(&o, code, 5) == 10);
	CHECK(py_code_offset(&o, code, 0xffffffff) == -1);
	CHECK(py_code_offset(&o, code, 0x7fffffff) == -1);
	o.version = PY_VERSION_OF(3, 11, 7);
	CHECK(py_code_offset(&o, code, base) == -1);	/* no co_code_adaptive offset */
	o.code_adaptive = 184;
	CHECK(py_code_offset(&o, code, base) == 0);
	CHECK(py_code_offset(&o, code, base + 6) == 6);
	CHECK(py_code_offset(&o, code, base - 2) == -1);	/* prev_instr before the start */
	CHECK(py_code_offset(&o, code, base + 7) == -1);
	CHECK(py_code_offset(&o, code, base + (1ull << 31)) == -1);
	CHECK(py_code_offset(&o, code, 0) == -1);
	CHECK(py_code_offset(&o, UINT64_MAX - 8, 4) == -1);
	o.version = PY_VERSION_OF(3, 13, 0);
	CHECK(py_code_offset(&o, code, base + 100) == 100);
	o.version = PY_VERSION_OF(3, 7, 16);
	CHECK(py_code_offset(&o, code, 24) == -1);
	o.version = PY_VERSION_OF(3, 14, 8);
	CHECK(py_code_offset(&o, code, base + 6) == 6);
	o.version = PY_VERSION_OF(3, 15, 0);
	CHECK(py_code_offset(&o, code, base + 6) == 6);
	o.version = PY_VERSION_OF(3, 16, 0);
	CHECK(py_code_offset(&o, code, base + 6) == -1);
	/* 3.14+ frames hold a tagged _PyStackRef: the tag is no part of the address */
	CHECK(py_code_ref_mask(PY_VERSION_OF(3, 13, 9)) == UINT64_MAX);
	CHECK((0x7f0000001001ull & py_code_ref_mask(PY_VERSION_OF(3, 14, 0))) == 0x7f0000001000ull);
	CHECK((0x7f0000001003ull & py_code_ref_mask(PY_VERSION_OF(3, 15, 0))) == 0x7f0000001000ull);
}

/* --- code objects in a synthetic memory image ----------------------------- */

#define IMAGE_BASE 0x7f1200000000ull
#define IMAGE_SIZE (1u << 20)

struct image {
	uint8_t *mem;
	size_t used;
	uint64_t fail_addr;	/* a read covering it fails with fail_err */
	int fail_err;
	size_t nr_reads;
};

static int image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct image *img = arg;

	img->nr_reads++;
	if (img->fail_err && addr <= img->fail_addr && img->fail_addr - addr < len)
		return img->fail_err;
	if (addr < IMAGE_BASE || addr - IMAGE_BASE > IMAGE_SIZE ||
	    len > IMAGE_SIZE - (addr - IMAGE_BASE))
		return -EFAULT;
	memcpy(buf, img->mem + (addr - IMAGE_BASE), len);
	return 0;
}

static uint64_t image_alloc(struct image *img, size_t len)
{
	uint64_t addr = IMAGE_BASE + img->used;

	if (len > IMAGE_SIZE - img->used) {
		fprintf(stderr, "image full\n");
		abort();
	}
	img->used += (len + 15) & ~(size_t)15;
	return addr;
}

static void image_put(struct image *img, uint64_t addr, const void *data, size_t len)
{
	memcpy(img->mem + (addr - IMAGE_BASE), data, len);
}

static void image_put_u64(struct image *img, uint64_t addr, uint64_t v)
{
	image_put(img, addr, &v, sizeof(v));
}

/* A compact str of @nr code points @cps stored @kind bytes each. */
static uint64_t image_str(struct image *img, const struct py_offsets *o, unsigned int kind,
			  bool ascii, const uint32_t *cps, size_t nr)
{
	size_t head = ascii ? o->unicode_ascii_size : o->unicode_compact_size, i;
	uint64_t addr = image_alloc(img, head + (nr + 1) * kind);
	/* interned (1), kind, compact, ascii, and 3.8-3.11's "ready" bit */
	uint32_t state = 1 | kind << 2 | 1 << 5 | (uint32_t)ascii << 6 | 1 << 7;
	uint16_t u16;

	image_put_u64(img, addr + o->unicode_length, nr);
	image_put(img, addr + o->unicode_state, &state, sizeof(state));
	for (i = 0; i < nr; i++) {
		u16 = cps[i];
		if (kind == 1)
			img->mem[addr - IMAGE_BASE + head + i] = cps[i];
		else if (kind == 2)
			image_put(img, addr + head + 2 * i, &u16, 2);
		else
			image_put(img, addr + head + 4 * i, &cps[i], 4);
	}
	return addr;
}

static uint64_t image_ascii(struct image *img, const struct py_offsets *o, const char *s)
{
	uint32_t cps[256];
	size_t i, n = strlen(s);

	for (i = 0; i < n && i < 256; i++)
		cps[i] = (uint8_t)s[i];
	return image_str(img, o, 1, true, cps, i);
}

static uint64_t image_bytes(struct image *img, const struct py_offsets *o, const void *data,
			    int64_t len)
{
	uint64_t addr = image_alloc(img, o->bytes_sval + (len > 0 ? len : 0) + 1);

	image_put_u64(img, addr + o->bytes_size, (uint64_t)len);
	if (len > 0)
		image_put(img, addr + o->bytes_sval, data, len);
	return addr;
}

static uint64_t image_code(struct image *img, const struct py_offsets *o, uint64_t name,
			   uint64_t qualname, uint64_t file, int32_t first, uint64_t table)
{
	uint64_t addr = image_alloc(img, 256);

	image_put_u64(img, addr + o->code_name, name);
	if (o->code_qualname >= 0)
		image_put_u64(img, addr + o->code_qualname, qualname);
	image_put_u64(img, addr + o->code_filename, file);
	image_put(img, addr + o->code_firstlineno, &first, sizeof(first));
	image_put_u64(img, addr + o->code_linetable, table);
	return addr;
}

/* PyCodeObject, PyBytesObject and PyUnicodeObject of x86-64 3.11 and 3.8 (gdb ptype /o). */
static void offsets_311(struct py_offsets *o)
{
	memset(o, 0xff, sizeof(*o));	/* every offset -1 */
	o->version = PY_VERSION_OF(3, 11, 7);
	o->code_firstlineno = 72;
	o->code_filename = 112;
	o->code_name = 120;
	o->code_qualname = 128;
	o->code_linetable = 136;
	o->code_adaptive = 184;
	o->bytes_size = 16;
	o->bytes_sval = 32;
	o->unicode_length = 16;
	o->unicode_state = 32;
	o->unicode_ascii_size = 48;
	o->unicode_compact_size = 72;
}

static void offsets_38(struct py_offsets *o)
{
	offsets_311(o);
	o->version = PY_VERSION_OF(3, 8, 18);
	o->code_firstlineno = 40;
	o->code_filename = 104;
	o->code_name = 112;
	o->code_qualname = -1;
	o->code_linetable = 120;
	o->code_adaptive = -1;
}

/*
 * Memory reused since the sample: objects of the wrong type and names that
 * no code object has are refused, not named.
 */
static void test_read_typed(struct image *img)
{
	static const uint8_t table[] = { 0x80, 0x00 };
	const struct py_types types = { .code = 0x1000, .unicode = 0x2000, .bytes = 0x3000 };
	struct py_offsets o;
	struct py_code c;
	uint64_t name, file, tab, code, other;

	offsets_311(&o);
	o.object_type = 8;
	name = image_ascii(img, &o, "Outer.method");
	file = image_ascii(img, &o, "/srv/a;b.py");
	tab = image_bytes(img, &o, table, sizeof(table));
	code = image_code(img, &o, name, name, file, 3, tab);
	image_put_u64(img, code + 8, types.code);
	image_put_u64(img, name + 8, types.unicode);
	image_put_u64(img, file + 8, types.unicode);
	image_put_u64(img, tab + 8, types.bytes);
	CHECK(py_code_read_typed(&o, &types, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "Outer.method");
	CHECK_STR(c.filename, "/srv/a?b.py");	/* ';' would split a folded stack */
	py_code_release(&c);
	/* each object of the wrong type in turn */
	image_put_u64(img, code + 8, types.unicode);
	CHECK(py_code_read_typed(&o, &types, image_read, img, code, &c) == -EINVAL);
	image_put_u64(img, code + 8, types.code);
	image_put_u64(img, file + 8, types.bytes);
	CHECK(py_code_read_typed(&o, &types, image_read, img, code, &c) == -EINVAL);
	image_put_u64(img, file + 8, types.unicode);
	image_put_u64(img, tab + 8, types.code);
	CHECK(py_code_read_typed(&o, &types, image_read, img, code, &c) == -EINVAL);
	image_put_u64(img, tab + 8, types.bytes);
	/* without types nothing is checked */
	image_put_u64(img, code + 8, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	py_code_release(&c);
	/* a source line where the name was: a str, but no code object's name */
	other = image_code(img, &o, 0, image_ascii(img, &o, "        t0 = time.monotonic()"), file,
			   1, 0);
	CHECK(py_code_read(&o, image_read, img, other, &c) == -EINVAL);
	other = image_code(img, &o, 0, image_ascii(img, &o, ""), file, 1, 0);
	CHECK(py_code_read(&o, image_read, img, other, &c) == -EINVAL);
	other = image_code(img, &o, 0, name, image_ascii(img, &o, "/srv/a\nb.py"), 1, 0);
	CHECK(py_code_read(&o, image_read, img, other, &c) == -EINVAL);
	CHECK(!c.qualname && !c.filename);
}

/*
 * A code object named from the members copied at the sample (struct
 * py_code_ref): its name from the copied string bytes when the string is
 * gone since, its file read now, and its line table, freed with it, lost
 * without failing the name.
 */
static void test_read_ref(struct image *img)
{
	const struct py_types types = { .code = 0x1000, .unicode = 0x2000, .bytes = 0x3000 };
	struct py_offsets o;
	struct py_code_ref ref = { .type = 0x1000, .firstlineno = 7 };
	struct py_code c;
	uint8_t raw[64];
	uint64_t name, file, tab;

	offsets_311(&o);
	o.object_type = 8;
	name = image_ascii(img, &o, "<module>");
	file = image_ascii(img, &o, "/srv/app.py");
	tab = image_bytes(img, &o, "\x80", 1);
	image_put_u64(img, name + 8, types.unicode);
	image_put_u64(img, file + 8, types.unicode);
	image_put_u64(img, tab + 8, types.code);	/* freed and reused */
	memcpy(raw, img->mem + (name + o.unicode_length - IMAGE_BASE), sizeof(raw));
	image_put_u64(img, name + 8, types.bytes);	/* the name string freed and reused */
	ref.name = name;
	ref.file = file;
	ref.table = tab;
	CHECK(py_code_read_ref(&o, &types, image_read, img, &ref, &c) == -EINVAL);
	ref.name_raw = raw;
	ref.name_raw_len = sizeof(raw);
	CHECK(py_code_read_ref(&o, &types, image_read, img, &ref, &c) == 0);
	CHECK_STR(c.qualname, "<module>");
	CHECK_STR(c.filename, "/srv/app.py");
	CHECK(c.firstlineno == 7 && !c.linetable);
	py_code_release(&c);
	/* a copy of another code object's type is refused, whatever its strings */
	ref.type = types.unicode;
	CHECK(py_code_read_ref(&o, &types, image_read, img, &ref, &c) == -EINVAL);
	ref.type = types.code;
	/* a name longer than the copy is read from memory (here: gone) */
	memset(raw, 0, sizeof(raw));
	raw[0] = 200;
	raw[o.unicode_state - o.unicode_length] = 1 | 1 << 2 | 1 << 5 | 1 << 6;
	CHECK(py_code_read_ref(&o, &types, image_read, img, &ref, &c) == -EINVAL);
	/* no copy at all */
	ref.name = 0;
	CHECK(py_code_read_ref(&o, &types, image_read, img, &ref, &c) == -EINVAL);
}

/*
 * The file name from the copy of its string's header and tail (struct
 * lp_py_code_ref file_hdr/file_tail, as the BPF walk takes them): whole
 * when it fits, "..." and its tail when longer, refused when the header
 * says it is not compact ASCII or the tail holds a NUL.
 */
static void test_file_from_ref(struct image *img)
{
	static const char lng[] = "/usr/lib/python3/dist-packages/some/package/deep/module_name.py";
	struct py_offsets o;
	struct py_code_ref ref = { 0 };
	uint8_t hdr[24], tail[48];
	uint64_t s;
	char *out;

	offsets_311(&o);
	ref.file_hdr = hdr;
	ref.file_hdr_len = sizeof(hdr);
	ref.file_tail = tail;
	ref.file_tail_len = sizeof(tail);
	/* a short one: the tail read from its start, past its end (its NUL, then anything) */
	s = image_ascii(img, &o, "/srv/app.py");
	memcpy(hdr, img->mem + (s + o.unicode_length - IMAGE_BASE), sizeof(hdr));
	memcpy(tail, img->mem + (s + o.unicode_ascii_size - IMAGE_BASE), sizeof(tail));
	CHECK(py_code_file_from_ref(&o, &ref, &out) == 0);
	CHECK_STR(out, "/srv/app.py");
	free(out);
	/* a long one: its last 48 characters */
	s = image_ascii(img, &o, lng);
	memcpy(hdr, img->mem + (s + o.unicode_length - IMAGE_BASE), sizeof(hdr));
	memcpy(tail, img->mem + (s + o.unicode_ascii_size + strlen(lng) - sizeof(tail) - IMAGE_BASE),
	       sizeof(tail));
	CHECK(py_code_file_from_ref(&o, &ref, &out) == 0);
	CHECK(out && strlen(out) == 3 + sizeof(tail) && !strncmp(out, "...", 3) &&
	      !strcmp(out + 3, lng + strlen(lng) - sizeof(tail)));
	free(out);
	/* a NUL inside: not a name */
	tail[10] = 0;
	CHECK(py_code_file_from_ref(&o, &ref, &out) == -EINVAL && !out);
	/* not compact ASCII (kind 2) */
	s = image_ascii(img, &o, "/srv/app.py");
	memcpy(hdr, img->mem + (s + o.unicode_length - IMAGE_BASE), sizeof(hdr));
	memcpy(tail, img->mem + (s + o.unicode_ascii_size - IMAGE_BASE), sizeof(tail));
	hdr[o.unicode_state - o.unicode_length] = 1 << 3 | 1 << 5;
	CHECK(py_code_file_from_ref(&o, &ref, &out) == -EINVAL);
	/* nothing copied: length 0, or no header */
	memset(hdr, 0, sizeof(hdr));
	CHECK(py_code_file_from_ref(&o, &ref, &out) == -EINVAL);
	ref.file_hdr = NULL;
	CHECK(py_code_file_from_ref(&o, &ref, &out) == -EINVAL);
}

static bool is_utf8(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	int more;

	while (*p) {
		if (*p < 0x80)
			more = 0;
		else if (*p >> 5 == 6)
			more = 1;
		else if (*p >> 4 == 14)
			more = 2;
		else if (*p >> 3 == 30)
			more = 3;
		else
			return false;
		for (p++; more > 0; more--, p++)
			if (*p >> 6 != 2)
				return false;
	}
	return true;
}

static void test_read_311(struct image *img)
{
	static const uint8_t table[] = { 0x80, 0x00, 0xd8, 0x00, 0x04 };
	static const uint32_t latin1[] = { '/', 's', 'r', 'v', '/', 'c', 'a', 'f', 0xe9, '.', 'p',
					   'y' };
	struct py_offsets o;
	struct py_code c;
	uint64_t code;

	offsets_311(&o);
	code = image_code(img, &o, image_ascii(img, &o, "method"),
			  image_ascii(img, &o, "Outer.method"),
			  image_str(img, &o, 1, false, latin1, 12), 42,
			  image_bytes(img, &o, table, sizeof(table)));
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "Outer.method");
	CHECK_STR(c.filename, "/srv/café.py");
	CHECK(c.firstlineno == 42);
	CHECK(c.linetable && c.linetable_len == sizeof(table) &&
	      !memcmp(c.linetable, table, sizeof(table)));
	CHECK(py_code_line(&c, o.version, 0) == 42 && py_code_line(&c, o.version, 2) == 43);
	py_code_release(&c);
	CHECK(!c.qualname && !c.filename && !c.linetable);
	py_code_release(NULL);

	/* 3.12 has no wstr: smaller str headers */
	o.version = PY_VERSION_OF(3, 12, 1);
	o.unicode_ascii_size = 40;
	o.unicode_compact_size = 56;
	code = image_code(img, &o, 0, image_ascii(img, &o, "f.<locals>.g"),
			  image_str(img, &o, 1, false, latin1, 12), 7, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "f.<locals>.g");
	CHECK_STR(c.filename, "/srv/café.py");
	CHECK(!c.linetable && py_code_line(&c, o.version, 0) == 0);	/* NULL table */
	py_code_release(&c);
}

static void test_read_38(struct image *img)
{
	static const uint32_t ucs2[] = { 'n', 'a', 0xef, 'v', 'e', '_', 0x3c0 };
	static const uint32_t ucs4[] = { '/', 't', 'm', 'p', '/', 0x1f600, '.', 'p', 'y' };
	struct py_offsets o;
	struct py_code c;
	uint64_t code;

	offsets_38(&o);
	code = image_code(img, &o, image_str(img, &o, 2, false, ucs2, 7), 0,
			  image_str(img, &o, 4, false, ucs4, 9), 1, image_bytes(img, &o, "", 0));
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "naïve_π");
	CHECK_STR(c.filename, "/tmp/😀.py");
	CHECK(c.firstlineno == 1);
	/* an empty co_lnotab is kept: every instruction is on the first line */
	CHECK(c.linetable && c.linetable_len == 0);
	CHECK(py_code_line(&c, o.version, 0) == 1 && py_code_line(&c, o.version, 40) == 1);
	py_code_release(&c);
}

/* Names that are garbage in part: '?' for what cannot be UTF-8, cut when long. */
static void test_read_odd_names(struct image *img)
{
	static const uint32_t ucs2[] = { 'a', 0xd800, 'b', 0xdfff };
	static const uint32_t ucs4[] = { 0x110000, 'x', 0, 0xffffffff, 0x10ffff };
	static const uint32_t ascii[] = { 'o', 0xff, 'k' };
	uint32_t *cps = malloc(5000 * sizeof(*cps));
	struct py_offsets o;
	struct py_code c;
	uint64_t code, file;
	size_t i;

	offsets_311(&o);
	file = image_str(img, &o, 4, false, ucs4, 5);
	code = image_code(img, &o, 0, image_str(img, &o, 2, false, ucs2, 4), file, 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "a?b?");
	CHECK_STR(c.filename, "?x??\xf4\x8f\xbf\xbf");
	py_code_release(&c);
	code = image_code(img, &o, 0, image_str(img, &o, 1, true, ascii, 3), file, 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "o?k");
	py_code_release(&c);

	/* too long: cut at PY_CODE_MAX_NAME bytes, never inside a character */
	if (!cps)
		abort();
	for (i = 0; i < 5000; i++)
		cps[i] = 'a' + i % 26;
	code = image_code(img, &o, 0, image_str(img, &o, 1, true, cps, 5000), file, 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK(c.qualname && strlen(c.qualname) == PY_CODE_MAX_NAME &&
	      !strncmp(c.qualname, "abcdefghijklmnopqrstuvwxyza", 27));
	py_code_release(&c);
	for (i = 0; i < 5000; i++)
		cps[i] = i % 2 ? 0x20ac : 0xe9;	/* € (3 bytes) and é (2 bytes) */
	code = image_code(img, &o, 0, image_str(img, &o, 2, false, cps, 5000),
			  image_str(img, &o, 4, false, (const uint32_t[]){ 0x1f600 }, 1), 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK(c.qualname && strlen(c.qualname) <= PY_CODE_MAX_NAME &&
	      strlen(c.qualname) > PY_CODE_MAX_NAME - 3 && is_utf8(c.qualname));
	CHECK_STR(c.filename, "😀");
	py_code_release(&c);
	for (i = 0; i < 5000; i++)
		cps[i] = 0x1f600;
	code = image_code(img, &o, 0, image_str(img, &o, 4, false, cps, 5000), file, 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK(c.qualname && strlen(c.qualname) == PY_CODE_MAX_NAME && is_utf8(c.qualname));
	py_code_release(&c);
	free(cps);
}

/* Strings that cannot be a code object's, and a NULL pointer. */
static void test_read_bad_strings(struct image *img)
{
	static const uint32_t state_bad[] = {
		1 << 2 | 1 << 6,		/* not compact */
		3 << 2 | 1 << 5,		/* kind 3 */
		0 << 2 | 1 << 5,		/* kind 0: a 3.8-3.11 wchar_t string */
		2 << 2 | 1 << 5 | 1 << 6,	/* ASCII but two bytes a code point */
	};
	static const int64_t len_bad[] = { -1, INT64_MIN, 1ll << 40 };
	struct py_offsets o;
	struct py_code c;
	uint64_t name, file, code;
	size_t i;

	offsets_311(&o);
	file = image_ascii(img, &o, "x.py");
	for (i = 0; i < sizeof(state_bad) / sizeof(*state_bad); i++) {
		name = image_ascii(img, &o, "name");
		image_put(img, name + o.unicode_state, &state_bad[i], sizeof(*state_bad));
		code = image_code(img, &o, 0, name, file, 3, 0);
		CHECK(py_code_read(&o, image_read, img, code, &c) == -EINVAL);
		CHECK(!c.qualname && !c.filename);
	}
	for (i = 0; i < sizeof(len_bad) / sizeof(*len_bad); i++) {
		name = image_ascii(img, &o, "name");
		image_put_u64(img, name + o.unicode_length, len_bad[i]);
		code = image_code(img, &o, 0, image_ascii(img, &o, "ok"), name, 3, 0);
		CHECK(py_code_read(&o, image_read, img, code, &c) == -EINVAL);
		CHECK(!c.qualname && !c.filename);
	}
	code = image_code(img, &o, 0, 0, file, 3, 0);
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EINVAL);	/* NULL */
	/* a plausible length, but the memory ends first */
	code = image_code(img, &o, 0, 0, file, 3, 0);
	img->used = IMAGE_SIZE - 64;
	name = image_ascii(img, &o, "name");
	image_put_u64(img, name + o.unicode_length, 1000000);
	image_put_u64(img, code + o.code_qualname, name);
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EFAULT);
	img->used = 0;
}

/* Failed reads: the read's error, except for the line table's bytes object. */
static void test_read_failures(struct image *img)
{
	static const uint8_t table[] = { 0x80, 0x00 };
	uint64_t name, file, bytes, code;
	struct py_offsets o, broken;
	struct py_code c;

	offsets_311(&o);
	name = image_ascii(img, &o, "name");
	file = image_ascii(img, &o, "file.py");
	bytes = image_bytes(img, &o, table, sizeof(table));
	code = image_code(img, &o, 0, name, file, 3, bytes);

	img->fail_err = -EIO;
	img->fail_addr = code + o.code_linetable;
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EIO);
	CHECK(!c.qualname && !c.filename && !c.linetable);
	img->fail_addr = file + o.unicode_ascii_size + 3;
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EIO);
	CHECK(!c.qualname && !c.filename);
	img->fail_addr = name + o.unicode_state;
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EIO);
	img->fail_err = -ESRCH;
	img->fail_addr = code + o.code_firstlineno;
	CHECK(py_code_read(&o, image_read, img, code, &c) == -ESRCH);
	/* the line table is optional */
	img->fail_addr = bytes + o.bytes_sval;
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK_STR(c.qualname, "name");
	CHECK(!c.linetable);
	py_code_release(&c);
	img->fail_addr = bytes + o.bytes_size;
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0 && !c.linetable);
	py_code_release(&c);
	img->fail_err = 0;

	CHECK(py_code_read(&o, image_read, img, 16, &c) == -EFAULT);
	CHECK(py_code_read(&o, image_read, img, UINT64_MAX - 8, &c) == -EFAULT);
	broken = o;
	broken.unicode_state = -1;
	CHECK(py_code_read(&broken, image_read, img, code, &c) == -EINVAL);
}

static void test_read_tables(struct image *img)
{
	uint64_t name, file, bytes, code;
	struct py_offsets o;
	struct py_code c;

	offsets_311(&o);
	name = image_ascii(img, &o, "name");
	file = image_ascii(img, &o, "file.py");
	bytes = image_bytes(img, &o, NULL, 0);
	code = image_code(img, &o, 0, name, file, -5, bytes);
	image_put_u64(img, bytes + o.bytes_size, PY_CODE_MAX_LINETABLE + 1);
	img->nr_reads = 0;
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK(!c.linetable && c.firstlineno == 0);
	CHECK(img->nr_reads == 11);	/* 4 fields, 3 per name, the size */
	py_code_release(&c);
	image_put_u64(img, bytes + o.bytes_size, 1ull << 62);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0 && !c.linetable);
	py_code_release(&c);
	image_put_u64(img, bytes + o.bytes_size, (uint64_t)-2);
	CHECK(py_code_read(&o, image_read, img, code, &c) == -EINVAL);
	CHECK(!c.qualname);
	/* the largest table allowed */
	bytes = image_bytes(img, &o, NULL, 0);
	image_put_u64(img, bytes + o.bytes_size, PY_CODE_MAX_LINETABLE);
	image_alloc(img, PY_CODE_MAX_LINETABLE);
	memset(img->mem + (bytes + o.bytes_sval - IMAGE_BASE), 0, PY_CODE_MAX_LINETABLE);
	image_put_u64(img, code + o.code_linetable, bytes);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0);
	CHECK(c.linetable && c.linetable_len == PY_CODE_MAX_LINETABLE);
	/* zero bytes: one short-form entry of one code unit, then data bytes */
	CHECK(py_code_line(&c, o.version, 2) == 0);
	py_code_release(&c);
	/* the same, its end past the image: no table */
	img->used = IMAGE_SIZE - 64;
	bytes = image_bytes(img, &o, NULL, 0);
	image_put_u64(img, bytes + o.bytes_size, PY_CODE_MAX_LINETABLE);
	image_put_u64(img, code + o.code_linetable, bytes);
	CHECK(py_code_read(&o, image_read, img, code, &c) == 0 && !c.linetable);
	py_code_release(&c);
	img->used = 0;
}

static void test_read(void)
{
	struct image img = { .mem = calloc(1, IMAGE_SIZE) };

	if (!img.mem)
		abort();
	test_read_311(&img);
	test_read_typed(&img);
	test_read_ref(&img);
	test_file_from_ref(&img);
	test_read_38(&img);
	test_read_odd_names(&img);
	test_read_bad_strings(&img);
	test_read_failures(&img);
	test_read_tables(&img);
	free(img.mem);
}

/* --- a live Python child -------------------------------------------------- */

/* Prints its version, then per code object "ID FIRSTLINENO QUALNAME FILE TABLE" in hex. */
static const char live_py[] =
	"import sys\n"
	"class Outer:\n"
	"    class Inner:\n"
	"        def méthode(self):\n"
	"            return 1\n"
	"\n"
	"def 函数():\n"
	"    return [x for x in range(3)]\n"
	"def plain(): pass\n"
	"print('%d %d %d' % sys.version_info[:3])\n"
	"new = sys.version_info >= (3, 10)\n"
	"for co in (Outer.Inner.méthode.__code__, 函数.__code__, plain.__code__):\n"
	"    q = getattr(co, 'co_qualname', co.co_name)\n"
	"    t = co.co_linetable if new else co.co_lnotab\n"
	"    print(id(co), co.co_firstlineno, q.encode().hex(), co.co_filename.encode().hex(),\n"
	"          t.hex() or '-')\n"
	"sys.stdout.flush()\n"
	"sys.stdin.read()\n";

static int vm_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(*(pid_t *)arg, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The file with the interpreter's DWARF: its libpython, else the executable. */
static int open_interp(pid_t pid)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 128], *p;
	FILE *f;
	int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		p = strchr(line, '/');
		if (p && strstr(p, "/libpython3.")) {
			p[strcspn(p, "\n")] = '\0';
			fd = open(p, O_RDONLY | O_CLOEXEC);
		}
	}
	if (f)
		fclose(f);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return fd;
}

/* Offsets for the child from its DWARF; false (and why) when there are none. */
static bool live_offsets(pid_t pid, uint32_t version, struct py_offsets *o)
{
	const char *missing = NULL;
	int fd = open_interp(pid), err = -ENOENT;
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;

	if (dw)
		err = pyoffsets_from_dwarf(dw, version, o, &missing);
	if (err)
		fprintf(stderr, "skip: live %u.%u: no offsets from DWARF: %s%s%s\n",
			PY_MAJOR(version), PY_MINOR(version), dw ? strerror(-err) : "no DWARF",
			missing ? ", missing " : "", missing ? missing : "");
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return !err;
}

/* "ID FIRST QUALNAME FILE TABLE" of the child against py_code_read's result. */
static void live_check_code(const struct py_offsets *o, pid_t pid, char *line)
{
	char *id, *first, *qual_hex, *file_hex, *table_hex, *save;
	uint8_t *want;
	size_t len;
	struct py_code c;

	id = strtok_r(line, " \n", &save);
	first = strtok_r(NULL, " \n", &save);
	qual_hex = strtok_r(NULL, " \n", &save);
	file_hex = strtok_r(NULL, " \n", &save);
	table_hex = strtok_r(NULL, " \n", &save);
	if (!table_hex) {
		CHECK(!"live child output");
		return;
	}
	CHECK(py_code_read(o, vm_read, &pid, strtoull(id, NULL, 10), &c) == 0);
	want = hex_decode(qual_hex, &len);
	CHECK(c.qualname && want && strlen(c.qualname) == len && !memcmp(c.qualname, want, len));
	free(want);
	want = hex_decode(file_hex, &len);
	CHECK(c.filename && want && strlen(c.filename) == len && !memcmp(c.filename, want, len));
	free(want);
	CHECK(c.firstlineno == strtoul(first, NULL, 10));
	want = hex_decode(strcmp(table_hex, "-") ? table_hex : "", &len);
	CHECK(c.linetable && want && c.linetable_len == len && !memcmp(c.linetable, want, len));
	free(want);
	fprintf(stderr, "  %s line %u: %s\n", c.filename ? c.filename : "?", c.firstlineno,
		c.qualname ? c.qualname : "?");
	py_code_release(&c);
}

static pid_t live_spawn(const char *python, const char *script, int *in, FILE **out)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(python, python, "-I", script, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	*in = to[1];
	*out = fdopen(from[0], "r");
	return pid;
}

static void live_check(const char *python, const char *script)
{
	unsigned int major, minor, micro;
	char *line = NULL;
	struct py_offsets o;
	size_t cap = 0, nr = 0;
	FILE *out = NULL;
	int in = -1, status;
	pid_t pid = live_spawn(python, script, &in, &out);

	CHECK(pid > 0 && out);
	if (pid <= 0 || !out)
		return;
	if (getline(&line, &cap, out) <= 0 ||
	    sscanf(line, "%u %u %u", &major, &minor, &micro) != 3) {
		CHECK(!"live child version");
	} else if (live_offsets(pid, PY_VERSION_OF(major, minor, micro), &o)) {
		fprintf(stderr, "live %s:\n", python);
		while (nr < 3 && getline(&line, &cap, out) > 0) {
			live_check_code(&o, pid, line);
			nr++;
		}
		CHECK(nr == 3);
	}
	close(in);	/* the child's stdin ends: it exits */
	fclose(out);
	free(line);
	CHECK(waitpid(pid, &status, 0) == pid);
}

static void test_live(void)
{
	char dir[] = "/tmp/latprof-pycode-XXXXXX", script[64];
	char root[PATH_MAX], pat[PATH_MAX + 64];
	FILE *f;
	glob_t g;
	size_t i;

	pyenv_root(root, sizeof(root));
	snprintf(pat, sizeof(pat), "%s/versions/3.*/bin/python3", root);
	if (glob(pat, 0, NULL, &g)) {
		fprintf(stderr, "skip: live: no pyenv interpreter\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(script, sizeof(script), "%s/café_live.py", dir);	/* a latin-1 file name */
	f = fopen(script, "w");
	CHECK(f && fputs(live_py, f) >= 0);
	if (f)
		fclose(f);
	for (i = 0; i < g.gl_pathc; i++) {
		const char *v = strstr(g.gl_pathv[i], "/versions/3.") + 12;

		if (atoi(v) >= 8 && atoi(v) <= 13)
			live_check(g.gl_pathv[i], script);
	}
	globfree(&g);
	unlink(script);
	rmdir(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_tables_by_hand();
	test_offsets();
	test_read();
	test_truth();
	test_live();
	return check_exit();
}
