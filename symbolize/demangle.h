/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * C++ (Itanium ABI) and Rust (legacy and v0) symbol names made readable,
 * with libiberty's demangler (the one binutils and gdb use).
 */
#ifndef LATPROF_DEMANGLE_H
#define LATPROF_DEMANGLE_H

#include <stdbool.h>

/* Does @name look mangled ("_Z...", "_R...")? Cheap: no allocation. */
bool sym_is_mangled(const char *name);

/*
 * The demangled form of @name ("ns::Class<int>::method()", "mycrate::foo"),
 * malloc'ed; NULL when @name is not a mangled name the demangler accepts
 * (then @name is shown as it is) or on ENOMEM.
 */
char *sym_demangle(const char *name);

#endif
