// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the folded-stack reader (flamegraph/folded.c), as
 * `latprof flamegraph --folded` and `latprof diff --folded` use it: in
 * byte 0, bit 0 is FOLDED_FLAG_PAIRS, bits 1-2 the SVG mode (plain, hot/cold,
 * diff), bits 3-5 inverted, normalized, process frames; the rest is the
 * text. Whatever was parsed, even before an error, is written back as folded
 * text and drawn as an SVG to /dev/null. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flame.h"
#include "flamegraph/folded.h"
#include "flamegraph/svg.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flame_svg_opts o = { .no_script = true, .min_width_pct = 0 };
	struct flame *f;
	struct folded_error e;
	unsigned int mode;
	int err;

	if (!size)
		return 0;
	mode = ((data[0] >> 1) & 3) % 3;
	f = flame_new();
	if (!f)
		abort();
	memset(&e, 0, sizeof(e));
	err = folded_parse(f, (const char *)data + 1, size - 1,
			   data[0] & 1 ? FOLDED_FLAG_PAIRS : 0, &e);
	/* the contract: an error names a line and a reason */
	if (err == -EINVAL && (!e.line || !e.reason[0] ||
			       !memchr(e.reason, 0, sizeof(e.reason))))
		abort();
	o.mode = mode == 0 ? FLAME_SVG_MODE_PLAIN : mode == 1 ? FLAME_SVG_MODE_HOTCOLD :
		 FLAME_SVG_MODE_DIFF;
	o.inverted = data[0] & 8;
	o.normalize = data[0] & 16;
	o.process_frames = data[0] & 32;
	flame_write_folded(f, devnull);
	flame_write_svg(f, &o, devnull);
	flame_free(f);
	return 0;
}
