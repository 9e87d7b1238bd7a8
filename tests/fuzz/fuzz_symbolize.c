// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for symbolize/: mutated ELF files, perf-PID.map text and
 * kallsyms/modules text go through the same library calls the symbolizer
 * makes, and a few addresses taken from the input are resolved in each. It
 * checks memory safety (with ASan+UBSan) and the frame contracts of
 * binary.h; it does not check that names are right (the unit tests do).
 *
 * Input: byte 0 picks the parser (low nibble % 3) and which words are return
 * addresses (bit 4 + i for word i), bytes 1..32 are FUZZ_NR_WORDS
 * little-endian 64-bit address words (missing bytes are zero), the rest is
 * the payload:
 *   0  an ELF file, opened with binary_new() from a memfd;
 *   1  the text of a perf-PID.map;
 *   2  a /proc/kallsyms file, then after its first NUL byte (if any) a
 *      /proc/modules file.
 * See docs/fuzzing.md; tests/fuzz/make-corpus.sh writes seeds in this format.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* memfd_create */
#endif
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/lib/strtab.h"
#include "symbolize/binary.h"
#include "symbolize/debuginfo.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolize.h"

#define FUZZ_NR_WORDS 4
#define FUZZ_HEADER (1 + 8 * FUZZ_NR_WORDS)

enum fuzz_kind {
	FUZZ_KIND_ELF,
	FUZZ_KIND_PERFMAP,
	FUZZ_KIND_KALLSYMS,
	FUZZ_KIND_NR,
};

struct fuzz_input {
	enum fuzz_kind kind;
	uint64_t words[FUZZ_NR_WORDS];
	bool is_return[FUZZ_NR_WORDS];
	const uint8_t *payload;
	size_t len;
};

static void fuzz_split(const uint8_t *data, size_t size, struct fuzz_input *in)
{
	uint8_t header[FUZZ_HEADER] = { 0 };
	size_t i, j;

	memcpy(header, data, size < FUZZ_HEADER ? size : FUZZ_HEADER);
	in->kind = (header[0] & 15) % FUZZ_KIND_NR;
	for (i = 0; i < FUZZ_NR_WORDS; i++) {
		in->is_return[i] = (header[0] >> (4 + i)) & 1;
		in->words[i] = 0;
		for (j = 0; j < 8; j++)
			in->words[i] |= (uint64_t)header[1 + 8 * i + j] << (8 * j);
	}
	in->payload = size > FUZZ_HEADER ? data + FUZZ_HEADER : data;
	in->len = size > FUZZ_HEADER ? size - FUZZ_HEADER : 0;
}

/* A memfd holding @len bytes of @buf, rewound; aborts on failure (not a finding). */
static int fuzz_memfd(const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;
	int fd;

	fd = memfd_create("latprof-fuzz", MFD_CLOEXEC);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	while (len) {
		n = write(fd, p, len);
		if (n <= 0) {
			perror("write memfd");
			abort();
		}
		p += n;
		len -= n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Read every string of a frame, so ASan sees a dangling or unterminated one. */
static size_t fuzz_touch(const char *s)
{
	return s ? strlen(s) : 0;
}

/* The contract of binary_resolve(): >= 1 frame appended, the last not inlined. */
static void fuzz_check_frames(const struct sym_frames *out, size_t before)
{
	const struct sym_frame *f;
	size_t i, sum = 0;

	assert(out->nr > before);
	assert(!out->items[out->nr - 1].inlined);
	for (i = before; i < out->nr; i++) {
		f = &out->items[i];
		sum += fuzz_touch(f->function) + fuzz_touch(f->system_name) + fuzz_touch(f->file);
		assert(!f->function == !f->system_name);
		assert(f->file || !f->line);
	}
	(void)sum;
}

static void fuzz_resolve(struct binary *b, uint64_t vaddr, bool is_return, bool no_lines,
			 struct strtab *strs, struct sym_frames *out)
{
	size_t before = out->nr;
	int err;

	err = binary_resolve(b, vaddr, is_return, no_lines, strs, out);
	if (err == -ENOMEM)
		return;
	assert(!err);
	fuzz_check_frames(out, before);
}

/*
 * Each word is used twice, like a sampled address: as a file offset inside
 * the payload translated through the segments (which lands in code far more
 * often than a random address), and as an ELF address as it is.
 */
static void fuzz_elf(const struct fuzz_input *in, struct strtab *strs)
{
	struct sym_frames out = { 0 };
	struct binary *b;
	uint64_t w, vaddr;
	bool is_return;
	size_t i;

	static struct debuginfo *di;

	/* the default search (no --debug-dir), made once */
	if (!di)
		di = debuginfo_new(NULL, 0);
	if (!di)
		return;
	b = binary_new(fuzz_memfd(in->payload, in->len), "/nonexistent/latprof-fuzz.elf", di, strs);
	if (!b)
		return;		/* ENOMEM only */
	fuzz_touch(binary_build_id(b));
	assert(binary_fd(b) >= 0);
	for (i = 0; i < FUZZ_NR_WORDS; i++) {
		w = in->words[i];
		is_return = in->is_return[i];
		if (in->len && binary_file_to_vaddr(b, w % in->len, &vaddr)) {
			fuzz_resolve(b, vaddr, is_return, false, strs, &out);
			fuzz_resolve(b, vaddr, is_return, true, strs, &out);
		}
		fuzz_resolve(b, w, is_return, i & 1, strs, &out);
	}
	free(out.items);
	binary_free(b);
}

static void fuzz_perfmap(const struct fuzz_input *in, struct strtab *strs)
{
	struct perfmap *m;
	const char *name;
	uint64_t start, addr;
	char *text;
	size_t i;

	text = malloc(in->len + 1);
	if (!text)
		return;
	memcpy(text, in->payload, in->len);
	text[in->len] = '\0';
	m = perfmap_load_text(text, strs);
	free(text);	/* the map must not keep pointers into it */
	if (!m) {
		assert(errno == ENOENT || errno == ENOMEM);
		return;
	}
	for (i = 0; i < FUZZ_NR_WORDS; i++) {
		addr = in->words[i] - in->is_return[i];
		if (perfmap_lookup(m, addr, &name, &start)) {
			assert(start <= addr);
			fuzz_touch(name);
		}
	}
	perfmap_free(m);
}

/* Splits the payload at its first NUL: kallsyms text, then modules text. */
static void fuzz_kallsyms(const struct fuzz_input *in, struct strtab *strs)
{
	const struct sym_mapping *map;
	const uint8_t *nul = memchr(in->payload, '\0', in->len);
	size_t ksyms_len = nul ? (size_t)(nul - in->payload) : in->len;
	struct kallsyms k;
	struct sym_location loc = { .nr_frames = 1 };
	struct sym_frame frame = { 0 };
	char kpath[64], mpath[64], buf[128];
	const char *name;
	uint64_t sym_addr;
	int kfd, mfd, err;
	size_t i;

	kfd = fuzz_memfd(in->payload, ksyms_len);
	mfd = nul ? fuzz_memfd(nul + 1, in->len - ksyms_len - 1) : -1;
	snprintf(kpath, sizeof(kpath), "/proc/self/fd/%d", kfd);
	snprintf(mpath, sizeof(mpath), "/proc/self/fd/%d", mfd);
	err = kallsyms_load(&k, kpath, nul ? mpath : NULL, strs);
	close(kfd);
	if (mfd >= 0)
		close(mfd);
	if (err) {
		assert(err == -ENOMEM);
		return;
	}
	for (i = 0; i < FUZZ_NR_WORDS; i++) {
		kallsyms_lookup(&k, in->words[i] - in->is_return[i], &map, &name, &sym_addr);
		assert(!name || (map && sym_addr <= in->words[i] - in->is_return[i]));
		frame.function = name;
		loc.map = map;
		loc.address = in->words[i];
		loc.rel_address = map ? in->words[i] - map->start + map->offset : in->words[i];
		loc.frames = &frame;
		sym_location_fallback_name(&loc, buf, sizeof(buf));
		fuzz_touch(name);
		fuzz_touch(map ? map->path : NULL);
	}
	kallsyms_release(&k);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* debuginfo lookups stay on this machine: no network, no debuginfod cache */
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in;
	struct strtab *strs;

	fuzz_split(data, size, &in);
	strs = strtab_new();
	if (!strs)
		return 0;
	switch (in.kind) {
	case FUZZ_KIND_ELF:
		fuzz_elf(&in, strs);
		break;
	case FUZZ_KIND_PERFMAP:
		fuzz_perfmap(&in, strs);
		break;
	default:
		fuzz_kallsyms(&in, strs);
		break;
	}
	strtab_free(strs);
	return 0;
}
