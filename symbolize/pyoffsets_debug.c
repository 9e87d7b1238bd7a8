// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython offsets from _Py_DebugOffsets: from 3.13 the interpreter keeps, at
 * the start of _PyRuntime, a table of the offsets out-of-process tools need.
 * Its layout is fixed within a minor version only (3.14 and 3.15 each added
 * members in the middle of its sections), so there is one reader per minor
 * version, each a copy of that version's header, and a version without one
 * is refused rather than read with a neighbour's layout. The cookie and the
 * version the structure carries must match the interpreter's, and every
 * offset used must lie inside the size its section gives for its struct.
 */
#include "symbolize/pyoffsets.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * 3.13: Include/internal/pycore_runtime.h of 3.13.0 to 3.13.15 (Debian's
 * libpython3.13-dev 3.13.15-1 and pyenv's 3.13.0 agree): groups of
 * uint64_t, each group starting with its struct's size.
 */
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

/*
 * 3.14: Include/internal/pycore_debug_offsets.h of Debian's
 * libpython3.14-dev 3.14.8-1. New against 3.13: interpreter_state's
 * threads_main, code_object_generation and tlbc_generation, the frame's
 * stackpointer and tlbc_index, co_tlbc, the set_object section; gen_object,
 * llist_node and debugger_support at the end (not copied: nothing here
 * reads them).
 */
struct debug_offsets_314 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules,
			sysdict, builtins, ceval_gil, gil_runtime_state, gil_enabled,
			gil_locked, gil_holder, code_object_generation, tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id,
			native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner,
			stackpointer, tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive, co_tlbc;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, used, table, mask; } set_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};

_Static_assert(sizeof(struct debug_offsets_314) == 664,
	       "3.14 _Py_DebugOffsets up to gc is 664 bytes");

/*
 * 3.15: Include/internal/pycore_debug_offsets.h of Debian's
 * libpython3.15-dev 3.15.0-1. New against 3.14: thread_state's base_frame,
 * last_profiled_frame(_seq), holds_gil, gil_requested, current_exception
 * and exc_state, an err_stackitem section, type_object's tp_basicsize and
 * tp_dictoffset, a heap_type_object section, unicode_object's
 * compactunicodeobject_size (sizeof(PyCompactUnicodeObject), which 3.13
 * and 3.14 leave to the reader), three gc members. Copied up to
 * unicode_object: gc and what follows are not read here.
 */
struct debug_offsets_315 {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules,
			sysdict, builtins, ceval_gil, gil_runtime_state, gil_enabled,
			gil_locked, gil_holder, code_object_generation, tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, base_frame,
			last_profiled_frame, last_profiled_frame_seq, thread_id,
			native_thread_id, datastack_chunk, status, holds_gil, gil_requested,
			current_exception, exc_state;
	} thread_state;
	struct { uint64_t exc_value; } err_stackitem;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner,
			stackpointer, tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive, co_tlbc;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags, tp_basicsize, tp_dictoffset;
	} type_object;
	struct { uint64_t size, ht_cached_keys; } heap_type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, used, table, mask; } set_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size, compactunicodeobject_size;
	} unicode_object;
};

_Static_assert(sizeof(struct debug_offsets_315) == 752,
	       "3.15 _Py_DebugOffsets up to unicode_object is 752 bytes");

/* The first three members, the same in every version. */
struct debug_offsets_header {
	char cookie[8];
	uint64_t version;
	uint64_t free_threaded;
};

#define DEBUG_COOKIE "xdebugpy"
/* No member of these structs lies further in; larger is garbage. */
#define OFFSET_MAX 65536

/*
 * PyCompactUnicodeObject is PyASCIIObject followed by utf8_length and utf8
 * (Include/cpython/unicodeobject.h, 3.13 and 3.14); their _Py_DebugOffsets
 * give only the first size.
 */
#define COMPACT_EXTRA (sizeof(int64_t) + sizeof(void *))

/* What the readers of every version take from their structure. */
struct debug_fields {
	uint64_t runtime_size, interpreters_head;
	uint64_t interp_size, threads_head, ceval_gil, gil_state, gil_locked, gil_holder;
	uint64_t tstate_size, next, interp, current_frame, thread_id, native_thread_id;
	uint64_t frame_size, previous, executable, instr_ptr, owner;
	uint64_t code_size, filename, name, qualname, linetable, firstlineno, adaptive;
	uint64_t object_size, ob_type;
	uint64_t bytes_size, ob_size, ob_sval;
	uint64_t unicode_size, state, length, ascii_size, compact_size;
};

/* The members every version names alike. */
#define DEBUG_FIELDS_COMMON(f, d)						\
	do {									\
		(f)->runtime_size = (d)->runtime_state.size;			\
		(f)->interpreters_head = (d)->runtime_state.interpreters_head;	\
		(f)->interp_size = (d)->interpreter_state.size;			\
		(f)->threads_head = (d)->interpreter_state.threads_head;	\
		(f)->ceval_gil = (d)->interpreter_state.ceval_gil;		\
		(f)->gil_state = (d)->interpreter_state.gil_runtime_state;	\
		(f)->gil_locked = (d)->interpreter_state.gil_locked;		\
		(f)->gil_holder = (d)->interpreter_state.gil_holder;		\
		(f)->tstate_size = (d)->thread_state.size;			\
		(f)->next = (d)->thread_state.next;				\
		(f)->interp = (d)->thread_state.interp;				\
		(f)->current_frame = (d)->thread_state.current_frame;		\
		(f)->thread_id = (d)->thread_state.thread_id;			\
		(f)->native_thread_id = (d)->thread_state.native_thread_id;	\
		(f)->frame_size = (d)->interpreter_frame.size;			\
		(f)->previous = (d)->interpreter_frame.previous;		\
		(f)->executable = (d)->interpreter_frame.executable;		\
		(f)->instr_ptr = (d)->interpreter_frame.instr_ptr;		\
		(f)->owner = (d)->interpreter_frame.owner;			\
		(f)->code_size = (d)->code_object.size;				\
		(f)->filename = (d)->code_object.filename;			\
		(f)->name = (d)->code_object.name;				\
		(f)->qualname = (d)->code_object.qualname;			\
		(f)->linetable = (d)->code_object.linetable;			\
		(f)->firstlineno = (d)->code_object.firstlineno;		\
		(f)->adaptive = (d)->code_object.co_code_adaptive;		\
		(f)->object_size = (d)->pyobject.size;				\
		(f)->ob_type = (d)->pyobject.ob_type;				\
		(f)->bytes_size = (d)->bytes_object.size;			\
		(f)->ob_size = (d)->bytes_object.ob_size;			\
		(f)->ob_sval = (d)->bytes_object.ob_sval;			\
		(f)->unicode_size = (d)->unicode_object.size;			\
		(f)->state = (d)->unicode_object.state;				\
		(f)->length = (d)->unicode_object.length;			\
		(f)->ascii_size = (d)->unicode_object.asciiobject_size;		\
	} while (0)

/* The structure of minor version @minor at @runtime, into @f. */
static int read_fields(py_read_fn read, void *arg, uint64_t runtime, unsigned int minor,
		       struct debug_fields *f)
{
	union {
		struct debug_offsets_313 v13;
		struct debug_offsets_314 v14;
		struct debug_offsets_315 v15;
	} d;
	int err;

	switch (minor) {
	case 13:
		err = read(arg, runtime, &d.v13, sizeof(d.v13));
		if (!err) {
			DEBUG_FIELDS_COMMON(f, &d.v13);
			f->compact_size = f->ascii_size + COMPACT_EXTRA;
		}
		return err;
	case 14:
		err = read(arg, runtime, &d.v14, sizeof(d.v14));
		if (!err) {
			DEBUG_FIELDS_COMMON(f, &d.v14);
			f->compact_size = f->ascii_size + COMPACT_EXTRA;
		}
		return err;
	case 15:
		err = read(arg, runtime, &d.v15, sizeof(d.v15));
		if (!err) {
			DEBUG_FIELDS_COMMON(f, &d.v15);
			f->compact_size = d.v15.unicode_object.compactunicodeobject_size;
		}
		return err;
	default:
		return -ENOTSUP;
	}
}

/*
 * @v, a member offset of a struct of @size bytes, into @dst: the member must
 * start inside the struct (a layout read wrongly gives sizes and offsets
 * that do not fit each other).
 */
static int put(int32_t *dst, uint64_t v, uint64_t size)
{
	if (v >= OFFSET_MAX || v >= size)
		return -EINVAL;
	*dst = (int32_t)v;
	return 0;
}

/* A size (of PyASCIIObject, PyCompactUnicodeObject), within the object's. */
static int put_size(int32_t *dst, uint64_t v, uint64_t object_size)
{
	if (!v || v > object_size)
		return -EINVAL;
	*dst = (int32_t)v;
	return 0;
}

/*
 * struct _gil_runtime_state of a default (GIL) build of 3.13 to 3.15 on
 * Linux, where PyCOND_T and PyMUTEX_T are pthread's
 * (Include/internal/pycore_gil.h, the same in the three, FORCE_SWITCHING
 * always defined): _Py_DebugOffsets gives where it is and the offsets of
 * locked and last_holder, not its size, which the futexes of its condition
 * variables and mutexes need. Used only when the offsets it gives agree
 * with this copy.
 */
struct gil_runtime_state {
	unsigned long interval;
	void *last_holder;
	int locked;
	unsigned long switch_number;
	pthread_cond_t cond;
	pthread_mutex_t mutex;
	pthread_cond_t switch_cond;
	pthread_mutex_t switch_mutex;
};

/*
 * The GIL's offsets into @r: interp_gil, the pointer ceval.gil, and the
 * layout of the struct it points to, when the interpreter's own GIL
 * (_gil) is laid out as struct gil_runtime_state; else they stay -1 (no
 * GIL waits, frames are walked all the same).
 */
static void gil_from_fields(const struct debug_fields *f, struct py_offsets *r)
{
	if (f->ceval_gil >= OFFSET_MAX || f->ceval_gil + 8 > f->interp_size ||
	    f->gil_state >= OFFSET_MAX ||
	    f->gil_state + sizeof(struct gil_runtime_state) > f->interp_size ||
	    f->gil_locked != f->gil_state + offsetof(struct gil_runtime_state, locked) ||
	    f->gil_holder != f->gil_state + offsetof(struct gil_runtime_state, last_holder))
		return;
	r->interp_gil = (int32_t)f->ceval_gil;
	r->gil_size = sizeof(struct gil_runtime_state);
	r->gil_locked = offsetof(struct gil_runtime_state, locked);
	r->gil_holder = offsetof(struct gil_runtime_state, last_holder);
}

static int offsets_from_fields(const struct debug_fields *f, uint32_t version,
			       struct py_offsets *o)
{
	struct py_offsets r;
	int err = 0;

	memset(&r, 0xff, sizeof(r));
	r.version = version;
	err |= put(&r.object_type, f->ob_type, f->object_size);
	err |= put(&r.runtime_interp_head, f->interpreters_head, f->runtime_size);
	err |= put(&r.interp_threads_head, f->threads_head, f->interp_size);
	err |= put(&r.tstate_next, f->next, f->tstate_size);
	err |= put(&r.tstate_interp, f->interp, f->tstate_size);
	err |= put(&r.tstate_thread_id, f->thread_id, f->tstate_size);
	err |= put(&r.tstate_native_thread_id, f->native_thread_id, f->tstate_size);
	err |= put(&r.tstate_frame, f->current_frame, f->tstate_size);
	err |= put(&r.frame_back, f->previous, f->frame_size);
	err |= put(&r.frame_code, f->executable, f->frame_size);
	err |= put(&r.frame_instr, f->instr_ptr, f->frame_size);
	err |= put(&r.frame_owner, f->owner, f->frame_size);
	err |= put(&r.code_name, f->name, f->code_size);
	err |= put(&r.code_qualname, f->qualname, f->code_size);
	err |= put(&r.code_filename, f->filename, f->code_size);
	err |= put(&r.code_firstlineno, f->firstlineno, f->code_size);
	err |= put(&r.code_linetable, f->linetable, f->code_size);
	err |= put(&r.code_adaptive, f->adaptive, f->code_size);
	err |= put(&r.bytes_size, f->ob_size, f->bytes_size);
	err |= put(&r.bytes_sval, f->ob_sval, f->bytes_size);
	err |= put(&r.unicode_length, f->length, f->unicode_size);
	err |= put(&r.unicode_state, f->state, f->unicode_size);
	err |= put_size(&r.unicode_ascii_size, f->ascii_size, f->unicode_size);
	err |= put_size(&r.unicode_compact_size, f->compact_size, f->unicode_size);
	if (err || r.unicode_compact_size < r.unicode_ascii_size)
		return -EINVAL;
	gil_from_fields(f, &r);
	*o = r;
	return 0;
}

int pyoffsets_debug_header(py_read_fn read, void *arg, uint64_t runtime, uint32_t *version,
			   bool *free_threaded)
{
	struct debug_offsets_header h;
	int err = read(arg, runtime, &h, sizeof(h));

	if (err)
		return err;
	if (memcmp(h.cookie, DEBUG_COOKIE, sizeof(h.cookie)) || h.version >> 32 ||
	    h.free_threaded > 1)
		return -EINVAL;
	*version = (uint32_t)h.version & 0xffffff00u;
	*free_threaded = h.free_threaded;
	return 0;
}

/*
 * Does the _Py_DebugOffsets at @runtime carry @version, of minor version
 * @first or later, in a build whose structs the readers know? 0, -ENOTSUP,
 * -EINVAL (another version, no cookie), -EPROTONOSUPPORT (free-threaded),
 * or the read's -errno.
 */
static int debug_header_check(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			      unsigned int first)
{
	uint32_t carried;
	bool free_threaded;
	int err;

	if (PY_MM(version) < PY_VERSION_OF(3, first, 0) || PY_MM(version) > PY_MM(PY_VERSION_MAX))
		return -ENOTSUP;
	err = pyoffsets_debug_header(read, arg, runtime, &carried, &free_threaded);
	if (err)
		return err;
	if (PY_MM(carried) != PY_MM(version))
		return -EINVAL;
	/*
	 * The free-threaded build's structs differ from the ones the walk and
	 * the code object reader know (PyObject's ob_type, the unicode state's
	 * interned byte, instructions in per-thread copies of the bytecode).
	 */
	return free_threaded ? -EPROTONOSUPPORT : 0;
}

int pyoffsets_from_debug(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			 struct py_offsets *o)
{
	struct debug_fields f;
	int err = debug_header_check(read, arg, runtime, version, 13);

	if (err)
		return err;
	err = read_fields(read, arg, runtime, PY_MINOR(version), &f);
	if (err)
		return err;
	return offsets_from_fields(&f, version, o);
}

/*
 * gen_object, which 3.14 and 3.15 keep right after their gc section (not
 * in the structs above): 3.14's gc is the last member copied there, 3.15's
 * follows unicode_object with five members.
 */
struct debug_gen_object {
	uint64_t size, gi_name, gi_iframe, gi_frame_state;
};

int pyoffsets_gen_from_debug(py_read_fn read, void *arg, uint64_t runtime, uint32_t version,
			     struct py_gen_offsets *g)
{
	union {
		struct debug_offsets_314 v14;
		struct debug_offsets_315 v15;
	} d;
	struct debug_gen_object gen;
	uint64_t at, frame_size, stackpointer, type_size, tp_flags, long_size, lv_tag, ob_digit;
	uint64_t interp_size, interp_next;
	struct py_gen_offsets r;
	int err = debug_header_check(read, arg, runtime, version, 14);

	if (err)
		return err;
	if (PY_MINOR(version) == 14) {
		err = read(arg, runtime, &d.v14, sizeof(d.v14));
		at = sizeof(d.v14);
		frame_size = d.v14.interpreter_frame.size;
		stackpointer = d.v14.interpreter_frame.stackpointer;
		type_size = d.v14.type_object.size;
		tp_flags = d.v14.type_object.tp_flags;
		long_size = d.v14.long_object.size;
		lv_tag = d.v14.long_object.lv_tag;
		ob_digit = d.v14.long_object.ob_digit;
		interp_size = d.v14.interpreter_state.size;
		interp_next = d.v14.interpreter_state.next;
	} else {
		err = read(arg, runtime, &d.v15, sizeof(d.v15));
		at = sizeof(d.v15) + 5 * sizeof(uint64_t);
		frame_size = d.v15.interpreter_frame.size;
		stackpointer = d.v15.interpreter_frame.stackpointer;
		type_size = d.v15.type_object.size;
		tp_flags = d.v15.type_object.tp_flags;
		long_size = d.v15.long_object.size;
		lv_tag = d.v15.long_object.lv_tag;
		ob_digit = d.v15.long_object.ob_digit;
		interp_size = d.v15.interpreter_state.size;
		interp_next = d.v15.interpreter_state.next;
	}
	if (!err)
		err = read(arg, runtime + at, &gen, sizeof(gen));
	if (err)
		return err;
	memset(&r, 0xff, sizeof(r));
	if (gen.size >= OFFSET_MAX || frame_size >= OFFSET_MAX)
		return -EINVAL;
	r.gen_size = (int32_t)gen.size;
	r.frame_size = (int32_t)frame_size;
	err |= put(&r.gen_iframe, gen.gi_iframe, gen.size);
	err |= put(&r.gen_frame_state, gen.gi_frame_state, gen.size);
	err |= put(&r.frame_stackpointer, stackpointer, frame_size);
	err |= put(&r.type_flags, tp_flags, type_size);
	err |= put(&r.long_tag, lv_tag, long_size);
	err |= put(&r.long_digit, ob_digit, long_size);
	err |= interp_size > (4 << 20) || interp_next >= interp_size;
	r.interp_next = (int32_t)interp_next;
	/* the frame is embedded in the generator: it must fit there */
	if (err || (uint64_t)r.gen_iframe + frame_size > gen.size)
		return -EINVAL;
	*g = r;
	return 0;
}
