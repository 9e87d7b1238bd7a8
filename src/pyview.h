/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Python view of a stack: what a Python program's stack shows once the
 * interpreter's own C frames are folded away, as py-spy and Austin show it.
 * The profile keeps the full native stack (src/pystacks_frames.c merges
 * the Python frames into it); every view (report, flame graphs, exports)
 * folds it here, at read time, unless told --native. Only a sample with a
 * Python frame is changed, and only by leaving locations out:
 *
 * - between two Python frames: the interpreter's frames are left out (the
 *   call machinery, the eval loop's entry, Context.run, asyncio's task step);
 *   C extensions' frames (numpy's BLAS, any other module) stay in place;
 * - above (rootward of) the outermost Python frame: the interpreter's and the
 *   C library's frames are left out (_start, __libc_start_main, Py_BytesMain,
 *   Py_RunMain, ...; clone3, start_thread, pythread_wrapper for a thread), so
 *   a stack starts at the program's first function: `<module> (app.py)`, or
 *   `Thread._bootstrap (threading.py)` for a thread. A program that embeds
 *   the interpreter keeps its own frames there;
 * - below the innermost Python frame: only the interpreter's call dispatch
 *   (PyObject_Vectorcall, cfunction_vectorcall_O, slot_tp_call, ...) is left
 *   out, the interpreter's frames its symbols do not name (a stripped
 *   build's static functions, "python3.15+0x5def1b"), and a perf trampoline
 *   (a call caught entering or leaving, its frame not walked); the C function that
 *   does the work when it is named (time_sleep, sock_recv, take_gil), the C
 *   library, the kernel and the syscall stay.
 *
 * The interpreter is the mapping of a libpython* or python* file, and the
 * standard library's extension modules (a lib-dynload directory), which
 * one build compiles into the interpreter and another ships as files: the
 * same program shows the same stack with either. CPython 3.12's perf
 * trampolines (-X perf: "py::" frames of a perf map) are the interpreter's
 * too.
 */
#ifndef LATPROF_PYVIEW_H
#define LATPROF_PYVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/profile.h"

/* Where the Python frames of one sample are, and whether it is folded. */
struct pyview {
	bool has_python;	/* the sample has a Python frame */
	bool fold;		/* ... and the interpreter's glue is left out */
	size_t inner, outer;	/* index in locs of its innermost and outermost one */
};

/*
 * Is @file (a mapping's path) the CPython interpreter: a libpython* or
 * python* file, or an extension module of its standard library (in a
 * lib-dynload directory)? Cannot fail.
 */
bool pyview_is_interpreter(const char *file);

/*
 * Find the Python frames of sample @s into @v. @native: fold nothing (the
 * full native stack). Cannot fail.
 */
void pyview_find(struct pyview *v, const struct profile *p, const struct profile_sample *s,
		 bool native);

/*
 * Does the view @v (pyview_find of @s) show location @i of @s (leaf first)?
 * Always true for a sample without Python frames or with @native. Cannot fail.
 */
bool pyview_shows(const struct pyview *v, const struct profile *p,
		  const struct profile_sample *s, size_t i);

#endif
