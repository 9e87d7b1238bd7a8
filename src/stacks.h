/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Profile samples as stacks of names, the way folded output, reports and
 * flame graphs show them (CLI.md "Folded stack conventions"): the process
 * name first, then frames root to leaf; kernel frames end in "_[k]", inlined
 * ones in "_[i]", JIT-compiled ones (named by a perf-PID.map, in anonymous
 * memory) in "_[j]"; a frame without a symbol is "MODULE+0xOFFSET" or
 * "[unknown]". A Python frame is "FUNCTION (FILE)", py-spy's text without
 * the line, so that a function is one frame whatever line it runs; FILE is
 * the file's base name. A stack with Python frames is shown in the Python
 * view (src/pyview.h: the interpreter's glue left out) unless
 * STACKS_FLAG_NATIVE.
 */
#ifndef LATPROF_STACKS_H
#define LATPROF_STACKS_H

#include <stdbool.h>
#include <stddef.h>

#include "src/profile.h"
#include "src/lib/strtab.h"

enum stacks_flag {
	STACKS_FLAG_PER_PID = 1 << 0,	/* first frame "comm-PID" instead of "comm" */
	STACKS_FLAG_NO_COMM = 1 << 1,	/* no process frame at all */
	STACKS_FLAG_SYSCALL_LEAF = 1 << 2,	/* no kernel frames; leaf "syscall:NAME"
						 * from the sample's syscall label */
	STACKS_FLAG_PY_LINES = 1 << 3,	/* Python frames "f (file.py:LINE)" with the
					 * line running, not "f (file.py)" */
	STACKS_FLAG_PROGRAM_ONLY = 1 << 4,	/* no frames of the C library and its
						 * kin (src/syslib.h), unless the
						 * stack has no other user frame */
	STACKS_FLAG_NATIVE = 1 << 5,	/* the full native stack: no Python view
					 * (src/pyview.h) */
};

struct stack_names {
	const char **items;	/* root first; interned in the caller's strtab */
	size_t nr, alloc;
	size_t python_leaf;	/* 1 + index in items of the innermost Python frame, 0: none */
};

/*
 * Fill @out with the names of sample @s, root first, interning into @names.
 * Returns 0 or -ENOMEM. @out is reset first; free its items when done.
 */
int stack_names_of(const struct profile *p, const struct profile_sample *s, unsigned flags,
		   struct strtab *names, struct stack_names *out);

#endif
