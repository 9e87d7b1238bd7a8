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

struct strtab;
struct perfmap;

/*
 * Read the map of process @pid, whose pid in its own namespace is @ns_pid
 * (proc_ns_pid(), taken while it lived): /proc/PID/root/tmp/perf-NSPID.map
 * while the process lives (its /tmp may be a container's); once it is gone,
 * /tmp/perf-NSPID.map only if @root_ours (its root was ours: a pid
 * namespace without a root of its own, `unshare --pid`), else nothing
 * (ESRCH). Names are interned in @strs; lines that do not parse (a NUL ends
 * a line) are skipped. Returns the map, or NULL with errno set (ENOENT: no
 * such file or no symbol in it).
 */
struct perfmap *perfmap_load(int pid, int ns_pid, bool root_ours, struct strtab *strs);

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
