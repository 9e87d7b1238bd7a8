/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory of a process from /proc: RSS and PSS from /proc/PID/smaps_rollup,
 * or RSS alone from /proc/PID/statm. statm reads the kernel's counters
 * (microseconds); smaps_rollup walks the page tables under the target's
 * mmap lock (about 0.6 ms for a 200 MB process here), so callers read PSS
 * less often than RSS (docs/formats.md, "Memory").
 */
#ifndef LATPROF_PROCMEM_H
#define LATPROF_PROCMEM_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The "Rss:" and "Pss:" lines of smaps_rollup text @text, in kB. 0, or
 * -EINVAL when either is missing.
 */
int procmem_parse_smaps_rollup(const char *text, uint64_t *rss_kb, uint64_t *pss_kb);

/*
 * The resident size from statm text @text (its second field, in pages of
 * @page_kb kB). 0 or -EINVAL.
 */
int procmem_parse_statm(const char *text, unsigned int page_kb, uint64_t *rss_kb);

/* Read @pid's RSS from statm. 0 or -errno (-ESRCH when it is gone). */
int procmem_read_rss(pid_t pid, uint64_t *rss_kb);

/*
 * Read @pid's RSS and PSS from smaps_rollup; *cost_ns says how long the read
 * took. 0 or -errno (unreadable: no such file, or permission).
 */
int procmem_read_pss(pid_t pid, uint64_t *rss_kb, uint64_t *pss_kb, uint64_t *cost_ns);

#endif
