#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding from a hot frameless leaf: the whole chain, in order.
#
# Ground truth (from the fixture, not latprof): nofp_leaf, built with
# -fomit-frame-pointer, spends all its time after start-up in
# main -> mid_a -> mid_b -> frameless_leaf, the leaf calling nothing and
# keeping nothing on the stack (its return address is at the stack
# pointer), mid_a holding a pushed register and mid_b a stack array (three
# different CFA rules). It prints its own CPU time (getrusage) and the CPU
# time of the mid_a calls. (perf record --call-graph dwarf shows the full
# chain on every leaf sample.)
# Checks, --unwind dwarf -F 499:
#   - the process's sample count is within +-10% of cpu_time_s x freq;
#   - frameless_leaf has >= 90% of the process's samples (it does nearly all
#     the work: mid_ns / cpu_ns is printed beside it);
#   - >= 97% of the frameless_leaf samples contain
#     main;mid_a;mid_b;frameless_leaf in this order, consecutive but for
#     inline frames ("_[i]").
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_leaf

freq=499
record_and_fold leaf --unwind dwarf -F $freq -- "$FIXTURES/nofp_leaf" 2
folded=$WORKDIR/leaf.folded
out=$WORKDIR/leaf.out
cpu_ns=$(kv "$out" "nofp_leaf " cpu_ns)
mid_ns=$(kv "$out" "nofp_leaf " mid_ns)
if [ -z "$cpu_ns" ] || [ -z "$mid_ns" ]; then
	diag_file "command stdout" "$out"
	fail "nofp_leaf printed no cpu_ns/mid_ns"
fi
total=$(folded_sum "$folded" nofp_leaf)
leaf=$(folded_sum "$folded" nofp_leaf frameless_leaf)
full=$(folded_sum_chain "$folded" nofp_leaf "main;mid_a;mid_b;frameless_leaf")
expected=$(calc "$cpu_ns / 1e9 * $freq")
info "cpu=${cpu_ns}ns mid_a calls=${mid_ns}ns expected=$expected samples=$total"
info "frameless_leaf=$leaf ($(ratio "$leaf" "$total") of the samples; truth <= $(ratio "$mid_ns" "$cpu_ns")), full chain main;mid_a;mid_b;frameless_leaf=$full ($(ratio "$full" "$leaf"))"
if [ "$total" = 0 ]; then
	diag_file "folded" "$folded"
	fail "no samples with comm nofp_leaf (comms: $(folded_comms "$folded" | tr '\n' ' '))"
fi
if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
	diag_file "record stderr" "$WORKDIR/leaf.err"
	fail "$total samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
fi
if ! in_range "$(ratio "$leaf" "$total")" 0.90 1; then
	diag_file "folded" "$folded" 30
	fail "frameless_leaf has only $leaf of $total samples (expected >= 0.90: it does all the work)"
fi
if ! in_range "$(ratio "$full" "$leaf")" 0.97 1; then
	folded_with "$folded" nofp_leaf frameless_leaf |
		folded_missing /dev/stdin nofp_leaf "main;mid_a;mid_b;frameless_leaf" 15
	fail "only $full of $leaf frameless_leaf samples show main;mid_a;mid_b;frameless_leaf (expected >= 0.97)"
fi
pass "$(ratio "$full" "$leaf") of the leaf samples show the whole chain"
