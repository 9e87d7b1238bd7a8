#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Addresses without a symbol are kept, as "[unknown]" or "MODULE+0xOFFSET",
# never dropped and never given a wrong name.
#
# Ground truth:
#   - a stripped copy of hot_ab: `nm` of the unstripped fixture gives hot_a's
#     address range, and hot_a does 75% of the work; so when latprof prints
#     MODULE+0xOFFSET leaves, 68-82% of them must fall inside hot_a's range
#     (the offset is the ELF address = file offset of this PIE's text);
#   - jit_spin runs code from an anonymous executable mapping: >= 90% of its
#     samples must have a leaf that is "[unknown]" or "SOMETHING+0xOFFSET".
# Both: the sample count is within +-10% of the CPU time the program printed
# x freq (-F 499), and no frame is empty.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab jit_spin
command -v nm >/dev/null && command -v strip >/dev/null || fail "binutils (nm, strip) not installed"

freq=499

# leaf_stats FILE COMM: "total unknown_or_offset in_hot_a with_offset" of
# the innermost user frames (the leaf below any kernel frames), where
# in_hot_a counts leaves MODULE+0xOFF with OFF in [HOT_A_LO, HOT_A_HI).
leaf_stats()
{
	awk -v comm="$2" -v lo="${HOT_A_LO:-0}" -v hi="${HOT_A_HI:-0}" "$FOLDED_AWK"'
		function hex(s,   i, c, v) {
			v = 0
			s = tolower(s)
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1))
				v = v * 16 + c - 1
			}
			return v
		}
		{
			cnt = folded_parse()
			if (!folded_is(comm))
				next
			total += cnt
			# the innermost user frame: kernel frames of an interrupt on top
			# belong to the kernel, not the program (more on a busy machine)
			for (i = n; i > 1 && f[i] ~ /_\[k\]$/; i--)
				;
			leaf = f[i]
			if (leaf == "[unknown]") {
				unk += cnt
			} else if (match(leaf, /\+0x[0-9a-fA-F]+$/)) {
				unk += cnt
				off += cnt
				o = hex(substr(leaf, RSTART + 3))
				if (o >= lo && o < hi)
					ina += cnt
			}
		}
		END { print total + 0, unk + 0, ina + 0, off + 0 }' "$1"
}

# Stripped binary.
bin=$WORKDIR/hot_ab_stripped
cp "$FIXTURES/hot_ab" "$bin"
strip "$bin" || fail "strip failed"
read -r lo size < <(nm -S "$FIXTURES/hot_ab" | awk '$4 == "hot_a" { print $1, $2 }')
[ -n "$lo" ] || fail "setup: no hot_a in nm output of $FIXTURES/hot_ab"
HOT_A_LO=$((16#$lo))
HOT_A_HI=$((16#$lo + 16#$size))
record_and_fold stripped -F $freq -- "$bin" 1
cpu=$(kv "$WORKDIR/stripped.out" "hot_ab " cpu_ns)
[ -n "$cpu" ] || fail "stripped hot_ab printed no cpu_ns"
read -r total unk ina off < <(leaf_stats "$WORKDIR/stripped.folded" hot_ab_stripped)
exp=$(calc "$cpu / 1e9 * $freq")
info "stripped: samples=$total expected=$exp; unknown/offset leaves=$unk (with offset $off, in hot_a [$HOT_A_LO, $HOT_A_HI): $ina)"
if ! in_range "$(calc "$total / $exp")" 0.90 "$(away_hi 1.10)"; then
	diag_file "folded" "$WORKDIR/stripped.folded"
	fail "stripped binary: $total samples, expected $exp +-10% (dropped samples?)"
fi
if ! in_range "$(calc "$unk / $total")" 0.90 1; then
	diag_file "folded" "$WORKDIR/stripped.folded"
	fail "stripped binary: only $unk of $total leaves are [unknown] or MODULE+0xOFFSET"
fi
if grep -q ';hot_a\b' "$WORKDIR/stripped.folded"; then
	info "stripped: hot_a was named (symbols found elsewhere, e.g. debug files)"
elif [ "$off" -gt 0 ]; then
	share=$(calc "$ina / $off")
	info "stripped: share of offset leaves inside hot_a = $share"
	if ! in_range "$share" 0.68 0.82; then
		diag_file "folded" "$WORKDIR/stripped.folded"
		fail "stripped binary: $ina of $off MODULE+0xOFFSET leaves fall in hot_a's range (share $share, truth 0.75): wrong offsets"
	fi
else
	info "stripped: leaves are [unknown] only: offset check skipped"
fi

# Anonymous executable memory.
record_and_fold jit -F $freq -- "$FIXTURES/jit_spin" 1
cpu=$(kv "$WORKDIR/jit.out" "jit_spin " cpu_ns)
[ -n "$cpu" ] || fail "jit_spin printed no cpu_ns"
read -r total unk ina off < <(leaf_stats "$WORKDIR/jit.folded" jit_spin)
exp=$(calc "$cpu / 1e9 * $freq")
info "jit: samples=$total expected=$exp; unknown/offset leaves=$unk"
if ! in_range "$(calc "$total / $exp")" 0.90 "$(away_hi 1.10)"; then
	diag_file "folded" "$WORKDIR/jit.folded"
	fail "jit: $total samples, expected $exp +-10% (dropped samples?)"
fi
if ! in_range "$(calc "$unk / $total")" 0.90 1; then
	diag_file "folded" "$WORKDIR/jit.folded"
	fail "jit: only $unk of $total leaves are [unknown] or MODULE+0xOFFSET (a JIT address got a name?)"
fi
pass
