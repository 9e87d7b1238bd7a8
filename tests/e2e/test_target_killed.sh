#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The target dies from SIGKILL in the middle of a recording: latprof notices,
# stops, and still writes a complete, symbolized profile.
#
# Two ways: `record -p PID` of a spin fixture that is then SIGKILLed, and
# `record -- spin` whose command is SIGKILLed (by PID, found as latprof's
# child). -d 20 would stop latprof long after; it must stop by itself within
# 5 s of the death.
# Ground truth: the target's CPU time from /proc/PID/stat, read just before
# latprof starts and just before the kill, 2 s after latprof says it is
# recording (-p case), or up to the kill (the
# command case reads it the same way); spin_work's samples must lie in
# [0.5, 1.1] x that CPU time x freq (the lower bound leaves room for
# latprof's start-up), and >= 90% of spin's samples must name spin_work (the
# dead process was symbolized, not left as [unknown] or hex). The profile
# must be complete: exit 0, export works, go tool pprof reads it, and no
# temporary file is left next to it. The command case must say the command
# was killed by signal 9.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture spin
require_cmd go golang-go "go tool pprof reading the profile"

freq=199

# check_profile NAME CPU_NS: the profile WORKDIR/NAME/out.pb.gz is complete
# and spin_work's samples match CPU_NS x freq.
check_profile()
{
	local name=$1 cpu=$2 dir=$WORKDIR/$1 total n exp
	local prof=$dir/out.pb.gz
	[ "$(ls -A "$dir")" = out.pb.gz ] || fail "$name: expected only out.pb.gz in the output dir, found: $(ls -A "$dir" | tr '\n' ' ')"
	lp_folded "$prof" "$WORKDIR/$name.folded" || {
		diag_file "export stderr" "$WORKDIR/$name.folded.err"
		fail "$name: export of the profile failed: incomplete profile"
	}
	check_folded_syntax "$WORKDIR/$name.folded"
	total=$(folded_sum "$WORKDIR/$name.folded" spin)
	n=$(folded_sum "$WORKDIR/$name.folded" spin spin_work)
	exp=$(calc "$cpu / 1e9 * $freq")
	info "$name: spin_work samples=$n of $total, target cpu x freq=$exp, ratio=$(ratio "$n" "$exp")"
	if [ "$total" -le 0 ] || ! in_range "$(ratio "$n" "$total")" 0.9 1; then
		folded_top "$WORKDIR/$name.folded" spin 5
		fail "$name: $n of $total samples name spin_work, expected >= 90%"
	fi
	in_range "$(ratio "$n" "$exp")" 0.5 "$(away_hi 1.1)" || fail "$name: $n spin_work samples, expected [0.5, 1.1] x $exp"
	go_pprof_top "$prof" "$WORKDIR/$name.top" && grep -q spin_work "$WORKDIR/$name.top" || {
		diag_file "go tool pprof" "$WORKDIR/$name.top"
		fail "$name: go tool pprof cannot read the profile or does not show spin_work"
	}
}

# wait_exit PID NAME: wait up to 5 s for latprof PID to exit; its status.
wait_exit()
{
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$1" 2>/dev/null && fail "$2: latprof still runs 5 s after its target died"
	wait "$1"
}

# -p: the target is killed
mkdir -p "$WORKDIR/pid"
start_bg "$WORKDIR/spin.out" "$FIXTURES/spin" 0
spid=$BG_PID
wait_for_line "$WORKDIR/spin.out" "ready" || fail "spin fixture did not start"
cpu0=$(proc_cpu_ns "$spid")
lp_record "$WORKDIR/pid.out" "$WORKDIR/pid.err" -p "$spid" -F $freq -d 20 -o "$WORKDIR/pid/out.pb.gz" &
lp=$!
# 2 s from the attach (a busy machine can take a second to attach, which
# the lower bound would then have to absorb)
wait_for_line "$WORKDIR/pid.err" "latprof: recording" 60 ||
	{ diag_file "record stderr" "$WORKDIR/pid.err"; fail "-p: record did not say it was recording"; }
sleep 2
cpu1=$(proc_cpu_ns "$spid")
kill -KILL "$spid"
wait_exit $lp "-p"
rc=$?
info "-p: exit $rc: $(tr '\n' ' ' <"$WORKDIR/pid.err")"
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/pid.err"; fail "-p: record exited $rc after its target was killed"; }
check_profile pid $((cpu1 - cpu0))

# -- COMMAND: the command is killed
mkdir -p "$WORKDIR/cmd"
lp_record "$WORKDIR/cmd.out" "$WORKDIR/cmd.err" -F $freq -d 20 -o "$WORKDIR/cmd/out.pb.gz" -- "$FIXTURES/spin" 0 &
lp=$!
wait_for_line "$WORKDIR/cmd.out" "ready" 10 || fail "the spin command did not start"
cpid=$(kv "$WORKDIR/cmd.out" "spin " pid)
[ -n "$cpid" ] && [ -e "/proc/$cpid" ] || fail "cannot find the spin command's pid"
sleep 2
cpu1=$(proc_cpu_ns "$cpid")
kill -KILL "$cpid"
wait_exit $lp "-- COMMAND"
rc=$?
info "command: exit $rc: $(tr '\n' ' ' <"$WORKDIR/cmd.err")"
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/cmd.err"; fail "-- COMMAND: record exited $rc after its command was killed"; }
grep -q "command killed by signal 9" "$WORKDIR/cmd.err" ||
	{ diag_file "record stderr" "$WORKDIR/cmd.err"; fail "-- COMMAND: stderr does not say the command was killed by signal 9"; }
check_profile cmd "$cpu1"
pass
