#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding of several busy threads at once (more threads than CPUs):
# every thread keeps all its samples, each with its own complete stack.
#
# Ground truth (from the fixture, not latprof): `nofp_pie threads 1`, built
# without frame pointers, runs 4 threads named nofp_t0..nofp_t3; thread K
# burns 1 s of its own CPU in clone3 -> start_thread -> nofp_thread ->
# thr_fn_K and prints that CPU time (CLOCK_THREAD_CPUTIME_ID). On the
# 2-CPU development VM the same count check with --unwind fp gave
# 0.985..1.015 of the expected count for every thread in 12 of 12 rounds.
# Checks, --unwind dwarf -F 499, three recordings (a loss that comes and
# goes must show up in one of them), for each thread K:
#   - its samples (comm nofp_tK) are within +-10% of its cpu_time_s x freq:
#     no sample silently dropped or counted twice;
#   - >= 95% of them show clone3;start_thread;nofp_thread (complete up to
#     the thread's outermost frame);
#   - <= 1% of them contain another thread's thr_fn_J (a stack paired with
#     the wrong sample).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_pie

freq=499
root='~^clone3?$;start_thread;nofp_thread'
for round in 1 2 3; do
	name=threads$round
	record_and_fold "$name" --unwind dwarf -F $freq -- "$FIXTURES/nofp_pie" threads 1
	folded=$WORKDIR/$name.folded
	out=$WORKDIR/$name.out
	summary=""
	for k in 0 1 2 3; do
		comm=nofp_t$k
		cpu_ns=$(kv "$out" "nofp_pie thread=$k " cpu_ns)
		if [ -z "$cpu_ns" ]; then
			diag_file "command stdout" "$out"
			fail "round $round: thread $k printed no cpu_ns"
		fi
		n=$(folded_sum "$folded" "$comm")
		full=$(folded_sum_chain "$folded" "$comm" "$root")
		other=$(folded_sum_chain "$folded" "$comm" "~^thr_fn_[0-3]\$" |
			awk -v a="$(folded_sum "$folded" "$comm" "thr_fn_$k")" '{ print $1 - a }')
		expected=$(calc "$cpu_ns / 1e9 * $freq")
		summary="$summary $comm=$n/$expected"
		if ! in_range "$(ratio "$n" "$expected")" 0.90 1.10; then
			info "round $round: thread $k ($comm): cpu=${cpu_ns}ns samples=$n expected=$expected"
			for j in 0 1 2 3; do
				info "round $round: nofp_t$j: $(folded_sum "$folded" "nofp_t$j") samples, cpu $(kv "$out" "nofp_pie thread=$j " cpu_ns)ns"
			done
			diag_file "record stderr" "$WORKDIR/$name.err"
			fail "round $round: thread $comm has $n samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
		fi
		if ! in_range "$(ratio "$full" "$n")" 0.95 1; then
			folded_missing "$folded" "$comm" "$root" 10
			fail "round $round: only $full of $n samples of $comm show clone3;start_thread;nofp_thread"
		fi
		if ! in_range "$(ratio "$other" "$n")" 0 0.01; then
			grep "^$comm;" "$folded" | grep -v "thr_fn_$k[; ]" | grep 'thr_fn_' | head -n 10 |
				sed 's/^/  | /'
			fail "round $round: $other of $n samples of $comm have another thread's thr_fn"
		fi
	done
	info "round $round: samples/expected:$summary"
done
pass
