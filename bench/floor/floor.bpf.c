// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of syscall tracing: empty programs on the two hooks latprof's
 * syscall collector uses (tp_btf/sys_enter, tp_btf/sys_exit). Attached, they
 * cost every syscall of every process what the kernel charges for entering
 * the tracepoints and calling a BPF program that does nothing; a collector
 * on the same hooks cannot cost less. See bench/README.md.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int floor_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int floor_sys_exit(void *ctx)
{
	return 0;
}
