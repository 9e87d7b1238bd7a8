#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Generates symbolize/pyoffsets_table.h, the offsets table that
# symbolize/pyoffsets_table.c falls back on for an interpreter without DWARF
# (a stripped libpython, a distribution's python without its -dbg package)
# and, for 3.13, without usable _Py_DebugOffsets.
#
# Each layout comes from compiling offsetof() against one CPython release's
# own installed headers (Include/ and Include/internal/, with Py_BUILD_CORE
# as the interpreter itself is built), so it is that release's layout for
# x86-64 as the C compiler lays it out, not a transcription.
#
# One entry per minor version, valid for all its micro releases: CPython
# keeps these structs in place within a minor version (3.11.2, Debian's,
# and 3.11.7 are identical field for field; py-spy reads every 3.8-3.13
# micro release with one layout per minor). That is an assumption all the
# same, so symbolize/pycheck.c checks a table layout against the live
# process before it is used. When releases of one minor are given and
# differ, the later one starts an exception entry, used from its micro on
# (pyoffsets_from_table); releases that agree are merged into one entry
# and named in its comment.
#
# Usage: symbolize/pyoffsets_gen.sh [PREFIX...] > symbolize/pyoffsets_table.h
#   PREFIX  an installed CPython: a directory holding include/python3.X
#           (every 3.8-3.13 one with internal/ headers is probed, so /usr
#           with Debian's python3.X-dev counts); default: every 3.8-3.13
#           under `pyenv root`, and /usr.
# To add a release, install it (pyenv install 3.12.4, or ./configure
# --prefix=DIR && make install from its source) and run the script with its
# prefix among the others. tests/unit/test_pyoffsets.c checks the table's
# layout of every interpreter on the machine against its DWARF.
set -eu

CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 0 ]; then
	root=$(pyenv root 2>/dev/null) || { echo "pyoffsets_gen: no PREFIX and no pyenv" >&2; exit 2; }
	set --
	for d in "$root"/versions/3.*; do
		case ${d##*/} in
		3.8.* | 3.9.* | 3.10.* | 3.11.* | 3.12.* | 3.13.*) set -- "$@" "$d" ;;
		esac
	done
	set -- "$@" /usr
fi

# One offsetof() per field; "-" when the release has no such field. The
# fields are those of struct py_offsets (symbolize/pyoffsets.h), in order.
probe() {
	minor=$1
	if [ "$minor" -le 10 ]; then
		interp_head='tstate_head'
		frame_type='struct _frame'
		frame_back='f_back'; frame_code='f_code'; frame_instr='f_lasti'
	else
		interp_head='threads.head'
		frame_type='_PyInterpreterFrame'
		frame_back='previous'
	fi
	case $minor in
	11 | 12) frame_code='f_code'; frame_instr='prev_instr' ;;
	13) frame_code='f_executable'; frame_instr='instr_ptr' ;;
	esac
	cat <<EOF
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_pystate.h"
#if PY_MINOR_VERSION >= 9
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#endif
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#endif
#define O(type, member) printf(" %zu", offsetof(type, member))
#define S(type) printf(" %zu", sizeof(type))
#define N() printf(" -")
int main(void)
{
	printf("%d %d %d", PY_MAJOR_VERSION, PY_MINOR_VERSION, PY_MICRO_VERSION);
	O(PyObject, ob_type);
	O(_PyRuntimeState, interpreters.head);
	O(_PyRuntimeState, initialized);
	O(PyInterpreterState, $interp_head);
	O(PyThreadState, next);
	O(PyThreadState, interp);
	O(PyThreadState, thread_id);
#if PY_MINOR_VERSION >= 11
	O(PyThreadState, native_thread_id);
#else
	N();
#endif
#if PY_MINOR_VERSION <= 10
	O(PyThreadState, frame);
#elif PY_MINOR_VERSION >= 13
	O(PyThreadState, current_frame);
#else
	N();
#endif
#if PY_MINOR_VERSION == 11 || PY_MINOR_VERSION == 12
	O(PyThreadState, cframe);
	O(_PyCFrame, current_frame);
#else
	N(); N();
#endif
	O($frame_type, $frame_back);
	O($frame_type, $frame_code);
	O($frame_type, $frame_instr);
#if PY_MINOR_VERSION == 11
	O(_PyInterpreterFrame, is_entry);
#else
	N();
#endif
#if PY_MINOR_VERSION >= 12
	O(_PyInterpreterFrame, owner);
#else
	N();
#endif
	O(PyCodeObject, co_name);
#if PY_MINOR_VERSION >= 11
	O(PyCodeObject, co_qualname);
#else
	N();
#endif
	O(PyCodeObject, co_filename);
	O(PyCodeObject, co_firstlineno);
#if PY_MINOR_VERSION <= 9
	O(PyCodeObject, co_lnotab);
#else
	O(PyCodeObject, co_linetable);
#endif
#if PY_MINOR_VERSION >= 11
	O(PyCodeObject, co_code_adaptive);
#else
	N();
#endif
	O(PyBytesObject, ob_base.ob_size);
	O(PyBytesObject, ob_sval);
	O(PyASCIIObject, length);
	O(PyASCIIObject, state);
	S(PyASCIIObject);
	S(PyCompactUnicodeObject);
#if PY_MINOR_VERSION <= 11
	O(_PyRuntimeState, ceval.gil);
	N();
#else
	N();
	O(PyInterpreterState, ceval.gil);
#endif
	S(struct _gil_runtime_state);
	O(struct _gil_runtime_state, locked);
	O(struct _gil_runtime_state, last_holder);
	printf("\n");
	return 0;
}
EOF
}

fields='object_type runtime_interp_head runtime_initialized interp_threads_head tstate_next tstate_interp
	tstate_thread_id
	tstate_native_thread_id tstate_frame tstate_cframe cframe_current_frame
	frame_back frame_code frame_instr frame_is_entry frame_owner code_name
	code_qualname code_filename code_firstlineno code_linetable code_adaptive
	bytes_size bytes_sval unicode_length unicode_state unicode_ascii_size
	unicode_compact_size runtime_gil interp_gil gil_size gil_locked gil_holder'

cat <<EOF
/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generated by symbolize/pyoffsets_gen.sh from each release's own headers:
 * do not edit, run the script (its header says how to add a release).
 * One entry per minor version, for all its micro releases; the comment
 * names the releases whose headers gave the layout.
 * -1: the release has no such field.
 */
EOF

# Probe every include/python3.X (3.8-3.13, with internal headers) of each
# prefix: one "major minor micro offsets..." line each.
for prefix in "$@"; do
	for inc in "$prefix"/include/python3.*; do
		minor=${inc##*/python3.}
		minor=${minor%%[!0-9]*}
		case $minor in 8 | 9 | 10 | 11 | 12 | 13) ;; *) continue ;; esac
		[ -e "$inc/internal/pycore_pystate.h" ] || continue
		probe "$minor" > "$tmp/probe.c"
		"$CC" -w -I"$inc" -o "$tmp/probe" "$tmp/probe.c" ||
			{ echo "pyoffsets_gen: $inc: the probe does not compile" >&2; exit 1; }
		"$tmp/probe" >> "$tmp/layouts"
	done
done
[ -s "$tmp/layouts" ] || { echo "pyoffsets_gen: no CPython 3.8-3.13 headers in $*" >&2; exit 2; }

# By minor, then micro; a release whose layout equals the one before it
# joins that entry, a different one starts an exception entry at its micro.
sort -n -k2,2 -k3,3 -u "$tmp/layouts" | awk -v fields="$fields" '
	function flush(   i, v) {
		if (!n)
			return
		printf "/* %s */\n{\n\t.version = PY_VERSION_OF(%s),\n", seen, ver
		for (i = 1; i <= nf; i++) {
			v = val[i] == "-" ? -1 : val[i]
			printf "\t.%s = %s,\n", name[i], v
		}
		print "},"
	}
	BEGIN { nf = split(fields, name, /[ \t\n]+/) }
	{
		rel = $1 "." $2 "." $3
		rest = $0
		sub(/^[0-9]+ [0-9]+ [0-9]+ /, "", rest)
		if (n && $2 == minor && rest == layout) {
			seen = seen ", " rel
			next
		}
		diff = ""
		if (n && $2 == minor)
			for (i = 1; i <= nf; i++)
				if ($(i + 3) != val[i])
					diff = diff " " name[i]
		flush()
		n++
		minor = $2
		layout = rest
		ver = $1 ", " $2 ", " $3
		seen = (diff != "" ? "exception, from " rel " on (differs in" diff "); " : "") "layout of " rel
		for (i = 1; i <= nf; i++)
			val[i] = $(i + 3)
	}
	END { flush() }'
