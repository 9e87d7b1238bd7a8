/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Finding the CPython interpreter of a running process, private to
 * symbolize/ and the record session: which file holds it (a static python
 * executable or libpython3.X.so), its version, where _PyRuntime and the
 * eval loop (_PyEval_EvalFrameDefault) are in the process, and the struct
 * offsets a frame walk needs (symbolize/pyoffsets.h: DWARF first, then
 * _Py_DebugOffsets, then the generated table). Per file the work is done
 * once: a finder caches results by device and inode.
 *
 * A process that is Python but cannot be walked (2.7, 3.7, an unknown
 * build without debuginfo) is reported with the reason, so its C frames stay
 * and the report says why.
 */
#ifndef LATPROF_SYMBOLIZE_PYTHON_H
#define LATPROF_SYMBOLIZE_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/pycode.h"
#include "symbolize/pyoffsets.h"

enum py_status {
	PY_STATUS_NONE,		/* no Python interpreter mapped (yet) */
	PY_STATUS_OK,		/* found, with offsets */
	PY_STATUS_NO_OFFSETS,	/* found, but its frames cannot be walked: see why */
};

struct py_interp {
	enum py_status status;
	char why[160];		/* NO_OFFSETS: the reason, for the report */
	char path[256];		/* the interpreter's file, as mapped */
	uint32_t version;	/* PY_VERSION_OF(); micro 0 when only the file name told */
	bool micro_known;	/* false: only the file name told */
	enum pyoffsets_source source;
	char offsets[64];	/* OK: the source as the report says it: "dwarf, table
				 * 3.11 agrees", "table 3.10 (checked)", ... */
	uint64_t runtime;	/* address of _PyRuntime in the process */
	uint64_t eval_start;	/* [start, end) of _PyEval_EvalFrameDefault */
	uint64_t eval_end;
	uint64_t eval_cold_start;	/* [start, end) of its split-off loop (pyeval.h); */
	uint64_t eval_cold_end;		/* both 0 when it has none */
	struct py_offsets off;
	struct py_types types;	/* where the type objects are in the process */
	/*
	 * NONE, but a python executable that links libpython is mapped and
	 * the loader has yet to map its libpython, or the table layout of an
	 * interpreter cannot be checked yet (no thread has run Python code):
	 * look again soon.
	 */
	bool pending;
};

struct py_finder;

/*
 * A finder that looks for separate debuginfo (by build-id) under each of
 * @debug_dirs, then /usr/lib/debug; the array is copied. NULL with errno set.
 */
struct py_finder *py_finder_new(const char *const *debug_dirs, size_t nr);
/* NULL is a no-op. */
void py_finder_free(struct py_finder *f);

/*
 * Look at @pid's mappings now and fill @out. Returns 0 (out->status says
 * what was found) or -errno: -ESRCH when the process is gone, -ENOMEM.
 * A file not seen before is read now if @wait, else by the finder's own
 * thread at idle priority: until it is done, out->status is PY_STATUS_NONE
 * and a later call finds it.
 */
int py_finder_find(struct py_finder *f, int pid, bool wait, struct py_interp *out);

/*
 * Inspect the interpreter file at @path now, in this thread (a command
 * about to be started), so that finding it in a process later is at once;
 * for an executable that links libpython, the libpython it will load.
 * Files not named like an interpreter are skipped. 0 or -errno.
 */
int py_finder_prepare(struct py_finder *f, const char *path);

/*
 * Where section @name (".AsyncioDebug") of a file @pid maps is in its
 * memory: the interpreter's files and those whose name contains
 * @file_part ("_asyncio": an extension module) are looked at. 0 with
 * *addr and *size, -ENOENT (not mapped, or mapped in no file that has
 * it), -ESRCH (the process is gone) or -errno.
 */
int py_find_section(int pid, const char *name, const char *file_part, uint64_t *addr,
		    uint64_t *size);

/* A py_read_fn over process @arg (a pid cast to a pointer), by process_vm_readv. */
int py_read_process(void *arg, uint64_t addr, void *buf, size_t len);

/* A py_readv_fn over process @arg: one process_vm_readv per IOV_MAX pieces. */
int py_readv_process(void *arg, const struct py_iov *iov, size_t n);

#endif
