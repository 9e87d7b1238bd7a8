/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which build of the syscall hooks loads (bpf/syscall.bpf.c): tp_btf, whose
 * register reads are plain loads, or raw_tp, where each is a helper call.
 *
 * libbpf 1.1 attaches a tp_btf program by the kernel's BTF id of the
 * tracepoint, which it finds by reading the kernel's whole BTF (20 ms and
 * 10 MB at start-up, docs/performance.md). The tp_btf builds are in a
 * section of our own ("lp_tp_btf/NAME") that libbpf loads as raw_tp (so it
 * reads nothing), and syshooks' load callback makes them tp_btf with the id
 * the BTF cache wrote beside its file (btfcache_attach_id) just before the
 * kernel sees them. So tp_btf needs a cached BTF and a kernel that inlines
 * per-CPU array lookups (6.10); otherwise, and when the kernel refuses it,
 * raw_tp loads.
 */
#ifndef LATPROF_SYSHOOKS_H
#define LATPROF_SYSHOOKS_H

#include <stdbool.h>

#include <bpf/libbpf.h>

/*
 * Register the section with libbpf, once per process, before any BPF object
 * is opened: without it libbpf cannot load its programs. 0 or -errno.
 */
int syshooks_register(void);

/* Keep the skeleton's attach off the tp_btf builds of object @obj (syshooks_attach does it). */
void syshooks_no_autoattach(struct bpf_object *obj);

/*
 * Whether the tp_btf builds can load with the cached BTF @btf_path (NULL:
 * none): the ids of both tracepoints are known and the kernel is 6.10 or
 * later. Remembers the ids for the load callback. The hidden
 * LATPROF_DEBUG_RAW_TP=1 says no (for tests, and an A/B in
 * bench/syscall_overhead.sh with LATPROF_B a script that sets it).
 */
bool syshooks_typed_usable(const char *btf_path);

/*
 * Attach a loaded tp_btf build @prog. The link, or NULL with errno set:
 * ESRCH when the kernel attached it to another tracepoint than its section
 * names (the cached ids are wrong: the caller drops the cache file).
 */
struct bpf_link *syshooks_attach(struct bpf_program *prog);

#endif
