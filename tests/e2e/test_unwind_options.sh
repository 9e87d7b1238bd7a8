#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# --unwind and --stack-size: bad values are refused like any bad usage, and
# the stack copy size decides whether a deep frameless stack reaches main.
#
# Ground truth: the input itself for the bad values; for the stack size,
# `nofp_leaf 1 24` (no frame pointers) runs its leaf below 24 frames of
# 1 KiB (pad_stack) under main and prints stack_bytes, the measured distance
# from main's frame down to the leaf's stack pointer (~25 KB). A copy of the
# default 16 KiB of stack cannot contain main's return address; 32 KiB can.
# Checks:
#   - --unwind bogus, --stack-size 1023 / 32769 / abc: exit 2, one line on
#     stderr starting "latprof: " naming the option or value, the command
#     not started, nothing left in the output directory;
#   - --stack-size 1024 and 32768 (the limits) are accepted;
#   - nofp_leaf 1 24, --unwind dwarf -F 499, default stack size: <= 5% of
#     the frameless_leaf samples contain main, and the report counts >= 90%
#     of the process's samples as truncated for "copy";
#   - the same with --stack-size 32768: >= 97% of the frameless_leaf samples
#     show main;pad_stack;...;mid_a;mid_b;frameless_leaf, and the report's
#     "copy" count is <= 3% of the samples.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_leaf

# bad NAME PATTERN ARGS...: `latprof record ARGS -- touch DIR/ran` must fail
# with 2 and one line matching PATTERN, without running the command.
bad()
{
	local name=$1 pat=$2 rc d=$WORKDIR/$1
	shift 2
	mkdir -p "$d"
	(cd "$d" && exec timeout -k 5 20 "$LATPROF" record "$@" -o "$d/out.pb.gz" \
		-- touch "$d/ran") >"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.stderr"
	rc=$?
	info "$name: latprof record $* -> $rc: $(head -c 200 "$WORKDIR/$name.stderr" | tr '\n' ' ')"
	if [ "$rc" != 2 ]; then
		diag_file "stderr" "$WORKDIR/$name.stderr"
		fail "$name: latprof record $* exited $rc, expected 2"
	fi
	[ -e "$d/ran" ] && fail "$name: latprof record $*: the command ran although the arguments are bad"
	check_one_line_error "$WORKDIR/$name.stderr" "$pat" "$name: latprof record $*"
	check_dir_empty "$d" "$name: latprof record $*"
}

bad unwind_bogus "bogus|unwind" --unwind bogus
bad unwind_empty "unwind" --unwind ""
bad stack_small "1023|stack" --stack-size 1023
bad stack_big "32769|stack" --stack-size 32769
bad stack_word "abc|stack" --stack-size abc

for size in 1024 32768; do
	lp_record "$WORKDIR/ss$size.out" "$WORKDIR/ss$size.err" --unwind dwarf --stack-size $size \
		-F 99 -o "$WORKDIR/ss$size.pb.gz" -- "$FIXTURES/nofp_leaf" 0.2
	rc=$?
	if [ $rc != 0 ] || [ ! -s "$WORKDIR/ss$size.pb.gz" ]; then
		diag_file "record stderr" "$WORKDIR/ss$size.err"
		fail "--stack-size $size (a limit of 1024..32768) exited $rc or wrote no profile"
	fi
done

freq=499
chain="main;pad_stack;*;mid_a;mid_b;frameless_leaf"
for size in 32768 default; do
	name=deep_$size
	opt=()
	[ "$size" != default ] && opt=(--stack-size "$size")
	record_and_fold "$name" --unwind dwarf "${opt[@]}" -F $freq -- "$FIXTURES/nofp_leaf" 1 24
	folded=$WORKDIR/$name.folded
	out=$WORKDIR/$name.out
	pid=$(kv "$out" "nofp_leaf " pid)
	depth=$(kv "$out" "nofp_leaf " stack_bytes)
	if [ -z "$pid" ] || [ -z "$depth" ]; then
		diag_file "command stdout" "$out"
		fail "stack size $size: nofp_leaf printed no pid/stack_bytes"
	fi
	# the premise: main is well beyond 16 KiB and well within 32 KiB
	in_range "$depth" 18432 30720 ||
		fail "nofp_leaf 1 24: leaf runs $depth bytes below main, expected 18432..30720 (fixture changed?)"
	total=$(folded_sum "$folded" nofp_leaf)
	leaf=$(folded_sum "$folded" nofp_leaf frameless_leaf)
	leaf_main=$(folded_with "$folded" nofp_leaf frameless_leaf | folded_sum /dev/stdin nofp_leaf main)
	full=$(folded_sum_chain "$folded" nofp_leaf "$chain")
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report" || {
		diag_file "report stderr" "$WORKDIR/$name.report.err"
		fail "latprof report of the stack size $size profile failed"
	}
	copy=$(report_stacks "$WORKDIR/$name.report" "$pid" copy)
	line=$(awk '/^Stacks/ { s = 1; next } s && /^[^ ]/ { s = 0 } s' "$WORKDIR/$name.report" |
	       awk -v pid="$pid" '$1 == pid')
	info "stack size $size: leaf $depth bytes below main; samples=$total leaf=$leaf with main=$leaf_main full chain=$full"
	info "stack size $size: report: ${line:-(no Stacks line for pid $pid)}"
	if [ "$leaf" -lt 200 ]; then
		diag_file "folded" "$folded" 30
		fail "stack size $size: only $leaf frameless_leaf samples (expected ~500)"
	fi
	[[ $copy =~ ^[0-9]+$ ]] || {
		awk '/^Stacks/,0' "$WORKDIR/$name.report" | head -n 20 | sed 's/^/  | /'
		fail "stack size $size: no 'copy' count on the report's Stacks line for pid $pid"
	}
	if [ "$size" = default ]; then
		if ! in_range "$(ratio "$leaf_main" "$leaf")" 0 0.05; then
			folded_with "$folded" nofp_leaf "main;*;frameless_leaf" | head -n 10 | sed 's/^/  | /'
			fail "default stack size: $leaf_main of $leaf leaf samples reach main $depth bytes up: more than the documented 16 KiB copied?"
		fi
		if ! in_range "$(ratio "$copy" "$total")" 0.90 1; then
			fail "default stack size: report counts $copy of $total samples truncated by the copy size, expected >= 0.90"
		fi
	else
		if ! in_range "$(ratio "$full" "$leaf")" 0.97 1; then
			folded_with "$folded" nofp_leaf frameless_leaf |
				folded_missing /dev/stdin nofp_leaf "$chain" 10
			fail "--stack-size $size: only $full of $leaf leaf samples show $chain (expected >= 0.97)"
		fi
		if ! in_range "$(ratio "$copy" "$total")" 0 0.03; then
			fail "--stack-size $size: report still counts $copy of $total samples truncated by the copy size"
		fi
	fi
done
pass
