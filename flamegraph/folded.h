/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading folded stacks ("root;...;leaf WEIGHT", one stack a line) from any
 * tool into a struct flame. The input is untrusted: every malformed line is
 * an error naming its line number, never a crash. Writing folded text is
 * flame_write_folded()'s job.
 */
#ifndef LATPROF_FOLDED_H
#define LATPROF_FOLDED_H

#include <stddef.h>

#include "flamegraph/flame.h"

/* A stack deeper than this is refused (no input needs it; hostile input might). */
#define FOLDED_MAX_FRAMES 16384

enum folded_flag {
	/*
	 * Also accept "STACK BEFORE AFTER" lines (FlameGraph's difffolded
	 * output): AFTER becomes the weight, BEFORE the second weight. Without
	 * the flag, "a;b 1 2" is the frame "b 1" with weight 2.
	 */
	FOLDED_FLAG_PAIRS = 1 << 0,
};

struct folded_error {
	size_t line;		/* 1-based; 0 when the failure is not a line's */
	char reason[160];	/* "weight 'x1' is not a number", no line number */
};

/*
 * Add every stack of the folded text @buf[0..len) to @f. Blank lines are
 * skipped, "\r\n" line ends and trailing blanks are tolerated; frames are
 * separated by ';', the weight (a decimal unsigned integer) by one or more
 * blanks. Returns 0; -EINVAL for malformed input, with @e naming the line
 * and the reason (stacks before it are already in @f); -ENOMEM. @e may not
 * be NULL.
 */
int folded_parse(struct flame *f, const char *buf, size_t len, unsigned flags,
		 struct folded_error *e);

#endif
