#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Syscalls still in flight when recording stops are reported with their
# time so far.
#
# Ground truth (from the fixture, not latprof): sys_park's main thread
# parks in read() (main -> park_reader -> read) on a pipe nobody writes,
# and its second thread in epoll_wait() (park_poller) with a one-hour
# timeout; both are in their syscall before it prints its ready line, and
# never return. Recorded from outside for 1.5 s (-p PID -d 1.5), each of
# them is in flight for the whole recording: between 1.2 s (-d minus
# attach slack) and the time from the ready line to the end of
# `latprof record`.
# Checks, JSON and folded, --weight latency:
#   - the "syscalls" entries (pid, read) and (pid, epoll_wait) have
#     in_flight >= 1;
#   - the stacks main;park_reader;...;syscall:read and
#     park_poller;...;syscall:epoll_wait each weigh in that range.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_park

start_bg "$WORKDIR/park.out" "$FIXTURES/sys_park"
park=$BG_PID
wait_for_line "$WORKDIR/park.out" "^sys_park pid=" 5 ||
	{ diag_file "sys_park output" "$WORKDIR/park.out"; fail "sys_park did not start"; }
t0=$(date +%s.%N)
record_or_fail park -p "$park" -d 1.5
t1=$(date +%s.%N)
kill -0 "$park" 2>/dev/null || fail "sys_park died during the recording"
upper=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a + 0.05) * 1e9 }')
prof=$WORKDIR/park.pb.gz
info "recorded pid $park for $(calc "$t1 - $t0") s after it parked"

json=$WORKDIR/park.json
export_or_fail "$prof" "$json" --format json --weight latency
json_check "$json"
folded=$WORKDIR/park.latency.folded
export_or_fail "$prof" "$folded" --format folded --weight latency
for sc in read:main\;park_reader epoll_wait:park_poller; do
	name=${sc%%:*} chain=${sc#*:}
	inf=$(json_syscall "$json" "$park" "$name" in_flight)
	got=$(folded_sum_leaf "$folded" sys_park "$chain" "syscall:$name")
	info "$name: json in_flight=$inf; latency under $chain;...;syscall:$name $got ns (expected 1.2e9..$upper)"
	if [ -z "$inf" ] || [ "$inf" -lt 1 ]; then
		json_syscalls_of "$json" "$park"
		fail "json: (pid $park, $name) has in_flight '${inf}', expected >= 1 (the call never returned)"
	fi
	if ! in_range "$got" 1200000000 "$upper"; then
		folded_top "$folded" sys_park 10
		fail "latency under $chain;...;syscall:$name is $got ns, expected 1.2 s .. $upper ns (in flight for the whole recording)"
	fi
done
pass
