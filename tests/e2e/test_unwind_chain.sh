#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding (--unwind dwarf): complete user stacks through code built
# without frame pointers, ours and glibc's, and the report's Stacks section.
#
# Ground truth (from the fixture, not latprof): nofp_chain, built with
# -fomit-frame-pointer, runs all its work under main: main -> level1 ->
# level2 -> level3 -> chain_leaf, and main -> sort_path -> glibc's qsort (no
# frame pointers) -> cmp_mix, alternating. Only exec, the dynamic loader and
# exit run outside main, a few ms of the 2 s. It prints its own CPU time
# (getrusage) and the CPU time of each path. (perf record --call-graph dwarf
# finds main in 100% of its samples.)
# Checks, --unwind dwarf -F 499:
#   - the process's sample count is within +-10% of cpu_time_s x freq, so
#     no sample is silently dropped for the sake of unwinding;
#   - >= 97% of the process's samples contain main;
#   - >= 95% of the chain_leaf samples contain main;level1;level2;level3;
#     chain_leaf (consecutive, inline frames allowed between), and >= 95% of
#     the cmp_mix samples main;sort_path, then a qsort frame, then cmp_mix;
#   - the chain path's share of samples is within 0.10 of chain_ns / cpu_ns;
#   - report's Stacks line for the PID says dwarf, complete / (complete +
#     truncated) is within 0.02 of the share of samples containing main,
#     truncated = copy + depth + no-unwind-info + bad-read, and the profile's
#     metadata (proc.PID.unwind, .stacks_complete, .truncated_*) holds the
#     same numbers;
#   - last, the text contract: that Stacks entry is one line,
#     "  PID comm  dwarf  complete N  truncated N (copy N, depth N,
#     no-unwind-info N, bad-read N)", and "  PID comm  fp  complete -
#     truncated -" for the fp run.
# With --unwind fp, the share of samples containing main is printed beside
# the dwarf one (no assertion: frame pointers cannot get through this
# binary), and the Stacks line says "fp complete - truncated -".
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_chain

freq=499
declare -A share lines pids
for mode in dwarf fp; do
	name=chain_$mode
	record_and_fold "$name" --unwind "$mode" -F $freq -- "$FIXTURES/nofp_chain" 2
	folded=$WORKDIR/$name.folded
	out=$WORKDIR/$name.out
	cpu_ns=$(kv "$out" "nofp_chain " cpu_ns)
	pid=$(kv "$out" "nofp_chain " pid)
	if [ -z "$cpu_ns" ] || [ -z "$pid" ]; then
		diag_file "command stdout" "$out"
		fail "--unwind $mode: nofp_chain printed no cpu_ns/pid"
	fi
	total=$(folded_sum "$folded" nofp_chain)
	with_main=$(folded_sum "$folded" nofp_chain main)
	if [ "$total" = 0 ]; then
		diag_file "folded" "$folded"
		fail "--unwind $mode: no samples with comm nofp_chain (comms: $(folded_comms "$folded" | tr '\n' ' '))"
	fi
	share[$mode]=$(ratio "$with_main" "$total")
	info "--unwind $mode: samples=$total with main=$with_main (share ${share[$mode]})"

	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report" || {
		diag_file "report stderr" "$WORKDIR/$name.report.err"
		fail "latprof report of the --unwind $mode profile failed"
	}
	report=$WORKDIR/$name.report
	line=$(report_stacks_lines "$report" "$pid")
	lines[$mode]=$line
	pids[$mode]=$pid
	info "--unwind $mode: report: ${line:-(no Stacks line for pid $pid)}"
	if [ -z "$line" ]; then
		awk '/^Stacks/,0' "$report" | head -n 20 | sed 's/^/  | /'
		fail "--unwind $mode: report has no Stacks line for pid $pid"
	fi
	unwind=$(report_stacks "$report" "$pid" unwind)
	[ "$unwind" = "$mode" ] || fail "--unwind $mode: Stacks line says unwind '$unwind', expected $mode"
	profile_meta "$WORKDIR/$name.pb.gz" >"$WORKDIR/$name.meta" ||
		fail "--unwind $mode: cannot read the metadata of $WORKDIR/$name.pb.gz"
	meta_unwind=$(sed -n "s/^proc\.$pid\.unwind=//p" "$WORKDIR/$name.meta")
	if [ "$meta_unwind" != "$mode" ]; then
		grep "^proc\.\|^unwind=" "$WORKDIR/$name.meta" | sed 's/^/  | /'
		fail "--unwind $mode: metadata proc.$pid.unwind is '$meta_unwind', expected $mode"
	fi
	if [ "$mode" = fp ]; then
		c=$(report_stacks "$report" "$pid" complete)
		t=$(report_stacks "$report" "$pid" truncated)
		[ "$c" = - ] && [ "$t" = - ] ||
			fail "--unwind fp: Stacks line has complete '$c' truncated '$t', expected '-' (fp completeness is not measured)"
		continue
	fi

	# --unwind dwarf
	expected=$(calc "$cpu_ns / 1e9 * $freq")
	info "dwarf: cpu=${cpu_ns}ns expected samples=$expected, got $total ($(ratio "$total" "$expected"))"
	if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "dwarf: $total samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
	fi
	if ! in_range "${share[dwarf]}" 0.97 1; then
		folded_missing "$folded" nofp_chain main 15
		fail "dwarf: only $with_main of $total samples (${share[dwarf]}) contain main, expected >= 0.97"
	fi

	leaf=$(folded_sum "$folded" nofp_chain chain_leaf)
	leaf_chain=$(folded_sum_chain "$folded" nofp_chain "main;level1;level2;level3;chain_leaf")
	cmp=$(folded_sum "$folded" nofp_chain cmp_mix)
	cmp_chain=$(folded_sum_chain "$folded" nofp_chain "main;sort_path;*;~qsort;*;cmp_mix")
	info "dwarf: chain_leaf=$leaf (full chain $leaf_chain) cmp_mix=$cmp (via qsort from main $cmp_chain)"
	if [ "$leaf" -lt 100 ] || [ "$cmp" -lt 100 ]; then
		diag_file "folded" "$folded" 40
		fail "dwarf: too few samples in chain_leaf ($leaf) or cmp_mix ($cmp) to judge (expected >= 100 each)"
	fi
	if ! in_range "$(ratio "$leaf_chain" "$leaf")" 0.95 1; then
		folded_with "$folded" nofp_chain chain_leaf | folded_missing /dev/stdin nofp_chain \
			"main;level1;level2;level3;chain_leaf" 15
		fail "dwarf: only $leaf_chain of $leaf chain_leaf samples show main;level1;level2;level3;chain_leaf"
	fi
	if ! in_range "$(ratio "$cmp_chain" "$cmp")" 0.95 1; then
		folded_with "$folded" nofp_chain cmp_mix | folded_missing /dev/stdin nofp_chain \
			"main;sort_path;*;~qsort;*;cmp_mix" 15
		fail "dwarf: only $cmp_chain of $cmp cmp_mix samples show main;sort_path;...qsort...;cmp_mix"
	fi
	chain_ns=$(kv "$out" "nofp_chain " chain_ns)
	truth=$(ratio "$chain_ns" "$cpu_ns")
	got=$(ratio "$(folded_sum "$folded" nofp_chain level1)" "$total")
	info "dwarf: chain path share $got (truth $truth = chain_ns / cpu_ns)"
	if ! in_range "$(calc "$got - $truth")" -0.10 0.10; then
		diag_file "folded" "$folded" 40
		fail "dwarf: chain path (level1) has share $got of the samples, truth $truth +-0.10"
	fi

	# report's Stacks numbers against the folded measure
	c=$(report_stacks "$report" "$pid" complete)
	t=$(report_stacks "$report" "$pid" truncated)
	sum=0
	for k in copy depth no-unwind-info bad-read; do
		v=$(report_stacks "$report" "$pid" "$k")
		[[ $v =~ ^[0-9]+$ ]] || fail "dwarf: Stacks line has no number for '$k': $line"
		sum=$((sum + v))
	done
	[[ $c =~ ^[0-9]+$ ]] && [[ $t =~ ^[0-9]+$ ]] ||
		fail "dwarf: Stacks line has no complete/truncated counts: $line"
	[ "$sum" = "$t" ] ||
		fail "dwarf: truncated $t is not copy + depth + no-unwind-info + bad-read = $sum: $line"
	# the metadata keys hold the same numbers
	for k in stacks_complete:complete truncated_copy:copy truncated_depth:depth \
		 truncated_no_unwind_info:no-unwind-info truncated_bad_read:bad-read; do
		m=$(sed -n "s/^proc\.$pid\.${k%%:*}=//p" "$WORKDIR/$name.meta")
		r=$(report_stacks "$report" "$pid" "${k#*:}")
		if [ "$m" != "$r" ]; then
			grep "^proc\.$pid\." "$WORKDIR/$name.meta" | sed 's/^/  | /'
			fail "dwarf: metadata proc.$pid.${k%%:*}='$m' but the report says ${k#*:} $r"
		fi
	done
	rep=$(ratio "$c" "$((c + t))")
	info "dwarf: report complete share $rep ($c of $((c + t))), folded share with main ${share[dwarf]}"
	if ! in_range "$(calc "$rep - ${share[dwarf]}")" -0.02 0.02; then
		folded_missing "$folded" nofp_chain main 10
		fail "dwarf: report's complete share $rep differs from the folded share with main ${share[dwarf]} by more than 0.02"
	fi
done
info "share of samples containing main: dwarf ${share[dwarf]}, fp ${share[fp]} (fp not asserted)"

# The Stacks section's text is a contract (scripts grep it): a header line
# starting "Stacks", then per process "PID comm mode complete N truncated N"
# and, for dwarf, the reasons "(copy N, depth N, no-unwind-info N,
# bad-read N)" on an indented continuation line, so the report stays within
# 80 columns.
dwarf_re="^ +${pids[dwarf]} +nofp_chain +dwarf +complete [0-9]+ +truncated [0-9]+ +\\(copy [0-9]+, depth [0-9]+, no-unwind-info [0-9]+, bad-read [0-9]+\\)\$"
fp_re="^ +${pids[fp]} +nofp_chain +fp +complete - +truncated -\$"
declare -A nlines=([dwarf]=2 [fp]=1)
for mode in dwarf fp; do
	re=dwarf_re
	[ $mode = fp ] && re=fp_re
	joined=$(printf '%s\n' "${lines[$mode]}" | tr '\n' ' ' | sed 's/ *$//')
	if [ "$(printf '%s\n' "${lines[$mode]}" | grep -c '')" != "${nlines[$mode]}" ] ||
	   awk 'length > 80 { bad = 1 } END { exit !bad }' <<<"${lines[$mode]}" ||
	   ! grep -Eq "${!re}" <<<"$joined"; then
		printf '%s\n' "${lines[$mode]}" | sed 's/^/  | /'
		fail "--unwind $mode: the Stacks entry of pid ${pids[$mode]} is not ${nlines[$mode]} line(s) of <= 80 columns matching /${!re}/"
	fi
done
pass "dwarf ${share[dwarf]} of samples contain main (fp ${share[fp]})"
