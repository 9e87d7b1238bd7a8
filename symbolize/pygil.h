/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a running CPython keeps its GIL, private to symbolize/ and the
 * record session: the address of its struct _gil_runtime_state, whose
 * condition variables and mutexes are the futexes a thread waits on to take
 * the GIL (take_gil, and drop_gil's forced switch). 3.8-3.11 keep it in
 * _PyRuntime (ceval.gil); 3.12+ in each interpreter, found through the
 * pointer ceval.gil of the newest one (the main interpreter's GIL, which
 * interpreters made without a GIL of their own share). Free-threaded builds
 * have no GIL and are never walked, so never asked.
 */
#ifndef LATPROF_SYMBOLIZE_PYGIL_H
#define LATPROF_SYMBOLIZE_PYGIL_H

#include <stdint.h>

#include "symbolize/pyoffsets.h"

struct py_gil {
	uint64_t addr;		/* struct _gil_runtime_state in the process */
	uint32_t size;		/* its bytes */
	uint32_t locked;	/* offset of int locked in it */
	uint32_t holder;	/* offset of PyThreadState *last_holder in it */
};

/*
 * Find the GIL of the interpreter whose _PyRuntime is at @runtime and
 * whose layout is @o, reading its memory through @read. 0 with @g filled;
 * -EAGAIN when it is not made yet (no interpreter, a NULL ceval.gil, or
 * locked still -1: Py_Initialize has not got there; ask again later);
 * -ENOENT when @o has no GIL offsets; -EINVAL when locked reads neither 0
 * nor 1 (the layout is not this process's); or the read's -errno.
 */
int py_gil_find(const struct py_offsets *o, uint64_t runtime, py_read_fn read, void *arg,
		struct py_gil *g);

#endif
