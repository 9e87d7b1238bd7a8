/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Checking an assumed CPython layout against a running process, private to
 * symbolize/. The generated table (pyoffsets_from_table) holds one layout
 * per minor version, made from a few releases' headers and assumed for the
 * others: before the BPF walk uses it on a process, the structures it
 * describes must be found there, linked the way CPython links them. A layout
 * that comes from the interpreter's own DWARF or _Py_DebugOffsets needs no
 * check.
 */
#ifndef LATPROF_SYMBOLIZE_PYCHECK_H
#define LATPROF_SYMBOLIZE_PYCHECK_H

#include <stddef.h>

#include "symbolize/python.h"

/*
 * Check @in->off against process @pid, whose interpreter @in describes
 * (runtime and type addresses placed in the process):
 *   - _PyRuntime.interpreters.head is an interpreter whose thread list's
 *     every thread state points back at it (PyThreadState.interp);
 *   - each thread state's thread_id is a thread pointer (on x86-64 the first
 *     word of a thread's control block points to itself) and, from 3.11,
 *     its native_thread_id is a thread of /proc/PID/task;
 *   - the frames of up to 8 threads, 64 each, hold code objects (ob_type is
 *     PyCode_Type) whose names, files and line tables read as such, a file
 *     name that looks like one, the instructions of most frames on a line
 *     of their code, and a sane is_entry (3.11) or owner (3.12+).
 * The process runs meanwhile, so a check that fails is tried twice more
 * before it counts (when every frame chain it followed tore, up to 8 such
 * rounds 2 ms apart, 16 ms in all: a thread state being made or freed),
 * and counts only once _PyRuntime is mapped writable and
 * says Py_Initialize has finished (before, libpython may not even be fully
 * mapped yet). Returns 0 (the layout is the process's), -EAGAIN (too
 * early to tell: not mapped or initialised yet, no thread or frame yet;
 * ask again later),
 * -EINVAL (it is not: @why, @size bytes, says what did not match), or the
 * -errno of a read of the process (-ESRCH: gone).
 */
int pycheck_layout(const struct py_interp *in, int pid, char *why, size_t size);

#endif
