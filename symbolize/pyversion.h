/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPython release an interpreter file was built as, when it has no
 * Py_Version (3.8 to 3.10): PY_VERSION, the string that Py_GetVersion()
 * formats into sys.version ("3.10.13 (main, ...)"). The string itself is no
 * symbol and the linker may merge it into the tail of another
 * ("/usr/local/lib/python3.10.13" ends with it), so it is found as the one
 * that Py_GetVersion's own code points at. Private to symbolize/.
 */
#ifndef LATPROF_SYMBOLIZE_PYVERSION_H
#define LATPROF_SYMBOLIZE_PYVERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/pyoffsets.h"

/*
 * Parse a PY_VERSION string at @s (@len bytes, not necessarily
 * NUL-terminated): "3.10.13", "3.8.0rc1", "3.11.2+". Returns PY_VERSION_HEX
 * as CPython encodes it (major, minor, micro, release level 0xa/0xb/0xc/0xf
 * in bits 4-7, serial in bits 0-3; a '+' build is final), or 0 when @s is
 * no version string (anything after it but the end of the string).
 */
uint32_t pyversion_parse(const char *s, size_t len);

/*
 * PY_VERSION_HEX of the interpreter whose Py_GetVersion is @size bytes of
 * x86-64 code at @func (virtual addresses of the file, read through @read):
 * the string one of its RIP-relative lea instructions (or, non-PIE, a mov of
 * an immediate address) loads that parses as a version of major.minor @mm
 * (PY_MM of a version; 0: any 3.x). 0 when none does, or two disagree.
 */
uint32_t pyversion_from_getversion(py_read_fn read, void *arg, uint64_t func, uint64_t size,
				   uint32_t mm);

#endif
