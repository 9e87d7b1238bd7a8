#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A program whose file is in "/" itself, without DWARF, symbolizes. Its
# directory is the empty string, where the search for separate debuginfo
# once read past the end of the string (AddressSanitizer: heap-buffer-overflow in
# link_file_exists_in, found by `record -a` in the sanitized suite).
#
# Ground truth: hot_ab spends 75% of its CPU in hot_a (by construction);
# recorded with -p for 1 s at 499 Hz, hot_a must be named and hold 0.75 +-
# 4 binomial standard errors (at least +-0.07) of the samples in hot_a or
# hot_b.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab

bin=/lp_rootdir_$$
cp "$FIXTURES/hot_ab" "$bin" || fail "cannot copy hot_ab to $bin"
# without DWARF (symbols kept), so separate debuginfo is searched for
strip --strip-debug "$bin" || fail "strip --strip-debug $bin failed"
at_exit rm -f "$bin"
start_bg "$WORKDIR/hot.out" "$bin" 4
record_or_fail root -p "$BG_PID" -d 1 -F 499
export_or_fail "$WORKDIR/root.pb.gz" "$WORKDIR/root.folded" --format folded
comm=$(basename "$bin")
comm=${comm:0:15}
a=$(folded_sum "$WORKDIR/root.folded" "$comm" hot_a)
b=$(folded_sum "$WORKDIR/root.folded" "$comm" hot_b)
info "$bin: $a samples in hot_a, $b in hot_b"
[ "$((a + b))" -gt 0 ] || { folded_top "$WORKDIR/root.folded" "" 5; fail "$bin: no sample in hot_a or hot_b (not symbolized?)"; }
band=$(awk -v n=$((a + b)) 'BEGIN { e = 4 * sqrt(0.1875 / n); if (e < 0.07) e = 0.07; printf "%.3f", e }')
in_range "$(ratio "$a" "$((a + b))")" "$(calc "0.75 - $band")" "$(calc "0.75 + $band")" ||
	fail "$bin: hot_a has $a of $((a + b)) samples, expected 0.75 +- $band"
pass "a program in / symbolizes: hot_a $a of $((a + b))"
