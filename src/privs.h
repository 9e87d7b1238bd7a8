/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Giving up privileges a verb does not need. Reading a profile and drawing
 * it (report, export, flamegraph, diff, timeline, symbolize) needs no
 * capability, so when latprof runs as root those verbs drop every one of
 * them before reading any input: a hostile profile, folded file or ELF that
 * found a bug in a parser would find a process that cannot load BPF, trace
 * or signal other processes, or override file permissions. The uid stays 0,
 * so files that root owns stay readable (and outputs stay root's); files
 * readable by their owner only need that owner. record, serve and top keep
 * their capabilities: they load BPF.
 */
#ifndef LATPROF_PRIVS_H
#define LATPROF_PRIVS_H

/*
 * Drop every capability for good: the bounding and ambient sets are
 * cleared, the effective, permitted and inheritable sets emptied, and
 * no_new_privs set, so no later execve can give any back (not even a
 * set-uid or file-capability binary). Without CAP_SETPCAP (not root) the
 * bounding set cannot be changed and there is nothing to drop: that is not
 * an error. Returns 0, or -errno when the process keeps a capability.
 */
int privs_drop_all(void);

/*
 * Do we hold what loading BPF and sampling take (root, or CAP_BPF and
 * CAP_PERFMON)? 0, or -EPERM after naming what @verb misses.
 */
int privs_check_bpf(const char *verb);

#endif
