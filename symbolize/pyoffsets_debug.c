// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython offsets from _Py_DebugOffsets: from 3.13 the interpreter keeps, at
 * the start of _PyRuntime, a table of the offsets out-of-process tools need
 * (Include/internal/pycore_runtime.h). Its layout is fixed within a minor
 * version only, so the reader below is the 3.13 layout and is used for 3.13
 * only; the cookie and the version it carries must match the interpreter's.
 */
#include "symbolize/pyoffsets.h"

#include <errno.h>
#include <string.h>

/* The 3.13 layout: groups of uint64_t, each group starting with its struct's size. */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version;	/* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict,
			builtins, ceval_gil, gil_runtime_state, gil_enabled, gil_locked,
			gil_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id,
			native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};

_Static_assert(sizeof(struct debug_offsets_313) == 584, "3.13 _Py_DebugOffsets is 584 bytes");

#define DEBUG_COOKIE "xdebugpy"
/* No member of these structs lies further in; larger is garbage. */
#define OFFSET_MAX 65536

/*
 * PyCompactUnicodeObject is PyASCIIObject followed by utf8_length and utf8
 * in 3.13; _Py_DebugOffsets gives only the first size.
 */
#define COMPACT_EXTRA (sizeof(int64_t) + sizeof(void *))

static int put(int32_t *dst, uint64_t v)
{
	if (v >= OFFSET_MAX)
		return -EINVAL;
	*dst = (int32_t)v;
	return 0;
}

int pyoffsets_from_debug(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			 struct py_offsets *o)
{
	struct debug_offsets_313 d;
	struct py_offsets r;
	int err = 0;

	if (PY_MM(version) != PY_VERSION_OF(3, 13, 0))
		return -ENOTSUP;
	err = read(arg, runtime, &d, sizeof(d));
	if (err)
		return err;
	if (memcmp(d.cookie, DEBUG_COOKIE, sizeof(d.cookie)) ||
	    (d.version & 0xffff0000u) != PY_MM(version) || d.version >> 32)
		return -EINVAL;
	/* the free-threaded build's structs differ from the ones the walk reads */
	if (d.free_threaded)
		return -ENOTSUP;
	memset(&r, 0xff, sizeof(r));
	r.version = version;
	err |= put(&r.object_type, d.pyobject.ob_type);
	err |= put(&r.runtime_interp_head, d.runtime_state.interpreters_head);
	err |= put(&r.interp_threads_head, d.interpreter_state.threads_head);
	err |= put(&r.tstate_next, d.thread_state.next);
	err |= put(&r.tstate_interp, d.thread_state.interp);
	err |= put(&r.tstate_thread_id, d.thread_state.thread_id);
	err |= put(&r.tstate_native_thread_id, d.thread_state.native_thread_id);
	err |= put(&r.tstate_frame, d.thread_state.current_frame);
	err |= put(&r.frame_back, d.interpreter_frame.previous);
	err |= put(&r.frame_code, d.interpreter_frame.executable);
	err |= put(&r.frame_instr, d.interpreter_frame.instr_ptr);
	err |= put(&r.frame_owner, d.interpreter_frame.owner);
	err |= put(&r.code_name, d.code_object.name);
	err |= put(&r.code_qualname, d.code_object.qualname);
	err |= put(&r.code_filename, d.code_object.filename);
	err |= put(&r.code_firstlineno, d.code_object.firstlineno);
	err |= put(&r.code_linetable, d.code_object.linetable);
	err |= put(&r.code_adaptive, d.code_object.co_code_adaptive);
	err |= put(&r.bytes_size, d.bytes_object.ob_size);
	err |= put(&r.bytes_sval, d.bytes_object.ob_sval);
	err |= put(&r.unicode_length, d.unicode_object.length);
	err |= put(&r.unicode_state, d.unicode_object.state);
	err |= put(&r.unicode_ascii_size, d.unicode_object.asciiobject_size);
	err |= put(&r.unicode_compact_size, d.unicode_object.asciiobject_size + COMPACT_EXTRA);
	if (err)
		return -EINVAL;
	*o = r;
	return 0;
}
