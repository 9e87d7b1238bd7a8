// SPDX-License-Identifier: GPL-2.0-only
/* The C library and its kin, by file name (syslib.h). */
#include "src/syslib.h"

#include <string.h>

#include "src/lib/util.h"

bool syslib_is(const char *file)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "libpthread", "libdl", "librt", "libm.so", "libm-",
		"ld-linux", "ld-musl", "libc.musl", "[vdso]",
	};
	const char *b = file ? strrchr(file, '/') : NULL;
	size_t i;

	if (!file)
		return false;
	b = b && b[1] ? b + 1 : file;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}
