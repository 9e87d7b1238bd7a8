// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for perf-PID.map files (symbolize/perfmap.c), which any
 * JIT, or anyone who can write to the target's /tmp, controls. Bytes 0..15
 * are two little-endian addresses to look up, the rest is the map's text,
 * parsed by perfmap_load_text() (the body of perfmap_load()). The text is
 * freed before the lookups, so a name pointing into it is a use-after-free.
 * fuzz_symbolize covers the same parser among others; this target spends
 * all its time here. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/lib/strtab.h"
#include "symbolize/perfmap.h"

#define FUZZ_HEADER 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addr[2] = { 0, 0 }, start;
	struct strtab *strs = strtab_new();
	struct perfmap *m;
	const char *name;
	char *text;
	size_t i, len = size > FUZZ_HEADER ? size - FUZZ_HEADER : 0;

	memcpy(addr, data, size < FUZZ_HEADER ? size : FUZZ_HEADER);
	text = malloc(len + 1);
	if (!strs || !text)
		abort();
	memcpy(text, data + (size - len), len);
	text[len] = 0;
	m = perfmap_load_text(text, strs);
	free(text);
	if (!m && errno != ENOENT && errno != ENOMEM)
		abort();	/* the contract: those two errors only */
	for (i = 0; m && i < 2; i++) {
		if (perfmap_lookup(m, addr[i], &name, &start) &&
		    (start > addr[i] || !name || strlen(name) > len))
			abort();
	}
	perfmap_free(m);
	strtab_free(strs);
	return 0;
}
