#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding in a PIE and in a fixed-address executable, and through a
# shared library entered by its PLT.
#
# Ground truth (from the fixture, not latprof): nofp_pie and nofp_nopie are
# the same source (nofp_pie.c) built without frame pointers, as a PIE and
# with -no-pie. Each mode runs all its work under main for 1 s of CPU and
# prints the process's CPU time (getrusage):
#   chain: main -> pie_level1 -> pie_level2 -> pie_leaf;
#   plt:   main -> plt_caller -> cos@plt -> libm's cos (__cos_fma here, with
#          inlined helpers), large arguments, so most samples are in libm and
#          a few in the PLT stub itself. (perf record --call-graph dwarf: libm
#          leaves ~85%, main in 100% of the samples.)
# Checks, --unwind dwarf -F 499, for each executable:
#   - chain: the sample count is within +-10% of cpu_time_s x freq; >= 95%
#     of the samples contain main; >= 95% of the pie_leaf samples show
#     main;pie_level1;pie_level2;pie_leaf (consecutive, inline frames aside);
#   - plt: >= 95% of the samples contain main; libm's cos (a frame named
#     cos or __cos*) is in >= 30% of them, and >= 95% of those show
#     main;plt_caller;<cos frame>.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_pie nofp_nopie

freq=499
cosfn='~^(__)?cos(_|$)'	# cos, __cos_fma, __cos_avx2...; not cos@plt
summary=""
for exe in nofp_pie nofp_nopie; do
	for mode in chain plt; do
		name=${exe}_$mode
		record_and_fold "$name" --unwind dwarf -F $freq -- "$FIXTURES/$exe" "$mode" 1
		folded=$WORKDIR/$name.folded
		out=$WORKDIR/$name.out
		cpu_ns=$(kv "$out" "$exe mode=$mode " cpu_ns)
		if [ -z "$cpu_ns" ]; then
			diag_file "command stdout" "$out"
			fail "$exe $mode: the fixture printed no cpu_ns"
		fi
		total=$(folded_sum "$folded" "$exe")
		with_main=$(folded_sum "$folded" "$exe" main)
		expected=$(calc "$cpu_ns / 1e9 * $freq")
		info "$exe $mode: cpu=${cpu_ns}ns expected=$expected samples=$total with main=$with_main ($(ratio "$with_main" "$total"))"
		if [ "$total" = 0 ]; then
			diag_file "folded" "$folded"
			fail "$exe $mode: no samples with comm $exe (comms: $(folded_comms "$folded" | tr '\n' ' '))"
		fi
		if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
			diag_file "record stderr" "$WORKDIR/$name.err"
			fail "$exe $mode: $total samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
		fi
		if ! in_range "$(ratio "$with_main" "$total")" 0.95 1; then
			folded_missing "$folded" "$exe" main 15
			fail "$exe $mode: only $with_main of $total samples contain main (expected >= 0.95)"
		fi
		if [ "$mode" = chain ]; then
			chain="main;pie_level1;pie_level2;pie_leaf"
			hot=$(folded_sum "$folded" "$exe" pie_leaf)
		else
			chain="main;plt_caller;$cosfn"
			hot=$(folded_sum_chain "$folded" "$exe" "$cosfn")
			if ! in_range "$(ratio "$hot" "$total")" 0.30 1; then
				diag_file "folded" "$folded" 30
				fail "$exe plt: libm's cos in only $hot of $total samples (expected >= 0.30)"
			fi
		fi
		full=$(folded_sum_chain "$folded" "$exe" "$chain")
		info "$exe $mode: $chain in $full of $hot ($(ratio "$full" "$hot"))"
		if ! in_range "$(ratio "$full" "$hot")" 0.95 1; then
			folded_with "$folded" "$exe" "${chain##*;}" |
				folded_missing /dev/stdin "$exe" "$chain" 15
			fail "$exe $mode: only $full of $hot samples show $chain (expected >= 0.95)"
		fi
		summary="$summary $exe/$mode=$(ratio "$with_main" "$total")"
	done
done
pass "share with main:$summary"
