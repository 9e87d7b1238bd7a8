/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where separate debuginfo is looked for, private to symbolize/. The search
 * itself is libdwfl's (dwfl_standard_find_debuginfo): by GNU build-id under
 * ROOT/.build-id/xx/yyyy.debug, then by the .gnu_debuglink name (CRC
 * checked) next to the binary, in .debug/ beside it and under ROOT/<the
 * binary's directory>/, for each root: the extra directories given, then
 * /usr/lib/debug. libdw reads compressed debug sections and libdwfl the
 * MiniDebugInfo symbol table (.gnu_debugdata) on its own.
 *
 * debuginfod is asked only when DEBUGINFOD_URLS is set (non-empty) when the
 * policy is made. libdwfl 0.188 itself would load libdebuginfod (and libcurl)
 * and start a client for every binary whose debuginfo is not on disk even
 * without it, so then the search is skipped for binaries that have no
 * candidate file at all.
 */
#ifndef LATPROF_SYMBOLIZE_DEBUGINFO_H
#define LATPROF_SYMBOLIZE_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>

#include <elfutils/libdwfl.h>

struct debuginfo;

/*
 * A search policy with @nr extra root directories @dirs, searched in order
 * before /usr/lib/debug. Each must be an absolute path without ':' (libdwfl
 * reads relative ones as relative to the binary, and ':' separates its
 * list). Returns NULL with errno set: EINVAL for such a directory, ENOMEM.
 */
struct debuginfo *debuginfo_new(const char *const *dirs, size_t nr);

/* NULL is a no-op. Every session using the callbacks must be ended first. */
void debuginfo_free(struct debuginfo *di);

/*
 * The callbacks for dwfl_begin() of a session whose modules are reported
 * with a file and then attached with debuginfo_attach(). Borrowed until
 * debuginfo_free(). Cannot fail.
 */
const Dwfl_Callbacks *debuginfo_callbacks(const struct debuginfo *di);

/*
 * Make @mod search with @di. Must be done after reporting @mod and before
 * its symbols or DWARF are asked for. Cannot fail.
 */
void debuginfo_attach(const struct debuginfo *di, Dwfl_Module *mod);

/* Whether debuginfod may be asked (DEBUGINFOD_URLS was set). */
bool debuginfo_uses_debuginfod(const struct debuginfo *di);

#endif
