// SPDX-License-Identifier: GPL-2.0-only
/* The Python view of a stack: the interpreter's glue folded away (pyview.h). */
#include "src/pyview.h"

#include <string.h>

#include "src/syslib.h"
#include "src/lib/util.h"

enum pyview_kind {
	PYVIEW_KIND_OTHER,	/* a program's or an extension's frame, the kernel, unknown */
	PYVIEW_KIND_PYTHON,	/* a Python function (PROFILE_PYTHON_MAPPING) */
	PYVIEW_KIND_INTERP,	/* the interpreter's own code */
	PYVIEW_KIND_SYSLIB,	/* the C library and its kin (syslib_is) */
};

/*
 * CPython's call machinery, 3.8 to 3.13 (Objects/call.c, methodobject.c,
 * descrobject.c, classobject.c, typeobject.c's slots, ceval.c's entries):
 * the frames between a Python call and the C function it calls, which only
 * pass the call on. Every CPython names them so (they are in its exported
 * API or its static functions); a trailing '*' matches any rest. Compiler
 * clones (".constprop.0", ".cold") match their function.
 */
static const char *const dispatch_names[] = {
	"PyObject_Call*", "_PyObject_Call*", "PyObject_Vectorcall*", "_PyObject_Vectorcall*",
	"_PyObject_MakeTpCall", "_PyObject_FastCall*", "PyVectorcall_Call",
	"_PyVectorcall_Call", "object_vacall", "callmethod", "_PyFunction_Vectorcall",
	"_PyFunction_FastCall*", "function_code_fastcall", "PyEval_CallObjectWithKeywords",
	"_PyEval_Vector", "_PyEval_EvalFrame*", "_PyEval_EvalCode*", "PyEval_EvalCode*",
	"call_function", "do_call_core", "trace_call_function",
	"cfunction_call*", "cfunction_vectorcall*", "_PyCFunction_FastCall*",
	"PyCFunction_Call", "_PyMethodDef_Raw*", "method_vectorcall*", "method_call",
	"methoddescr_call", "classmethoddescr_call", "wrapperdescr_call", "wrapper_call",
	"slot_tp_*", "vectorcall_method", "vectorcall_unbound", "vectorcall_maybe",
	"call_method", "call_unbound*", "type_call",
};

static bool name_matches(const char *name, const char *pattern)
{
	size_t n = strlen(pattern);

	if (n && pattern[n - 1] == '*')
		return !strncmp(name, pattern, n - 1);
	return !strncmp(name, pattern, n) && (!name[n] || name[n] == '.');
}

static bool is_dispatch_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dispatch_names); i++)
		if (name_matches(name, dispatch_names[i]))
			return true;
	return false;
}

/* Is every function of location @l (its inline chain too) call dispatch? */
static bool is_dispatch(const struct profile *p, const struct profile_location *l)
{
	size_t i;

	for (i = 0; i < l->nr_lines; i++) {
		const struct profile_function *f = profile_function(p, l->lines[i].function_id);

		if (!f || !is_dispatch_name(f->name))
			return false;
	}
	return l->nr_lines > 0;
}

/*
 * A location the symbols did not name (a stripped interpreter's static
 * functions: "python3.15+0x5b8a35"): below the innermost Python frame it
 * can only be the interpreter passing the call on, or a function that
 * stays anonymous to the reader anyway.
 */
static bool is_anonymous(const struct profile *p, const struct profile_location *l)
{
	const struct profile_function *f = l->nr_lines ?
		profile_function(p, l->lines[l->nr_lines - 1].function_id) : NULL;

	/* the symbolizer names what it cannot name MODULE+0xOFFSET */
	return !l->nr_lines || !f || !f->name[0] || strstr(f->name, "+0x");
}

bool pyview_is_interpreter(const char *file)
{
	const char *b = file ? strrchr(file, '/') : NULL;

	if (!file)
		return false;
	b = b ? b + 1 : file;
	return !strncmp(b, "libpython", 9) || !strncmp(b, "python", 6) ||
	       strstr(file, "/lib-dynload/");
}

/* A frame of CPython's perf trampolines (-X perf): "py::FUNC:FILE" in a perf map. */
static bool is_trampoline(const struct profile *p, const struct profile_location *l,
			  const struct profile_mapping *m)
{
	const struct profile_function *f = l->nr_lines ?
		profile_function(p, l->lines[l->nr_lines - 1].function_id) : NULL;

	return !strcmp(m->file, "[anon]") && f && !strncmp(f->name, "py::", 4);
}

static bool is_python(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;

	return m && !strcmp(m->file, PROFILE_PYTHON_MAPPING);
}

static enum pyview_kind kind_of(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m = l ? profile_mapping(p, l->mapping_id) : NULL;

	if (!m || profile_mapping_is_kernel(m))
		return PYVIEW_KIND_OTHER;
	if (is_python(p, l))
		return PYVIEW_KIND_PYTHON;
	if (pyview_is_interpreter(m->file) || is_trampoline(p, l, m))
		return PYVIEW_KIND_INTERP;
	return syslib_is(m->file) ? PYVIEW_KIND_SYSLIB : PYVIEW_KIND_OTHER;
}

/*
 * Is location @i of @s (leaf first) folded away, given its innermost and
 * outermost Python frames @inner <= @outer? See pyview.h for the rule.
 */
static bool is_glue(const struct profile *p, const struct profile_sample *s, size_t i,
		    size_t inner, size_t outer)
{
	const struct profile_location *l = profile_location(p, s->locs[i]);
	enum pyview_kind k = kind_of(p, l);

	/*
	 * Below the innermost Python frame: a trampoline there is that of a
	 * call the sample caught entering or leaving, its frame not in the
	 * walked chain.
	 */
	if (i < inner)
		return k == PYVIEW_KIND_INTERP && (is_dispatch(p, l) || is_anonymous(p, l) ||
						   is_trampoline(p, l, profile_mapping(p, l->mapping_id)));
	if (i < outer)		/* between Python frames */
		return k == PYVIEW_KIND_INTERP;
	return k == PYVIEW_KIND_INTERP || k == PYVIEW_KIND_SYSLIB;
}

void pyview_find(struct pyview *v, const struct profile *p, const struct profile_sample *s,
		 bool native)
{
	size_t i;

	*v = (struct pyview){ 0 };
	for (i = 0; i < s->nr_locs; i++) {
		if (!is_python(p, profile_location(p, s->locs[i])))
			continue;
		if (!v->has_python)
			v->inner = i;
		v->outer = i;
		v->has_python = true;
	}
	v->fold = v->has_python && !native;
}

bool pyview_shows(const struct pyview *v, const struct profile *p,
		  const struct profile_sample *s, size_t i)
{
	if (!v->fold || i == v->inner || i == v->outer)
		return true;
	return !is_glue(p, s, i, v->inner, v->outer);
}
