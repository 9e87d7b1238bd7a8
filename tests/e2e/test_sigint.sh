#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `record -p PID` stops cleanly on SIGINT and SIGTERM, and on -d.
#
# Ground truth: the target's CPU time from /proc/PID/stat, read before
# latprof starts and after it exits; its samples must lie in
# [0.5, 1.1] x that cpu_time_s x freq (the lower bound leaves room for
# latprof's start-up, the upper one must hold).
# Checks: exit status 0; the profile is complete (export works, go tool pprof
# reads it, spin_work is in it); no temporary file is left next to it; the
# target is still running (and not stopped) afterwards.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture spin
require_cmd go golang-go "go tool pprof reading the profile written on SIGINT"

freq=99
start_bg "$WORKDIR/spin.out" "$FIXTURES/spin" 0
spid=$BG_PID
wait_for_line "$WORKDIR/spin.out" "ready" || fail "spin fixture did not start"

# check_run NAME RC: checks shared by the three ways of stopping.
check_run()
{
	local name=$1 rc=$2 cpu1 exp n r left
	local dir=$WORKDIR/$name prof=$WORKDIR/$name/out.pb.gz
	cpu1=$(proc_cpu_ns "$spid")
	info "$name: exit $rc, stderr: $(head -c 300 "$WORKDIR/$name.err" | tr '\n' ' ')"
	if [ "$rc" != 0 ]; then
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "$name: record exited $rc, expected 0"
	fi
	left=$(ls -A "$dir")
	[ "$left" = out.pb.gz ] || fail "$name: expected only out.pb.gz in the output dir, found: $(echo $left)"
	lp_folded "$prof" "$WORKDIR/$name.folded" || {
		diag_file "export stderr" "$WORKDIR/$name.folded.err"
		fail "$name: export of the profile failed: incomplete profile"
	}
	check_folded_syntax "$WORKDIR/$name.folded"
	n=$(folded_sum "$WORKDIR/$name.folded" spin spin_work)
	exp=$(calc "($cpu1 - $CPU0) / 1e9 * $freq")
	r=$(calc "$n / $exp")
	info "$name: spin_work samples=$n, target cpu while latprof ran x freq=$exp, ratio=$r"
	if ! in_range "$r" 0.5 1.1; then
		diag_file "folded" "$WORKDIR/$name.folded"
		fail "$name: $n spin_work samples, expected [0.5, 1.1] x $exp"
	fi
	kill -0 "$spid" 2>/dev/null || fail "$name: the target process $spid died"
	state=$(awk '{ sub(/^.*\) /, ""); print $1 }' /proc/$spid/stat)
	case $state in
	R | S) ;;
	*) fail "$name: target process $spid left in state $state" ;;
	esac
}

mkdir -p "$WORKDIR/int" "$WORKDIR/term" "$WORKDIR/dur"
CPU0=$(proc_cpu_ns "$spid")
signal_record INT 2 "$WORKDIR/int/out.pb.gz" "$WORKDIR/int.err" -p "$spid" -F $freq
check_run int $?
info "int: exited ${SIG_ELAPSED_S}s after SIGINT"

go_pprof_top "$WORKDIR/int/out.pb.gz" "$WORKDIR/int.pprof" || {
	diag_file "go tool pprof" "$WORKDIR/int.pprof"
	fail "go tool pprof -top cannot read the profile written on SIGINT"
}
grep -q spin_work "$WORKDIR/int.pprof" || {
	diag_file "go tool pprof" "$WORKDIR/int.pprof"
	fail "go tool pprof -top does not show spin_work"
}

CPU0=$(proc_cpu_ns "$spid")
signal_record TERM 1.5 "$WORKDIR/term/out.pb.gz" "$WORKDIR/term.err" -p "$spid" -F $freq
check_run term $?
info "term: exited ${SIG_ELAPSED_S}s after SIGTERM"

CPU0=$(proc_cpu_ns "$spid")
t0=$(date +%s.%N)
lp_record "$WORKDIR/dur.out" "$WORKDIR/dur.err" -p "$spid" -F $freq -d 1 -o "$WORKDIR/dur/out.pb.gz"
rc=$?
elapsed=$(calc "$(date +%s.%N) - $t0")
info "dur: -d 1 took ${elapsed}s"
check_run dur $rc
in_range "$elapsed" 0.9 15 || fail "dur: record -d 1 took ${elapsed}s"
pass
