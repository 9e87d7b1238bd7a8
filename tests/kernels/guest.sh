#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside the kernel-test guest: the image's /sbin/latprof-init (written by
# tests/kernels/mkroot.sh) runs this as PID 1 with the tree's path, once the
# tree is mounted read-only at the host's path and the results directory at
# /latprof-out. Mount what a booted system has, record `true` as a smoke
# test, run the e2e tests that /latprof-out/env names through tests/run.sh
# (each result line with its seconds), leave the log and the exit status in
# /latprof-out and power off. Everything printed goes to the serial console,
# which tests/kernels/run.sh shows.
set -u
src=$1
out=/latprof-out
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8

power_off()
{
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}

mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
hostname latprof-guest
# a hang is then readable: every CPU's backtrace at a soft lockup, and
# Alt-SysRq-L from qemu's monitor (docs/kernels.md)
echo 1 >/proc/sys/kernel/sysrq
echo 1 >/proc/sys/kernel/softlockup_all_cpu_backtrace

# Two probes that stay on each of the hottest tracepoints for the whole run:
# the tracefs event (with a filter nothing passes) and a counting perf event
# per CPU. The tracepoint's static branch and static call then keep their
# code as latprof's programs attach and detach, and no CPU has to see kernel
# text that another is patching, which multi-threaded TCG gets wrong
# (docs/kernels.md, "A hang that was qemu's").
pin_tracepoints()
{
	local ev i
	for ev in raw_syscalls/sys_enter raw_syscalls/sys_exit sched/sched_switch; do
		echo 'common_pid < 0' >"/sys/kernel/tracing/events/$ev/filter" &&
			echo 1 >"/sys/kernel/tracing/events/$ev/enable" || return 1
	done
	python3 -c '
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
for ev in ("raw_syscalls/sys_enter", "raw_syscalls/sys_exit", "sched/sched_switch"):
    nr = int(open("/sys/kernel/tracing/events/%s/id" % ev).read())
    attr = struct.pack("IIQ", 2, 128, nr) + bytes(112)  # PERF_TYPE_TRACEPOINT
    for cpu in range(os.cpu_count()):
        fd = libc.syscall(298, attr, -1, cpu, -1, 0)  # perf_event_open
        if fd < 0:
            sys.exit("perf_event_open %s: %s" % (ev, os.strerror(ctypes.get_errno())))
        fds.append(fd)
open("/run/pinned", "w").close()
time.sleep(1 << 30)
' &
	for ((i = 0; i < 100; i++)); do
		[ -e /run/pinned ] && return 0
		kill -0 $! 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
pin_tracepoints || echo "guest: cannot keep probes on the hot tracepoints (a hang under multi-threaded TCG is possible)"
# /tmp stays on the image's ext4 (a throw-away snapshot): test_syscall_fsync
# needs a disk that fsync writes to

# TESTS, LATPROF, FIXTURES, TEST_TIMEOUT_S, TEST_BUDGET_S, CI from the host
. "$out/env" || { echo "guest: no $out/env"; echo 1 >"$out/rc"; power_off; }
export LATPROF FIXTURES TEST_TIMEOUT_S TEST_BUDGET_S
[ -n "${CI:-}" ] && export CI
cd "$src" || power_off
echo "guest: Linux $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB"

# The smoke test: the default record loads and attaches, and so do one with
# every collector and one with frame-pointer stacks (rodata the verifier
# prunes on): every program but the pre-5.18 fallbacks, which
# tests/e2e/test_syscall_sleep.sh and tests/kernels/test_old_kernel.sh load.
# The in-flight iterator loads at stop, where a failure is only a warning:
# the smoke test fails on it too.
smoke()
{
	local log=$out/smoke-$1.log start=$SECONDS
	shift
	if ! timeout 300 "$LATPROF" record "$@" -o /tmp/smoke.pb.gz -- true >"$log" 2>&1 ||
		grep -q 'cannot report syscalls in flight' "$log"; then
		timeout 300 "$LATPROF" record -vvv "$@" -o /tmp/smoke.pb.gz -- true >"$log" 2>&1
		grep -v '^libbpf: \(CO-RE\|sec\|prog .*: relo\|map\|elf\)' "$log" | tail -n 60
		echo "guest: latprof record $* -- true failed on $(uname -r) (log: $log)"
		echo 1 >"$out/rc"
		power_off
	fi
	echo "guest: latprof record $* -- true: ok in $((SECONDS - start)) s ($(grep -m1 wrote "$log"))"
}
smoke default
smoke all --mode cpu,syscall,offcpu --requests --files --net
smoke fp --mode cpu,syscall,offcpu --unwind fp

start=$SECONDS
# shellcheck disable=SC2086
tests/run.sh "kernel $(uname -r)" $TESTS 2>&1 | tee "$out/log"
rc=${PIPESTATUS[0]}
echo "guest: e2e tests took $((SECONDS - start)) s"
echo "$rc" >"$out/rc"
power_off
