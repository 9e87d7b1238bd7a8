// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize/pyoffsets: the three sources of CPython offsets agree with each
 * other where they overlap, and refuse what they cannot vouch for.
 *
 *  - every generated table entry (symbolize/pyoffsets_gen.sh, from headers)
 *    against the DWARF of the same release's libpython under pyenv;
 *  - 3.13's _Py_DebugOffsets, read from the initialised _PyRuntime in
 *    libpython3.13's .data (as a process would hold it before any write),
 *    against its DWARF;
 *  - 3.13.15's, 3.14.8's and 3.15.0's _Py_DebugOffsets, as Debian testing's
 *    stripped interpreters hold them (tests/unit/pydebug_*.bin), against the
 *    offsets their -dbg packages' DWARF gives;
 *  - wrong cookie, wrong version, absurd offsets, failed reads, free-threaded
 *    builds and versions outside the table or past 3.15 are refused.
 * Releases missing from the machine are skipped and named on stderr.
 */
#include "symbolize/pyoffsets.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "tests/unit/check.h"

static char root[4096];

static void pyenv_root(void)
{
	const char *env = getenv("PYENV_ROOT");
	FILE *f;

	if (env && *env) {
		snprintf(root, sizeof(root), "%s", env);
		return;
	}
	f = popen("pyenv root 2>/dev/null", "r");
	if (f) {
		if (!fgets(root, sizeof(root), f))
			root[0] = '\0';
		root[strcspn(root, "\n")] = '\0';
		pclose(f);
	}
	if (!root[0] && getenv("HOME"))
		snprintf(root, sizeof(root), "%s/.pyenv", getenv("HOME"));
}

/* pyenv's libpython of release @v, opened; -1 when the machine has none. */
static int open_libpython(uint32_t v)
{
	char path[4600];

	snprintf(path, sizeof(path), "%s/versions/%u.%u.%u/lib/libpython%u.%u.so.1.0", root,
		 PY_MAJOR(v), PY_MINOR(v), PY_MICRO(v), PY_MAJOR(v), PY_MINOR(v));
	return open(path, O_RDONLY | O_CLOEXEC);
}

static bool dwarf_offsets(int fd, uint32_t v, struct py_offsets *o)
{
	const char *missing = NULL;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	int err;

	if (!dw) {
		fprintf(stderr, "%u.%u.%u: libpython has no DWARF\n", PY_MAJOR(v), PY_MINOR(v),
			PY_MICRO(v));
		return false;
	}
	err = pyoffsets_from_dwarf(dw, v, o, &missing);
	if (err)
		fprintf(stderr, "%u.%u.%u: DWARF: %s (%s)\n", PY_MAJOR(v), PY_MINOR(v),
			PY_MICRO(v), strerror(-err), missing ? missing : "");
	dwarf_end(dw);
	return !err;
}

#define FIELD(name) { #name, offsetof(struct py_offsets, name) }
static const struct {
	const char *name;
	size_t off;
} fields[] = {
	FIELD(object_type), FIELD(runtime_interp_head), FIELD(interp_threads_head), FIELD(tstate_next),
	FIELD(tstate_thread_id), FIELD(tstate_native_thread_id), FIELD(tstate_frame),
	FIELD(tstate_cframe), FIELD(cframe_current_frame), FIELD(frame_back),
	FIELD(frame_code), FIELD(frame_instr), FIELD(frame_is_entry), FIELD(frame_owner),
	FIELD(code_name), FIELD(code_qualname), FIELD(code_filename),
	FIELD(code_firstlineno), FIELD(code_linetable), FIELD(code_adaptive),
	FIELD(bytes_size), FIELD(bytes_sval), FIELD(unicode_length), FIELD(unicode_state),
	FIELD(unicode_ascii_size), FIELD(unicode_compact_size),
};

static int32_t field(const struct py_offsets *o, size_t i)
{
	int32_t v;

	memcpy(&v, (const char *)o + fields[i].off, sizeof(v));
	return v;
}

/* Every field equal; a difference is printed by name. */
static void check_same(const char *what, const struct py_offsets *a, const struct py_offsets *b)
{
	size_t i;

	CHECK(a->version == b->version);
	CHECK(sizeof(fields) / sizeof(fields[0]) * sizeof(int32_t) ==
	      sizeof(*a) - offsetof(struct py_offsets, object_type));
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (field(a, i) == field(b, i))
			continue;
		fprintf(stderr, "%s %u.%u.%u: %s %d != %d\n", what, PY_MAJOR(a->version),
			PY_MINOR(a->version), PY_MICRO(a->version), fields[i].name, field(a, i),
			field(b, i));
		check_failures++;
	}
}

static int check_table(void)
{
	const struct py_offsets *t;
	struct py_offsets d, copy;
	int tested = 0;
	size_t i;

	for (i = 0; (t = pyoffsets_table_entry(i)); i++) {
		int fd = open_libpython(t->version);

		CHECK(!pyoffsets_from_table(t->version, &copy));
		check_same("table lookup", &copy, t);
		if (fd < 0) {
			fprintf(stderr, "skip: table %u.%u.%u: not under %s\n", PY_MAJOR(t->version),
				PY_MINOR(t->version), PY_MICRO(t->version), root);
			continue;
		}
		if (dwarf_offsets(fd, t->version, &d)) {
			check_same("table vs DWARF", t, &d);
			tested++;
		} else {
			check_failures++;
		}
		close(fd);
	}
	CHECK(i >= 6);
	fprintf(stderr, "table: %zu entries, %d checked against DWARF\n", i, tested);
	return tested;
}

/* A file's initialised memory, by virtual address, through PT_LOAD. */
struct file_image {
	int fd;
	Elf *elf;
};

static int read_file_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct file_image *img = arg;
	size_t n, i;

	if (elf_getphdrnum(img->elf, &n))
		return -EIO;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(img->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		if (pread(img->fd, buf, len, (off_t)(ph.p_offset + addr - ph.p_vaddr)) !=
		    (ssize_t)len)
			return -EIO;
		return 0;
	}
	return -EFAULT;
}

static uint64_t symbol_value(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_value)
				return sym.st_value;
		}
	}
	return 0;
}

struct patched {
	struct file_image *img;
	uint64_t at;	/* offset into the read at which to put @bytes */
	const void *bytes;
	size_t len;
};

static int read_patched(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct patched *p = arg;
	int err = read_file_image(p->img, addr, buf, len);

	if (!err && p->at + p->len <= len)
		memcpy((char *)buf + p->at, p->bytes, p->len);
	return err;
}

static int read_fails(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg, (void)addr, (void)buf, (void)len;
	return -EFAULT;
}

static void check_debug_offsets(void)
{
	const uint32_t v = PY_VERSION_OF(3, 13, 0);
	struct file_image img = { .fd = open_libpython(v) };
	struct py_offsets d, o;
	uint64_t runtime;
	uint64_t huge = 1u << 20;
	struct patched p = { .img = &img };

	CHECK(pyoffsets_from_debug(read_fails, NULL, 0x1000, PY_VERSION_OF(3, 12, 1), &o) ==
	      -ENOTSUP);
	CHECK(pyoffsets_from_debug(read_fails, NULL, 0x1000, v, &o) == -EFAULT);
	if (img.fd < 0) {
		fprintf(stderr, "skip: debug offsets: no libpython3.13 under %s\n", root);
		return;
	}
	elf_version(EV_CURRENT);
	img.elf = elf_begin(img.fd, ELF_C_READ, NULL);
	CHECK(img.elf);
	runtime = img.elf ? symbol_value(img.elf, "_PyRuntime") : 0;
	CHECK(runtime);
	if (runtime && dwarf_offsets(img.fd, v, &d)) {
		CHECK(!pyoffsets_from_debug(read_file_image, &img, runtime, v, &o));
		check_same("_Py_DebugOffsets vs DWARF", &o, &d);
		/* another micro release of 3.13 reads the same layout */
		CHECK(!pyoffsets_from_debug(read_file_image, &img, runtime,
					    PY_VERSION_OF(3, 13, 9), &o));
		/* a wrong cookie */
		p.at = 1, p.bytes = "X", p.len = 1;
		CHECK(pyoffsets_from_debug(read_patched, &p, runtime, v, &o) == -EINVAL);
		/* the version it carries is 3.12's */
		p.at = 8, p.bytes = "\xf0\x01\x0c\x03", p.len = 4;
		CHECK(pyoffsets_from_debug(read_patched, &p, runtime, v, &o) == -EINVAL);
		/* a free-threaded build */
		p.at = 16, p.bytes = "\x01", p.len = 1;
		CHECK(pyoffsets_from_debug(read_patched, &p, runtime, v, &o) == -EPROTONOSUPPORT);
		/* garbage where thread_state.next is */
		p.at = 168, p.bytes = &huge, p.len = sizeof(huge);
		CHECK(pyoffsets_from_debug(read_patched, &p, runtime, v, &o) == -EINVAL);
		/* and nothing was written to @o by the refusals */
		CHECK(!pyoffsets_from_debug(read_file_image, &img, runtime, v, &o));
		fprintf(stderr, "debug offsets: 3.13.0 checked against DWARF\n");
	} else {
		check_failures++;
	}
	if (img.elf)
		elf_end(img.elf);
	close(img.fd);
}

/*
 * The start of _PyRuntime of Debian testing's stripped python3.13 (3.13.15-1),
 * python3.14 (3.14.8-1) and python3.15 (3.15.0-1), as a process holds it
 * before its first write: tests/unit/pydebug_RELEASE.bin, the bytes at
 * _PyRuntime's file offset (its .dynsym address through the .PyRuntime
 * section), as many as the layout the reader copies (584, 664, 752):
 *   dd if=/usr/bin/python3.14 of=pydebug_3.14.8.bin bs=1 count=664 \
 *      skip=$((0xb947c0 - 0xb947c0 + 0x7937c0))
 * Expected offsets: each file's DWARF from Debian's python3.1X-dbg
 * (pyoffsets_from_dwarf), which agreed with the reader on every field.
 */
struct debug_fixture {
	const char *file;
	uint32_t version;
	int32_t runtime_interp_head, interp_threads_head, tstate_thread_id;
	int32_t tstate_native_thread_id, frame_owner, code_adaptive;
};

static const struct debug_fixture debug_fixtures[] = {
	{ "pydebug_3.13.15.bin", PY_VERSION_OF(3, 13, 15), 632, 7344, 152, 160, 70, 200 },
	{ "pydebug_3.14.8.bin", PY_VERSION_OF(3, 14, 8), 808, 7344, 152, 160, 74, 208 },
	{ "pydebug_3.15.0.bin", PY_VERSION_OF(3, 15, 0), 936, 7336, 176, 184, 74, 208 },
};

#define FIXTURE_RUNTIME 0x7f0000000000ull

struct fixture_mem {
	uint8_t bytes[1024];
	size_t len;
};

static int read_fixture(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct fixture_mem *m = arg;

	if (addr < FIXTURE_RUNTIME || addr - FIXTURE_RUNTIME + len > m->len)
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - FIXTURE_RUNTIME), len);
	return 0;
}

/* What the three layouts share (3.14 and 3.15 moved none of these). */
static void check_common(const struct py_offsets *o)
{
	CHECK(o->object_type == 8 && o->interp_threads_head > 0 && o->tstate_next == 8);
	CHECK(o->tstate_frame == 72 && o->tstate_cframe == -1 && o->cframe_current_frame == -1);
	CHECK(o->frame_back == 8 && o->frame_code == 0 && o->frame_instr == 56);
	CHECK(o->frame_is_entry == -1);
	CHECK(o->code_name == 120 && o->code_qualname == 128 && o->code_filename == 112);
	CHECK(o->code_firstlineno == 68 && o->code_linetable == 136);
	CHECK(o->bytes_size == 16 && o->bytes_sval == 32);
	CHECK(o->unicode_length == 16 && o->unicode_state == 32);
	CHECK(o->unicode_ascii_size == 40 && o->unicode_compact_size == 56);
}

static void check_debug_fixture(const struct debug_fixture *fx)
{
	struct fixture_mem m = { .len = 0 };
	struct py_offsets o;
	uint32_t carried = 0;
	bool ft = true;
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/unit/%s", LATPROF_SRCDIR, fx->file);
	f = fopen(path, "rb");
	CHECK(f);
	if (!f)
		return;
	m.len = fread(m.bytes, 1, sizeof(m.bytes), f);
	fclose(f);
	CHECK(!pyoffsets_debug_header(read_fixture, &m, FIXTURE_RUNTIME, &carried, &ft));
	CHECK(carried == fx->version && !ft);
	CHECK(!pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME, fx->version, &o));
	check_common(&o);
	CHECK(o.version == fx->version);
	CHECK(o.runtime_interp_head == fx->runtime_interp_head);
	CHECK(o.interp_threads_head == fx->interp_threads_head);
	CHECK(o.tstate_thread_id == fx->tstate_thread_id);
	CHECK(o.tstate_native_thread_id == fx->tstate_native_thread_id);
	CHECK(o.frame_owner == fx->frame_owner && o.code_adaptive == fx->code_adaptive);
	/* another minor's layout is never tried on it, nor one past 3.15 */
	CHECK(pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME,
				   fx->version + PY_VERSION_OF(0, 1, 0), &o) ==
	      (PY_MINOR(fx->version) == 15 ? -ENOTSUP : -EINVAL));
	CHECK(pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME, PY_VERSION_OF(3, 16, 0),
				   &o) == -ENOTSUP);
	/* cut short: the read of the layout fails */
	m.len -= 8;
	CHECK(pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME, fx->version, &o) == -EFAULT);
	m.len += 8;
	/* free-threaded (Py_GIL_DISABLED) */
	m.bytes[16] = 1;
	CHECK(!pyoffsets_debug_header(read_fixture, &m, FIXTURE_RUNTIME, &carried, &ft) && ft);
	CHECK(pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME, fx->version, &o) ==
	      -EPROTONOSUPPORT);
	m.bytes[16] = 0;
	/* an offset past its struct's size: thread_state.next = its size */
	memcpy(m.bytes + 24 + 24 + (PY_MINOR(fx->version) == 13 ? 13 : 16) * 8 + 16,
	       m.bytes + 24 + 24 + (PY_MINOR(fx->version) == 13 ? 13 : 16) * 8, 8);
	CHECK(pyoffsets_from_debug(read_fixture, &m, FIXTURE_RUNTIME, fx->version, &o) == -EINVAL);
	fprintf(stderr, "debug offsets: %s checked\n", fx->file);
}

int main(void)
{
	struct py_offsets o;

	pyenv_root();
	for (size_t i = 0; i < sizeof(debug_fixtures) / sizeof(debug_fixtures[0]); i++)
		check_debug_fixture(&debug_fixtures[i]);
	CHECK(pyoffsets_from_table(PY_VERSION_OF(3, 7, 16), &o) == -ENOENT);
	CHECK(pyoffsets_from_table(PY_VERSION_OF(3, 14, 0), &o) == -ENOENT);
	CHECK(!strcmp(pyoffsets_source_name(PYOFFSETS_TABLE), "table"));
	if (!check_table() && !check_failures) {
		fprintf(stderr, "skip: no pyenv CPython 3.8-3.13 under %s\n", root);
		return 77;
	}
	check_debug_offsets();
	return check_exit();
}
