/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A cache of minimized kernel BTF: only the types and fields that latprof's
 * BPF object relocates (CO-RE), for the running kernel, made by
 * `bpftool gen min_core_btf` and handed to libbpf as btf_custom_path. Without
 * it libbpf 1.1 reads and parses the whole vmlinux BTF (5.5 MB here) at
 * every load: 20 ms of start-up and 10 MB of peak RSS (docs/performance.md).
 * It only saves the read when no program needs libbpf to look up its attach
 * point in vmlinux BTF (tp_btf, iter): the syscall hooks' tp_btf builds are
 * given theirs from the file's companion (btfcache_attach_id), the in-flight
 * iterator is loaded at stop (src/collect/load.c's load()).
 *
 * One file per (kernel, BPF object): named by a hash of the kernel's release,
 * version string and BTF size and ends, and of the object's bytes. The
 * directory is $LATPROF_CACHE_DIR, or /var/cache/latprof when that is unset;
 * set and empty turns the cache off.
 */
#ifndef LATPROF_BTFCACHE_H
#define LATPROF_BTFCACHE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Fill @path with the cache file for BPF object @obj (@len bytes) on the
 * running kernel. true when it exists; false when it does not, or the cache
 * is off (path is "" then).
 */
bool btfcache_lookup(const void *obj, size_t len, char *path, size_t size);

/*
 * Make the cache file @path for @obj in the background: writes the object
 * next to it and starts bpftool (nice 19) in a detached process, which
 * renames its output into place only when it succeeds. 0, or -errno when it
 * could not start (no cache directory, no bpftool, ...).
 */
int btfcache_build(const void *obj, size_t len, const char *path);

/*
 * The kernel's BTF type id of typedef @name (btf_trace_sys_enter: what a
 * tp_btf program attaches by), which the background job that made cache file
 * @path wrote beside it (@path.ids); 0 when it did not.
 */
unsigned int btfcache_attach_id(const char *path, const char *name);

/* Remove cache file @path and its ids (a load with them failed where one without did not). */
void btfcache_drop(const char *path);

/* Remove only @path's ids (the tp_btf programs they are for did not load). */
void btfcache_drop_ids(const char *path);

#endif
