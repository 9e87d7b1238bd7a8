#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Inlined helpers are frames of their own, with the lines eu-addr2line gives.
#
# Ground truth: inl_hot (-O2) spends its CPU in hot_loop, whose body is the
# static inline mix(), itself made of the static inline step(). The lines
# that belong to each function come from eu-addr2line -i over every address
# of hot_loop (nm -S gives its range): for each address, the (function,
# line) pairs of its inline chain.
# Checks, `record -F 499 -- inl_hot 1`:
#   - >= 60% of the samples have hot_loop;mix_[i];step_[i] or
#     hot_loop;mix_[i] (measured: 79%; the loop's own compare and increment are in mix's
#     caller's lines, the hashing in step's);
#   - every (function, line) that the profile gives to step, mix and
#     hot_loop (pprof line records, decoded by pprof_decode.py) is one that
#     eu-addr2line gives for some address of hot_loop.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture inl_hot
command -v eu-addr2line >/dev/null && command -v nm >/dev/null || fail "eu-addr2line and nm are needed"

bin=$FIXTURES/inl_hot
read -r start size < <(nm -S "$bin" | awk '$4 == "hot_loop" { print $1, $2 }')
[ -n "$start" ] || fail "nm finds no hot_loop in $bin"
# eu-addr2line's (function, line) pairs for every byte of hot_loop
/usr/bin/python3 -c "
import sys
s, n = int('$start', 16), int('$size', 16)
print('\n'.join('0x%x' % a for a in range(s, s + n)))" |
	eu-addr2line -f -i -e "$bin" |
	awk 'NR % 2 == 1 { sub(/ inlined at .*/, ""); fn = $0; next }
		{ n = split($0, p, ":"); print fn "\t" p[2] }' | sort -u >"$WORKDIR/truth.txt"
info "eu-addr2line: $(wc -l <"$WORKDIR/truth.txt") (function, line) pairs in hot_loop"

record_or_fail inl -F 499 -- "$bin" 1
folded=$WORKDIR/inl.folded
export_or_fail "$WORKDIR/inl.pb.gz" "$folded" --format folded
total=$(folded_sum "$folded" inl_hot)
inl=$(awk "$FOLDED_AWK"'{ v = folded_parse(); if (!folded_is("inl_hot")) next
	for (i = 1; i < n; i++) if (f[i] == "hot_loop" && f[i + 1] == "mix_[i]") { s += v; break } }
	END { print s + 0 }' "$folded")
info "samples: $inl of $total under hot_loop;mix_[i]"
if [ "$total" -le 0 ] || ! in_range "$(ratio "$inl" "$total")" 0.6 1; then
	folded_top "$folded" inl_hot 8
	fail "$inl of $total samples have hot_loop;mix_[i], expected >= 60%"
fi
grep -q 'hot_loop;mix_\[i\];step_\[i\]' "$folded" || { folded_top "$folded" inl_hot 8; fail "no stack has step_[i] below mix_[i]"; }

/usr/bin/python3 "$_lib_dir/pprof_decode.py" lines "$WORKDIR/inl.pb.gz" |
	awk -F'\t' '$2 == "step" || $2 == "mix" || $2 == "hot_loop" { print $2 "\t" $4 }' |
	sort -u >"$WORKDIR/got.txt"
bad=$(comm -23 "$WORKDIR/got.txt" "$WORKDIR/truth.txt")
info "profile: $(wc -l <"$WORKDIR/got.txt") (function, line) pairs for step/mix/hot_loop"
if [ -n "$bad" ]; then
	echo "$bad" | head -5 | sed 's/^/  | not from eu-addr2line: /'
	fail "the profile has (function, line) pairs that eu-addr2line does not give"
fi
[ "$(wc -l <"$WORKDIR/got.txt")" -ge 3 ] || fail "fewer than 3 (function, line) pairs: lines are missing"
pass "$inl of $total samples through inlined mix/step, every line as eu-addr2line says"
