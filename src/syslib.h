/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which mapped files are the C library and its kin: the code every program
 * reaches the kernel through, whose frames say how a program waited, not
 * which of its functions did. Used to name stacks (src/stacks.h: the
 * report's slow call sites) and to fold them (src/pyview.h: the start-up
 * frames above a Python program). Names only; reads no file.
 */
#ifndef LATPROF_SYSLIB_H
#define LATPROF_SYSLIB_H

#include <stdbool.h>

/*
 * Is @file (a mapping's path) the C library or one of the system libraries
 * a program reaches the kernel through: libc, libpthread, libdl, librt,
 * libm, the dynamic loader, musl, the vDSO? Their frames (syscall wrappers,
 * __futex_abstimed_wait_common, pthread_cond_wait, ...) say how a program
 * waited, not which of its functions did. NULL is not. Cannot fail.
 */
bool syslib_is(const char *file);

#endif
