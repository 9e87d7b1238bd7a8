#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A binary deleted, or replaced by another file, after its process started
# still symbolizes: latprof reads the mapped file itself, not the path.
#
# Ground truth: hot_ab spends 75% of its CPU in hot_a (by construction).
# Two running copies: one whose file is removed (/proc/PID/maps says
# "(deleted)"), one whose path now holds a different program (spin) — both
# checked with /proc/PID/maps and the path before recording. Checks, `record
# -p A,B -d 2 -F 499`: for each copy, hot_a's share of the samples in hot_a
# or hot_b is 0.75 +- 4 binomial standard errors (at least +-0.07: about
# +-0.11 for 250 samples; a loaded machine once gave 0.65 of all samples,
# interrupts and other frames included), and no frame of it names spin's
# functions.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab spin

cp "$FIXTURES/hot_ab" "$WORKDIR/hot_gone"
cp "$FIXTURES/hot_ab" "$WORKDIR/hot_swap"
start_bg "$WORKDIR/gone.out" "$WORKDIR/hot_gone" 6
gone=$BG_PID
start_bg "$WORKDIR/swap.out" "$WORKDIR/hot_swap" 6
swap=$BG_PID
sleep 0.3
rm "$WORKDIR/hot_gone"
rm "$WORKDIR/hot_swap" && cp "$FIXTURES/spin" "$WORKDIR/hot_swap"
grep -q 'hot_gone (deleted)' "/proc/$gone/maps" || fail "hot_gone's maps do not say (deleted)"
cmp -s "$WORKDIR/hot_swap" "$FIXTURES/spin" || fail "hot_swap's path does not hold spin"

record_or_fail del -p "$gone,$swap" -d 2 -F 499
folded=$WORKDIR/del.folded
export_or_fail "$WORKDIR/del.pb.gz" "$folded" --format folded
for comm in hot_gone hot_swap; do
	total=$(folded_sum "$folded" "$comm")
	a=$(folded_sum "$folded" "$comm" hot_a)
	b=$(folded_sum "$folded" "$comm" hot_b)
	info "$comm: $a samples in hot_a, $b in hot_b, of $total"
	[ "$((a + b))" -gt 0 ] || { folded_top "$folded" "" 5; fail "no samples of $comm in hot_a or hot_b"; }
	band=$(awk -v n=$((a + b)) 'BEGIN { e = 4 * sqrt(0.1875 / n); if (e < 0.07) e = 0.07; printf "%.3f", e }')
	in_range "$(ratio "$a" "$((a + b))")" "$(calc "0.75 - $band")" "$(calc "0.75 + $band")" ||
		{ folded_top "$folded" "$comm" 6; fail "$comm: hot_a has $a of $((a + b)) samples in hot_a or hot_b, expected 0.75 +- $band"; }
	if awk -v c="$comm" "$FOLDED_AWK"'{ folded_parse(); if (folded_is(c) && /spin_work/) bad = 1 } END { exit !bad }' "$folded"; then
		fail "$comm has frames of spin, the file now at its path"
	fi
done
pass "deleted and replaced binaries symbolize from the mapped file"
