// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the pprof reader (src/pprof_read.c): the input is a
 * profile file, gzip'ed or not, as `latprof report FILE` would read it. A
 * profile the reader accepts then goes through everything that trusts it:
 * the report, every export format with every weight the profile has, and
 * the timeline stored in its comments. Output goes to /dev/null.
 * See docs/fuzzing.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "src/export_formats.h"
#include "src/weight.h"
#include "src/pprof.h"
#include "src/profile.h"
#include "src/report.h"
#include "src/timeline.h"
#include "src/lib/util.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	/* "no such weight" messages would flood the fuzzer's output */
	log_level = LOG_LEVEL_QUIET;
	if (!devnull)
		abort();
	return 0;
}

static void fuzz_exports(const struct profile *p)
{
	static const char *const weights[] = { "cpu", "cpu-time", "latency", "offcpu", "wall" };
	static const int formats[] = { EXPORT_FORMAT_FOLDED, EXPORT_FORMAT_SPEEDSCOPE,
				       EXPORT_FORMAT_JSON, EXPORT_FORMAT_PROMETHEUS,
				       EXPORT_FORMAT_SVG };
	struct export_opts o = { .top = 5 };
	struct profile_weight w;
	size_t i, j;

	for (i = 0; i < sizeof(weights) / sizeof(weights[0]); i++) {
		if (profile_weight_get(p, weights[i], &w))
			continue;
		o.w = &w;
		for (j = 0; j < sizeof(formats) / sizeof(formats[0]); j++)
			export_write(devnull, formats[j], p, &o);
		if (!i)
			export_write(devnull, EXPORT_FORMAT_PPROF, p, &o);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts ro = { .top = 15, .stacks = 5, .slowest = 5 };
	struct profile *p = NULL;
	struct timeline tl;
	const char *why = NULL;

	if (pprof_read_mem(data, size, &p, &why)) {
		if (p)
			abort();	/* the contract: no profile on failure */
		return 0;
	}
	report_profile(devnull, &ro, p, "fuzz.pb.gz");
	fuzz_exports(p);
	timeline_init(&tl, 0, 0);
	timeline_load(&tl, p);
	timeline_release(&tl);
	profile_free(p);
	return 0;
}
