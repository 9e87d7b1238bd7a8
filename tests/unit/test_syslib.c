// SPDX-License-Identifier: GPL-2.0-only
/* src/syslib.h: the C library and its kin, by the paths of their mappings. */
#include <stddef.h>

#include "src/syslib.h"
#include "tests/unit/check.h"

int main(void)
{
	CHECK(syslib_is("/lib/x86_64-linux-gnu/libpthread.so.0"));
	CHECK(syslib_is("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(syslib_is("/lib64/ld-linux-x86-64.so.2"));
	CHECK(syslib_is("/lib/ld-musl-x86_64.so.1"));
	CHECK(syslib_is("[vdso]"));
	CHECK(syslib_is("libm.so.6"));
	CHECK(!syslib_is("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"));
	CHECK(!syslib_is("/usr/lib/x86_64-linux-gnu/libcap.so.2"));
	CHECK(!syslib_is("/usr/bin/app"));
	CHECK(!syslib_is("/usr/lib/libc/app"));	/* a directory named libc is not the file */
	CHECK(!syslib_is(""));
	CHECK(!syslib_is(NULL));
	return check_exit();
}
