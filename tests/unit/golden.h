/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Golden files for unit tests: tests/golden/NAME holds the expected output
 * of a renderer byte for byte. `UPDATE=1 make check-unit` rewrites them
 * from the current output (review the diff before committing).
 */
#ifndef LATPROF_TESTS_GOLDEN_H
#define LATPROF_TESTS_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

#define GOLDEN_MAX (1 << 20)

/* Compare @got with tests/golden/@name (or rewrite it under UPDATE=1). */
static inline void check_golden(const char *name, const char *got)
{
	char path[512], *want = NULL;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/golden/%s", LATPROF_SRCDIR, name);
	if (getenv("UPDATE") && !strcmp(getenv("UPDATE"), "1")) {
		f = fopen(path, "w");
		CHECK(f && fputs(got, f) >= 0 && fclose(f) == 0);
		return;
	}
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	want = calloc(1, GOLDEN_MAX);
	if (want)
		n = fread(want, 1, GOLDEN_MAX - 1, f);
	fclose(f);
	if (!want || n != strlen(got) || memcmp(want, got, n)) {
		fprintf(stderr, "%s differs from the rendering (UPDATE=1 make check-unit rewrites it)\n",
			path);
		check_failures++;
	}
	free(want);
}

#endif
