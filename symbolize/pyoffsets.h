/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where CPython keeps what a stack walk needs: the byte offsets of the
 * interpreter's struct members, for one interpreter build, private to
 * symbolize/ and the record session. Three sources, tried in this order by
 * symbolize/python.c, and never a guess:
 *
 *   1. the interpreter's own DWARF (pyoffsets_from_dwarf), for any version;
 *   2. _Py_DebugOffsets at the start of _PyRuntime (3.13+), which CPython
 *      publishes for out-of-process tools (pyoffsets_from_debug);
 *   3. a table generated from CPython's headers by symbolize/pyoffsets_gen.sh,
 *      one layout per minor version (pyoffsets_from_table), which the
 *      caller checks against the process (symbolize/pycheck.h).
 *
 * An offset that a version does not have is -1. Versions are encoded like
 * PY_VERSION_HEX without the release level: major << 24 | minor << 16 |
 * micro << 8.
 */
#ifndef LATPROF_SYMBOLIZE_PYOFFSETS_H
#define LATPROF_SYMBOLIZE_PYOFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#define PY_VERSION_OF(major, minor, micro) \
	((uint32_t)(major) << 24 | (uint32_t)(minor) << 16 | (uint32_t)(micro) << 8)
#define PY_MAJOR(v) ((v) >> 24 & 0xff)
#define PY_MINOR(v) ((v) >> 16 & 0xff)
#define PY_MICRO(v) ((v) >> 8 & 0xff)
/* major.minor only, for comparisons: PY_MM(v) >= PY_MM(PY_VERSION_OF(3, 11, 0)) */
#define PY_MM(v) ((v) & 0xffff0000u)

/* The oldest and newest version whose frames latprof walks. */
#define PY_VERSION_MIN PY_VERSION_OF(3, 8, 0)
#define PY_VERSION_MAX PY_VERSION_OF(3, 15, 255)

/*
 * What to keep of a frame's code object reference: from 3.14,
 * _PyInterpreterFrame.f_executable is a _PyStackRef whose low Py_TAG_BITS
 * (3 in the default build, Include/internal/pycore_stackref.h of 3.14 and
 * 3.15) say how it is counted, and are no part of the address.
 */
static inline uint64_t py_code_ref_mask(uint32_t version)
{
	return PY_MM(version) >= PY_VERSION_OF(3, 14, 0) ? ~(uint64_t)3 : ~(uint64_t)0;
}

enum pyoffsets_source {
	PYOFFSETS_NONE,
	PYOFFSETS_DWARF,
	PYOFFSETS_DEBUG_OFFSETS,
	PYOFFSETS_TABLE,
};

struct py_offsets {
	uint32_t version;
	/* PyObject.ob_type (8, but 24 in a Py_TRACE_REFS build) */
	int32_t object_type;
	/* _PyRuntimeState.interpreters.head: the main interpreter */
	int32_t runtime_interp_head;
	/* _PyRuntimeState.initialized (int): Py_Initialize has finished */
	int32_t runtime_initialized;
	/* PyInterpreterState.threads.head (3.12+) or .tstate_head (<= 3.11) */
	int32_t interp_threads_head;
	/* PyThreadState */
	int32_t tstate_next;
	int32_t tstate_interp;		/* PyInterpreterState *interp: back to the list's owner */
	int32_t tstate_thread_id;	/* pthread_self() of the thread (unsigned long) */
	int32_t tstate_native_thread_id;	/* gettid() of the thread, 3.11+ */
	int32_t tstate_frame;		/* PyFrameObject *frame (<= 3.10),
					 * _PyInterpreterFrame *current_frame (3.13+) */
	int32_t tstate_cframe;		/* _PyCFrame *cframe (3.11, 3.12) */
	int32_t cframe_current_frame;	/* _PyCFrame.current_frame (3.11, 3.12) */
	/* the frame: PyFrameObject (<= 3.10) or _PyInterpreterFrame (3.11+) */
	int32_t frame_back;		/* f_back, previous */
	int32_t frame_code;		/* f_code, f_executable (3.13) */
	int32_t frame_instr;		/* int f_lasti (<= 3.10), _Py_CODEUNIT *prev_instr
					 * (3.11, 3.12), *instr_ptr (3.13) */
	int32_t frame_is_entry;		/* bool is_entry (3.11) */
	int32_t frame_owner;		/* char owner (3.12+; FRAME_OWNED_BY_CSTACK = 3) */
	/* PyCodeObject */
	int32_t code_name;		/* co_name (str) */
	int32_t code_qualname;		/* co_qualname (str), 3.11+ */
	int32_t code_filename;		/* co_filename (str) */
	int32_t code_firstlineno;	/* int co_firstlineno */
	int32_t code_linetable;		/* bytes: co_lnotab (3.8, 3.9), co_linetable (3.10+) */
	int32_t code_adaptive;		/* co_code_adaptive: the instructions (3.11+) */
	/* PyBytesObject and PyUnicodeObject */
	int32_t bytes_size;		/* ob_size of PyVarObject: the length */
	int32_t bytes_sval;		/* ob_sval: the bytes */
	int32_t unicode_length;		/* PyASCIIObject.length, in code points */
	int32_t unicode_state;		/* the state bit field: interned:2 kind:3
					 * compact:1 ascii:1 */
	int32_t unicode_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data */
	int32_t unicode_compact_size;	/* sizeof(PyCompactUnicodeObject): other data */
	/*
	 * The GIL, struct _gil_runtime_state (Include/internal/pycore_gil.h),
	 * for GIL waits: -1 where a source does not give it, which costs only
	 * that (the walk does not need it).
	 */
	int32_t runtime_gil;		/* _PyRuntimeState.ceval.gil: the struct (3.8-3.11) */
	int32_t interp_gil;		/* PyInterpreterState.ceval.gil: a pointer to it (3.12+) */
	int32_t gil_size;		/* sizeof(struct _gil_runtime_state) */
	int32_t gil_locked;		/* its int locked (-1 until the GIL is made) */
	int32_t gil_holder;		/* its last_holder (PyThreadState *) */
};

/*
 * Reads @len bytes at @addr of the target's memory into @buf. Returns 0, or
 * -errno (a short read is an error: -EFAULT).
 */
typedef int (*py_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* One read of a batch: @len bytes at @addr of the target into @buf. */
struct py_iov {
	uint64_t addr;
	void *buf;
	size_t len;
};

/*
 * Reads @n pieces of the target's memory at once, in order, up to the first
 * that cannot be read whole. Returns how many were (0..@n), or -errno when
 * the read itself failed (-ESRCH: the process is gone).
 */
typedef int (*py_readv_fn)(void *arg, const struct py_iov *iov, size_t n);

/*
 * The offsets of @version from the DWARF @dw of its interpreter (the
 * executable or libpython, or their separate debuginfo), including the
 * partial units of a dwz-compressed file and its alternate file. Every field
 * the version needs must be found but the GIL's (-1 when missing): returns 0, -ENOENT when one is missing
 * (*missing names it, a static string), -ENOTSUP for a version outside
 * PY_VERSION_MIN..PY_VERSION_MAX.
 */
int pyoffsets_from_dwarf(Dwarf *dw, uint32_t version, struct py_offsets *o,
			 const char **missing);

/*
 * The offsets from the _Py_DebugOffsets that 3.13+ keeps at the start of
 * _PyRuntime (@runtime in the target, read through @read), with the
 * structure's layout of @version's minor (3.13, 3.14 and 3.15 differ).
 * Checks the structure's cookie and version against @version, and each
 * offset against its struct's size. 0, -ENOTSUP (a version before 3.13 or
 * after PY_VERSION_MAX), -EPROTONOSUPPORT (a free-threaded build, whose
 * structs the walk does not know), -EINVAL (no or wrong cookie/version,
 * offsets that do not fit), or the read's -errno. @o is untouched on error.
 */
int pyoffsets_from_debug(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			 struct py_offsets *o);

/*
 * The start of a _Py_DebugOffsets at @runtime, any version: the version it
 * carries (PY_VERSION_HEX without the release level) and whether the build
 * is free-threaded (Py_GIL_DISABLED). Works on a file's initialised
 * _PyRuntime as well as a process's. 0, -EINVAL (no cookie) or the read's
 * -errno.
 */
int pyoffsets_debug_header(py_read_fn read, void *arg, uint64_t runtime, uint32_t *version,
			   bool *free_threaded);

/*
 * What a walk of asyncio's suspended coroutines needs beyond struct
 * py_offsets (3.14+, from _Py_DebugOffsets only): a coroutine (PyGenObject
 * layout) embeds its frame at gen_iframe and keeps its state (int8_t) at
 * gen_frame_state; a suspended frame's value stack ends at its
 * stackpointer; a task's auto-numbered name is an int (PyLongObject).
 */
struct py_gen_offsets {
	int32_t gen_size;		/* sizeof(PyGenObject) */
	int32_t gen_iframe;		/* the embedded _PyInterpreterFrame */
	int32_t gen_frame_state;	/* int8_t gi_frame_state */
	int32_t frame_size;		/* sizeof(_PyInterpreterFrame) */
	int32_t frame_stackpointer;	/* _PyStackRef *stackpointer */
	int32_t type_flags;		/* PyTypeObject.tp_flags */
	int32_t long_tag;		/* PyLongObject: lv_tag (digits << 3 | sign) */
	int32_t long_digit;		/* ob_digit[0] (30-bit digits) */
	int32_t interp_next;		/* PyInterpreterState.next: the main one is last */
};

/*
 * The struct py_gen_offsets of a 3.14+ interpreter from the _Py_DebugOffsets
 * at @runtime, whatever gave its frame offsets (its DWARF too). 0, -ENOTSUP
 * (before 3.14), -EPROTONOSUPPORT (free-threaded), -EINVAL (wrong cookie or
 * version, offsets that do not fit), or the read's -errno.
 */
int pyoffsets_gen_from_debug(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			     struct py_gen_offsets *g);

/*
 * The offsets of a release build of @version from the generated table: the
 * entry of its minor version, or, when the table has exceptions for that
 * minor, the one for its micro release (o->version is @version). Without
 * @micro_known, only a minor without exceptions has an answer. 0, -ENOENT
 * (no entry for that minor), -ERANGE (the micro release is needed).
 */
int pyoffsets_from_table(uint32_t version, bool micro_known, struct py_offsets *o);

/* The name of the first offset that differs between @a and @b; NULL: none. */
const char *pyoffsets_diff(const struct py_offsets *a, const struct py_offsets *b);

/* Entry @i of the table, NULL past its end (for tests). */
const struct py_offsets *pyoffsets_table_entry(size_t i);

/* "dwarf", "debug_offsets", "table" or "none". Cannot fail. */
const char *pyoffsets_source_name(enum pyoffsets_source s);

#endif
