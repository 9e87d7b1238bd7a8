#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# All threads of a process are sampled and attributed to their own function.
#
# Ground truth: threads4 runs four threads, each burning 400 ms of its own CPU
# in thread_fn_a .. thread_fn_d, and prints each thread's CPU time
# (CLOCK_THREAD_CPUTIME_ID) and the process total (getrusage).
# Checks at -F 199:
#   - each of the four functions appears, with a sample count within +-30% of
#     that thread's cpu_time_s x freq;
#   - the process's sample count is within +-10% of its cpu_time_s x freq.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture threads4

freq=199
record_and_fold thr -F $freq -- "$FIXTURES/threads4" 400
folded=$WORKDIR/thr.folded
out=$WORKDIR/thr.out
total=$(folded_sum "$folded" threads4)
cpu_ns=$(kv "$out" "threads4 pid=" cpu_ns)
[ -n "$cpu_ns" ] || { diag_file "command stdout" "$out"; fail "threads4 printed no cpu_ns"; }
expected=$(calc "$cpu_ns / 1e9 * $freq")
info "process: cpu=${cpu_ns}ns expected=$expected samples=$total"
for fn in thread_fn_a thread_fn_b thread_fn_c thread_fn_d; do
	n=$(folded_sum "$folded" threads4 "$fn")
	t_ns=$(kv "$out" "threads4 fn=$fn " cpu_ns)
	[ -n "$t_ns" ] || { diag_file "command stdout" "$out"; fail "threads4 printed no cpu_ns for $fn"; }
	t_exp=$(calc "$t_ns / 1e9 * $freq")
	info "$fn: cpu=${t_ns}ns expected=$t_exp samples=$n"
	if [ "$n" = 0 ]; then
		diag_file "folded" "$folded" 40
		fail "$fn missing from the folded output"
	fi
	if ! in_range "$(calc "$n / $t_exp")" 0.70 1.30; then
		diag_file "folded" "$folded" 40
		fail "$fn: $n samples, expected $t_exp (thread cpu x $freq Hz) +-30%"
	fi
done
if ! in_range "$(calc "$total / $expected")" 0.90 1.10; then
	diag_file "folded" "$folded" 40
	fail "$total samples for threads4, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
fi
pass
