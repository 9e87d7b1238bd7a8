// SPDX-License-Identifier: GPL-2.0-only
/* Demangling through libiberty (see demangle.h). */
#include "symbolize/demangle.h"

#include <libiberty/demangle.h>
#include <stddef.h>

bool sym_is_mangled(const char *name)
{
	/* _Z: Itanium C++ and Rust legacy; _R: Rust v0; __Z: some toolchains */
	return name && name[0] == '_' &&
	       (name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z'));
}

char *sym_demangle(const char *name)
{
	if (!sym_is_mangled(name))
		return NULL;
	/* parameters and template arguments included; Rust legacy loses its hash */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
