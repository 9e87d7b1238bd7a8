#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `record -- COMMAND` that outlives the recording: -d ends it, and so does a
# SIGINT sent to latprof alone. As with perf, the command then gets SIGTERM,
# latprof reaps it, reports its exit status and writes a complete profile.
#
# Ground truth: the spin fixture handles SIGTERM by printing its own CPU time
# (getrusage) and exiting 0; its spin_work samples must be within
# [0.9, 1.1] x that CPU time x freq. The command gets its SIGTERM before the
# programs are detached: sent after the detach, the command spun through it
# unsampled and a short run showed 0.79-0.87 of its CPU.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture spin

freq=999

# check NAME: the command was ended and reaped, the profile matches its CPU.
check()
{
	local name=$1 cpu n exp r
	grep -q "command exited with status 0" "$WORKDIR/$name.err" || {
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "$name: latprof did not report the command's exit status"
	}
	# the command is one process (a held command's first image is its exec's)
	grep -q "wrote .*, 1 process, " "$WORKDIR/$name.err" || {
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "$name: the summary does not count the command as 1 process"
	}
	cpu=$(sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p' "$WORKDIR/$name.out" "$WORKDIR/$name.err.stdout" \
		2>/dev/null | head -n 1)
	[ -n "$cpu" ] || fail "$name: the command did not get SIGTERM (no cpu_ns line)"
	lp_folded "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.folded" || fail "$name: export failed"
	check_folded_syntax "$WORKDIR/$name.folded"
	n=$(folded_sum "$WORKDIR/$name.folded" spin spin_work)
	exp=$(calc "$cpu / 1e9 * $freq")
	r=$(calc "$n / $exp")
	info "$name: spin_work samples=$n, command cpu x freq=$exp, ratio=$r"
	# and one sample either way: a count is whole (4 samples against 4.82
	# failed under load, where the command ran 49 ms of its second)
	in_range "$n" "$(calc "0.9 * $exp - 1")" "$(calc "$(away_hi 1.1) * $exp + 1")" ||
		fail "$name: $n samples, expected [0.9, 1.1] x $exp, +-1"
}

lp_record "$WORKDIR/dur.out" "$WORKDIR/dur.err" -o "$WORKDIR/dur.pb.gz" -F $freq -d 1 \
	-- "$FIXTURES/spin" 0
rc=$?
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/dur.err"; fail "-d: exit $rc"; }
check dur

signal_record INT 1.5 "$WORKDIR/int.pb.gz" "$WORKDIR/int.err" -F $freq -- "$FIXTURES/spin" 0
rc=$?
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/int.err"; fail "SIGINT: exit $rc"; }
info "int: exited ${SIG_ELAPSED_S}s after SIGINT"
in_range "$SIG_ELAPSED_S" 0 3 || fail "SIGINT: latprof took ${SIG_ELAPSED_S}s to stop"
check int
pgrep -x spin >/dev/null && pgrep -a -x spin | grep -q "$FIXTURES/spin 0" &&
	fail "a spin command was left running"
pass
