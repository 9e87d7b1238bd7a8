#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The fallbacks for kernels before 5.18 (docs/kernels.md), forced on this one
# with the hidden LATPROF_DEBUG_OLD_KERNEL=1: the in-flight iterator without
# bpf_copy_from_user_task (on_iter_task_nocopy: registers, no stack copy)
# and sched_switch without its prev_state argument (on_sched_switch_nostate).
#
# Ground truth (from the fixtures, not latprof): sys_park's two threads are
# parked in read() and epoll_wait() for the whole recording (-p PID -d 1.5,
# as in test_syscall_inflight.sh); sys_offblock's thread blocks in
# blocked_reader -> read for the blocked_ns it measures itself (as in
# test_offcpu_block.sh).
# Checks:
#   - both parked calls are in flight in the JSON (in_flight >= 1), and the
#     latency of each is between 1.2 s and the recording's length, charged to
#     a stack that ends in the syscall's libc frame (the innermost user frame
#     the registers give; nothing deeper without the copy);
#   - --mode cpu,offcpu: the time off CPU under blocked_reader is blocked_ns
#     +-10% (the frames come from the stack copied at sys_exit).
. "$(dirname "$0")/../e2e/lib.sh"
require_root_bpf
require_fixture sys_park sys_offblock
export LATPROF_DEBUG_OLD_KERNEL=1

start_bg "$WORKDIR/park.out" "$FIXTURES/sys_park"
park=$BG_PID
wait_for_line "$WORKDIR/park.out" "^sys_park pid=" 5 ||
	{ diag_file "sys_park output" "$WORKDIR/park.out"; fail "sys_park did not start"; }
t0=$(date +%s.%N)
record_or_fail park -v -p "$park" -d 1.5
t1=$(date +%s.%N)
grep -q "kernel without bpf_copy_from_user_task" "$WORKDIR/park.err" ||
	{ diag_file "latprof record stderr" "$WORKDIR/park.err"; fail "LATPROF_DEBUG_OLD_KERNEL=1 did not select the fallbacks"; }
upper=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a + 0.05) * 1e9 }')
json=$WORKDIR/park.json
export_or_fail "$WORKDIR/park.pb.gz" "$json" --format json --weight latency
json_check "$json"
folded=$WORKDIR/park.latency.folded
export_or_fail "$WORKDIR/park.pb.gz" "$folded" --format folded --weight latency
for name in read epoll_wait; do
	inf=$(json_syscall "$json" "$park" "$name" in_flight)
	# comm;...;frame;syscall:NAME: a user frame when there are 3 or more
	read -r got leaf < <(awk -v c=sys_park -v s="syscall:$name" "$FOLDED_AWK"'
		{ v = folded_parse(); if (!folded_is(c) || f[n] != s) next
		  t += v; if (n >= 3) u += v }
		END { print t + 0, u + 0 }' "$folded")
	info "$name: in_flight=$inf, $got ns (expected 1.2e9..$upper), $leaf ns with a user frame"
	if [ -z "$inf" ] || [ "$inf" -lt 1 ]; then
		json_syscalls_of "$json" "$park"
		fail "json: (pid $park, $name) has in_flight '$inf', expected >= 1"
	fi
	in_range "$got" 1200000000 "$upper" ||
		{ folded_top "$folded" sys_park 10; fail "syscall:$name in flight weighs $got ns, expected 1.2 s .. $upper ns"; }
	[ "$leaf" = "$got" ] ||
		{ folded_top "$folded" sys_park 10; fail "syscall:$name: only $leaf of $got ns has a user frame above it"; }
done

record_or_fail block --mode cpu,offcpu -- "$FIXTURES/sys_offblock" 1000
blocked_ns=$(kv "$WORKDIR/block.out" "sys_offblock " blocked_ns)
[ -n "$blocked_ns" ] || { diag_file "command stdout" "$WORKDIR/block.out"; fail "sys_offblock printed no blocked_ns"; }
export_or_fail "$WORKDIR/block.pb.gz" "$WORKDIR/block.folded" --format folded --weight offcpu
got=$(folded_sum "$WORKDIR/block.folded" sys_offblock blocked_reader)
info "offcpu: blocked_reader $got ns (truth $blocked_ns)"
in_range "$(ratio "$got" "$blocked_ns")" 0.90 1.10 ||
	{ folded_top "$WORKDIR/block.folded" sys_offblock 15; fail "off-CPU under blocked_reader is $got ns, expected $blocked_ns +-10%"; }
pass "in flight without a stack copy, off-CPU without prev_state"
