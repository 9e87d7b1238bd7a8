/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perf-PID.map files, private to symbolize/: the symbols a JIT (V8/Node,
 * the JVM with perf-map-agent, LuaJIT, Python 3.12 -X perf ...) writes for
 * code it generated in anonymous memory. One line per symbol:
 * "START SIZE NAME", START and SIZE in hex.
 */
#ifndef LATPROF_SYMBOLIZE_PERFMAP_H
#define LATPROF_SYMBOLIZE_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>

struct proc_ids;
struct strtab;
struct perfmap;

/*
 * Read the map of process @pid, whose ids (proc_ids_read(), taken while it
 * lived) are @ids: /proc/PID/root/tmp/perf-NSPID.map while the process lives
 * (its /tmp may be a container's); once it is gone, /tmp/perf-NSPID.map only
 * if @ids->root_ours (its root was ours: a pid namespace without a root of
 * its own, `unshare --pid`), else nothing (ESRCH). Either file is read only
 * if it is a regular file, not a symlink, owned by @ids->uid or root.
 * Names are interned in @strs; lines that do not parse (a NUL ends a line)
 * are skipped. Returns the map, or NULL with errno set: ENOENT (no such
 * file or no symbol in it), and for a file refused, EPERM (another owner),
 * ELOOP (a symlink), EINVAL (not a regular file: a FIFO, a device), EFBIG
 * (over 256 MiB).
 */
struct perfmap *perfmap_load(int pid, const struct proc_ids *ids, struct strtab *strs);

/*
 * The same from the text of a map file in @text (NUL-terminated; lines are
 * cut in place, names are copied). perfmap_load() is this on the file's
 * contents. Test hook: the fuzzer (tests/fuzz/) feeds text through here,
 * without a process. Returns the map, or NULL with errno set (ENOENT: no
 * symbol in it, ENOMEM).
 */
struct perfmap *perfmap_load_text(char *text, struct strtab *strs);

/* NULL is a no-op. */
void perfmap_free(struct perfmap *m);

/*
 * The symbol containing @addr: its name (borrowed from the strtab) and start.
 * Returns false if none. Cannot fail.
 */
bool perfmap_lookup(const struct perfmap *m, uint64_t addr, const char **name,
		    uint64_t *start);

#endif
