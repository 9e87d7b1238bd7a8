/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal assertions for unit tests. A test binary runs its checks, then
 * returns check_exit(): 0 when all passed, 1 otherwise (77 = skipped, chosen
 * by the test itself). Failures print file:line and the failed expression.
 */
#ifndef LATPROF_TESTS_CHECK_H
#define LATPROF_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                  \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                            \
	do {                                                                       \
		const char *a_ = (a), *b_ = (b);                                   \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                \
			fprintf(stderr, "%s:%d: \"%s\" != \"%s\" (%s vs %s)\n",   \
				__FILE__, __LINE__, a_ ? a_ : "(null)",            \
				b_ ? b_ : "(null)", #a, #b);                       \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

static inline int check_exit(void)
{
	return check_failures ? 1 : 0;
}

#endif
