// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython struct offsets from the interpreter's own DWARF. The structs
 * (PyThreadState is "struct _ts", _PyRuntimeState "struct pyruntimestate",
 * ...) are found by their tag or typedef name among the top-level entries of
 * every unit, partial units of a dwz-compressed file and its alternate file
 * included; a member path such as "interpreters.head" is followed through the
 * member types. gcc emits a type only in units that use it, so internal
 * structs (_PyInterpreterFrame) are found in some units only: the scan goes
 * on until every wanted type has a complete definition.
 */
#include "symbolize/pyoffsets.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "src/lib/util.h"

#define V(minor) PY_VERSION_OF(3, minor, 0)
#define F(field) offsetof(struct py_offsets, field)

/* One offset: member @path of type @type (tag or typedef), in versions from..to. */
struct pyfield {
	const char *type;
	const char *path;	/* NULL: the size of the type */
	size_t field;		/* offset of the int32_t in struct py_offsets */
	uint32_t from, to;	/* major.minor range, inclusive */
	bool optional;		/* missing: -1, the others still used */
};

/*
 * The names are the same from 3.13 to 3.15: 3.14's and 3.15's were checked
 * against the DWARF of Debian's python3.14-dbg (3.14.8) and python3.15-dbg
 * (3.15.0), which give the offsets their _Py_DebugOffsets give.
 */
static const struct pyfield pyfields[] = {
	{ "_object", "ob_type", F(object_type), V(8), V(15) },
	{ "pyruntimestate", "interpreters.head", F(runtime_interp_head), V(8), V(15) },
	{ "pyruntimestate", "initialized", F(runtime_initialized), V(8), V(15) },
	{ "_is", "tstate_head", F(interp_threads_head), V(8), V(10) },
	{ "_is", "threads.head", F(interp_threads_head), V(11), V(15) },
	{ "_ts", "next", F(tstate_next), V(8), V(15) },
	{ "_ts", "interp", F(tstate_interp), V(8), V(15) },
	{ "_ts", "thread_id", F(tstate_thread_id), V(8), V(15) },
	{ "_ts", "native_thread_id", F(tstate_native_thread_id), V(11), V(15) },
	{ "_ts", "frame", F(tstate_frame), V(8), V(10) },
	{ "_ts", "cframe", F(tstate_cframe), V(11), V(12) },
	{ "_PyCFrame", "current_frame", F(cframe_current_frame), V(11), V(12) },
	{ "_ts", "current_frame", F(tstate_frame), V(13), V(15) },
	{ "_frame", "f_back", F(frame_back), V(8), V(10) },
	{ "_frame", "f_code", F(frame_code), V(8), V(10) },
	{ "_frame", "f_lasti", F(frame_instr), V(8), V(10) },
	{ "_PyInterpreterFrame", "previous", F(frame_back), V(11), V(15) },
	{ "_PyInterpreterFrame", "f_code", F(frame_code), V(11), V(12) },
	{ "_PyInterpreterFrame", "f_executable", F(frame_code), V(13), V(15) },
	{ "_PyInterpreterFrame", "prev_instr", F(frame_instr), V(11), V(12) },
	{ "_PyInterpreterFrame", "instr_ptr", F(frame_instr), V(13), V(15) },
	{ "_PyInterpreterFrame", "is_entry", F(frame_is_entry), V(11), V(11) },
	{ "_PyInterpreterFrame", "owner", F(frame_owner), V(12), V(15) },
	{ "PyCodeObject", "co_name", F(code_name), V(8), V(15) },
	{ "PyCodeObject", "co_qualname", F(code_qualname), V(11), V(15) },
	{ "PyCodeObject", "co_filename", F(code_filename), V(8), V(15) },
	{ "PyCodeObject", "co_firstlineno", F(code_firstlineno), V(8), V(15) },
	{ "PyCodeObject", "co_lnotab", F(code_linetable), V(8), V(9) },
	{ "PyCodeObject", "co_linetable", F(code_linetable), V(10), V(15) },
	{ "PyCodeObject", "co_code_adaptive", F(code_adaptive), V(11), V(15) },
	{ "PyBytesObject", "ob_base.ob_size", F(bytes_size), V(8), V(15) },
	{ "PyBytesObject", "ob_sval", F(bytes_sval), V(8), V(15) },
	{ "PyASCIIObject", "length", F(unicode_length), V(8), V(15) },
	{ "PyASCIIObject", "state", F(unicode_state), V(8), V(15) },
	{ "PyASCIIObject", NULL, F(unicode_ascii_size), V(8), V(15) },
	{ "PyCompactUnicodeObject", NULL, F(unicode_compact_size), V(8), V(15) },
	/* the GIL: only GIL waits need it, so DWARF without it still walks frames */
	{ "pyruntimestate", "ceval.gil", F(runtime_gil), V(8), V(11), true },
	{ "_is", "ceval.gil", F(interp_gil), V(12), V(15), true },
	{ "_gil_runtime_state", NULL, F(gil_size), V(8), V(15), true },
	{ "_gil_runtime_state", "locked", F(gil_locked), V(8), V(15), true },
	{ "_gil_runtime_state", "last_holder", F(gil_holder), V(8), V(15), true },
};

#define NR_TYPES 12

/* The wanted types and the complete definition found for each. */
struct typescan {
	const char *names[NR_TYPES];
	Dwarf_Die dies[NR_TYPES];
	bool found[NR_TYPES];
	size_t nr, nr_found;
};

static bool pyfield_applies(const struct pyfield *f, uint32_t version)
{
	return PY_MM(version) >= f->from && PY_MM(version) <= f->to;
}

/* Strip typedefs and qualifiers; false when @die has no type to follow. */
static bool die_strip(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	int i;

	for (i = 0; i < 16; i++) {
		switch (dwarf_tag(die)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_atomic_type:
			if (!dwarf_attr_integrate(die, DW_AT_type, &attr) ||
			    !dwarf_formref_die(&attr, die))
				return false;
			break;
		default:
			return true;
		}
	}
	return false;
}

/* A complete struct definition, or a typedef of one. */
static bool die_is_definition(Dwarf_Die *die)
{
	Dwarf_Die t = *die;

	if (!die_strip(&t) || dwarf_tag(&t) != DW_TAG_structure_type)
		return false;
	return !dwarf_hasattr_integrate(&t, DW_AT_declaration) && dwarf_haschildren(&t);
}

static void scan_unit_die(struct typescan *ts, Dwarf_Die *cudie)
{
	Dwarf_Die child;
	const char *name;
	size_t i;
	int tag;

	if (dwarf_child(cudie, &child))
		return;
	do {
		tag = dwarf_tag(&child);
		if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
			continue;
		name = dwarf_diename(&child);
		if (!name)
			continue;
		for (i = 0; i < ts->nr; i++) {
			if (ts->found[i] || strcmp(name, ts->names[i]) || !die_is_definition(&child))
				continue;
			ts->dies[i] = child;
			ts->found[i] = true;
			ts->nr_found++;
		}
	} while (ts->nr_found < ts->nr && !dwarf_siblingof(&child, &child));
}

static void scan_dwarf(struct typescan *ts, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;

	while (ts->nr_found < ts->nr &&
	       !dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie)) {
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			scan_unit_die(ts, &subdie);
		else
			scan_unit_die(ts, &cudie);
	}
}

/* The byte offset of member path @path ("a.b") in struct @die; -1 if absent. */
static int64_t member_offset(Dwarf_Die die, const char *path)
{
	int64_t total = 0;

	while (*path) {
		size_t len = strcspn(path, ".");
		Dwarf_Attribute attr;
		Dwarf_Word off;
		Dwarf_Die m;
		bool found = false;

		if (!die_strip(&die) || dwarf_tag(&die) != DW_TAG_structure_type ||
		    dwarf_child(&die, &m))
			return -1;
		do {
			const char *n = dwarf_diename(&m);

			if (dwarf_tag(&m) == DW_TAG_member && n && strlen(n) == len &&
			    !strncmp(n, path, len)) {
				found = true;
				break;
			}
		} while (!dwarf_siblingof(&m, &m));
		if (!found || !dwarf_attr_integrate(&m, DW_AT_data_member_location, &attr) ||
		    dwarf_formudata(&attr, &off))
			return -1;
		total += off;
		path += len;
		if (*path == '.') {
			path++;
			if (!dwarf_attr_integrate(&m, DW_AT_type, &attr) ||
			    !dwarf_formref_die(&attr, &die))
				return -1;
		}
	}
	return total;
}

static int64_t type_size(Dwarf_Die die)
{
	if (!die_strip(&die))
		return -1;
	return dwarf_bytesize(&die);
}

static void offsets_clear(struct py_offsets *o, uint32_t version)
{
	int32_t *f = (int32_t *)((char *)o + F(object_type));
	size_t i, n = (sizeof(*o) - F(object_type)) / sizeof(*f);

	for (i = 0; i < n; i++)
		f[i] = -1;
	o->version = version;
}

int pyoffsets_from_dwarf(Dwarf *dw, uint32_t version, struct py_offsets *o,
			 const char **missing)
{
	struct typescan ts = { .nr = 0 };
	Dwarf *alt;
	size_t i, j;

	*missing = NULL;
	if (version < PY_VERSION_MIN || PY_MM(version) > PY_MM(PY_VERSION_MAX))
		return -ENOTSUP;
	for (i = 0; i < ARRAY_SIZE(pyfields); i++) {
		if (!pyfield_applies(&pyfields[i], version))
			continue;
		for (j = 0; j < ts.nr && strcmp(ts.names[j], pyfields[i].type); j++)
			;
		if (j == ts.nr && ts.nr < NR_TYPES)
			ts.names[ts.nr++] = pyfields[i].type;
	}
	/* dwz moves the types shared by units into the alternate file: look there first */
	alt = dwarf_getalt(dw);
	if (alt)
		scan_dwarf(&ts, alt);
	scan_dwarf(&ts, dw);
	offsets_clear(o, version);
	for (i = 0; i < ARRAY_SIZE(pyfields); i++) {
		const struct pyfield *f = &pyfields[i];
		int64_t v = -1;

		if (!pyfield_applies(f, version))
			continue;
		for (j = 0; j < ts.nr && strcmp(ts.names[j], f->type); j++)
			;
		if (j < ts.nr && ts.found[j])
			v = f->path ? member_offset(ts.dies[j], f->path) : type_size(ts.dies[j]);
		if ((v < 0 || v > INT32_MAX) && f->optional)
			continue;
		if (v < 0 || v > INT32_MAX) {
			*missing = f->path ? f->path : f->type;
			return -ENOENT;
		}
		*(int32_t *)((char *)o + f->field) = (int32_t)v;
	}
	return 0;
}

const char *pyoffsets_source_name(enum pyoffsets_source s)
{
	switch (s) {
	case PYOFFSETS_DWARF:
		return "dwarf";
	case PYOFFSETS_DEBUG_OFFSETS:
		return "debug_offsets";
	case PYOFFSETS_TABLE:
		return "table";
	default:
		return "none";
	}
}
