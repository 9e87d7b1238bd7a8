// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of syscall tracing: empty programs on the two hooks latprof's
 * syscall collector uses (tp_btf/sys_enter, tp_btf/sys_exit). Attached, they
 * cost every syscall of every process what the kernel charges for entering
 * the tracepoints and calling a BPF program that does nothing; a collector
 * on the same hooks cannot cost less. See bench/README.md.
 *
 * With cfg_clock (floor --clock) each program also reads the clock once, as
 * a tool that times every call must at entry and at exit: what the clock
 * alone adds. Without it the verifier removes the branch (a frozen
 * constant): the programs are the empty ones.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile bool cfg_clock = false;
__u64 clock_ns;	/* kept, so the call is not optimized away */

SEC("tp_btf/sys_enter")
int floor_sys_enter(void *ctx)
{
	if (cfg_clock)
		clock_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int floor_sys_exit(void *ctx)
{
	if (cfg_clock)
		clock_ns = bpf_ktime_get_ns();
	return 0;
}
