// SPDX-License-Identifier: GPL-2.0-only
/*
 * The last source of CPython offsets: a table generated from releases'
 * headers by symbolize/pyoffsets_gen.sh, one entry per minor version (and
 * an exception entry from the micro release that changed a layout, when the
 * script was given releases that differ). A table layout is the layout of
 * the releases it was made from, assumed for the others of that minor:
 * symbolize/pycheck.c checks it against the process before it is used.
 */
#include "symbolize/pyoffsets.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "src/lib/util.h"

static const struct py_offsets pyoffsets_table[] = {
#include "symbolize/pyoffsets_table.h"
};

#define F(name) { #name, offsetof(struct py_offsets, name) }
static const struct {
	const char *name;
	size_t off;
} pyoffsets_fields[] = {
	F(object_type), F(runtime_interp_head), F(runtime_initialized),
	F(interp_threads_head), F(tstate_next),
	F(tstate_interp), F(tstate_thread_id), F(tstate_native_thread_id), F(tstate_frame),
	F(tstate_cframe), F(cframe_current_frame), F(frame_back), F(frame_code), F(frame_instr),
	F(frame_is_entry), F(frame_owner), F(code_name), F(code_qualname), F(code_filename),
	F(code_firstlineno), F(code_linetable), F(code_adaptive), F(bytes_size), F(bytes_sval),
	F(unicode_length), F(unicode_state), F(unicode_ascii_size), F(unicode_compact_size),
	F(runtime_gil), F(interp_gil), F(gil_size), F(gil_locked), F(gil_holder),
};

_Static_assert(ARRAY_SIZE(pyoffsets_fields) * sizeof(int32_t) ==
		       sizeof(struct py_offsets) - offsetof(struct py_offsets, object_type),
	       "every offset of struct py_offsets is named in pyoffsets_fields");

int pyoffsets_from_table(uint32_t version, bool micro_known, struct py_offsets *o)
{
	const struct py_offsets *best = NULL;
	size_t i, nr = 0;

	for (i = 0; i < ARRAY_SIZE(pyoffsets_table); i++) {
		const struct py_offsets *t = &pyoffsets_table[i];

		if (PY_MM(t->version) != PY_MM(version))
			continue;
		nr++;
		/*
		 * The entry of the latest exception at or before the micro; a
		 * micro older than every entry gets the oldest (entries are
		 * sorted by version).
		 */
		if (!best || t->version <= (version & 0xffffff00u))
			best = t;
	}
	if (!best)
		return -ENOENT;
	if (!micro_known && nr > 1)
		return -ERANGE;
	*o = *best;
	o->version = version & 0xffffff00u;
	return 0;
}

const struct py_offsets *pyoffsets_table_entry(size_t i)
{
	return i < ARRAY_SIZE(pyoffsets_table) ? &pyoffsets_table[i] : NULL;
}

const char *pyoffsets_diff(const struct py_offsets *a, const struct py_offsets *b)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pyoffsets_fields); i++) {
		int32_t x, y;

		memcpy(&x, (const char *)a + pyoffsets_fields[i].off, sizeof(x));
		memcpy(&y, (const char *)b + pyoffsets_fields[i].off, sizeof(y));
		if (x != y)
			return pyoffsets_fields[i].name;
	}
	return NULL;
}
