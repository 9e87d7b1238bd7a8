#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A JIT's perf map names the code it generated.
#
# Ground truth: jit_spin runs ~1 s of CPU in machine code it copied into an
# anonymous executable mapping, and with "perf-map" writes
# /tmp/perf-PID.map naming that code jit_hot_loop (the file format perf
# reads, written as Python 3.12 -X perf and node --perf-basic-prof do).
# Checks, `record -F 499 -- jit_spin 1 perf-map`: >= 90% of jit_spin's
# samples have the leaf jit_hot_loop_[j] (the JIT suffix), and the samples add up to the CPU time
# the program printed x 499 Hz +-10%.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture jit_spin

record_or_fail jit -F 499 -- "$FIXTURES/jit_spin" 1 perf-map
pid=$(kv "$WORKDIR/jit.out" "jit_spin " pid)
cpu=$(kv "$WORKDIR/jit.out" "jit_spin " cpu_ns)
[ -n "$pid" ] || { diag_file "command stdout" "$WORKDIR/jit.out"; fail "jit_spin printed no pid"; }
at_exit rm -f "/tmp/perf-$pid.map"
[ -s "/tmp/perf-$pid.map" ] || fail "jit_spin wrote no /tmp/perf-$pid.map"
folded=$WORKDIR/jit.folded
export_or_fail "$WORKDIR/jit.pb.gz" "$folded" --format folded
total=$(folded_sum "$folded" jit_spin)
named=$(awk "$FOLDED_AWK"'{ v = folded_parse(); if (folded_is("jit_spin") && f[n] == "jit_hot_loop_[j]") s += v } END { print s + 0 }' "$folded")
want=$(calc "$cpu * 499 / 1e9")
info "samples: $named of $total with leaf jit_hot_loop_[j] (cpu x freq = $want)"
if [ "$total" -le 0 ] || ! in_range "$(ratio "$named" "$total")" 0.90 1; then
	folded_top "$folded" jit_spin 5
	fail "$named of $total samples have the leaf jit_hot_loop_[j], expected >= 90%"
fi
in_range "$(ratio "$total" "$want")" 0.9 "$(away_hi 1.1)" || fail "$total samples, expected $want +-10%"
pass "$named of $total samples in jit_hot_loop, named by the perf map"
