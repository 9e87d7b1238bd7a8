// SPDX-License-Identifier: GPL-2.0-only
/*
 * The floor of syscall tracing: empty programs on the two hooks latprof's
 * syscall collector uses (raw_tp/sys_enter, raw_tp/sys_exit). Attached, they
 * cost every syscall of every process what the kernel charges for entering
 * the tracepoints and calling a BPF program that does nothing; a collector
 * on the same hooks cannot cost less. See bench/README.md.
 *
 * With cfg_clock (floor --clock) each program also reads the clock once, as
 * a tool that times every call must at entry and at exit: what the clock
 * alone adds. The reading is compared, not stored: a store into one global
 * that every CPU writes bounced its cache line between them and inflated
 * the floor. Without cfg_clock the verifier removes the branch (a frozen
 * constant): the programs are the empty ones.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile bool cfg_clock = false;
__u64 clock_zero;	/* never written in practice: keeps the call */

SEC("raw_tp/sys_enter")
int floor_sys_enter(void *ctx)
{
	if (cfg_clock && bpf_ktime_get_ns() == 0)
		clock_zero++;
	return 0;
}

SEC("raw_tp/sys_exit")
int floor_sys_exit(void *ctx)
{
	if (cfg_clock && bpf_ktime_get_ns() == 0)
		clock_zero++;
	return 0;
}
