#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Target selection: --comm (repeated, including a process started after
# record), -a, and -p with a list of PIDs; all with -d 2.
#
# Ground truth: spinner processes with known comms ("spin", "lp_decoy",
# "lp_other", set by prctl) whose time on CPU is polled from
# /proc/PID/schedstat every 10 ms while the test runs (cpu_poll_start). A
# target's spin_work samples must match its CPU time within the recording's
# own window (the profile's time_ns, when sampling began, and duration_ns):
# N = cpu_s x freq samples expected, within 3 sqrt(N) + 2 (sampling's spread,
# a sample at each edge of the window). About 130 samples each here (3
# spinners sharing 2 CPUs for 2 s at 99 Hz): +-25%. A process that is not a
# target must have no sample at all.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture spin hot_ab

freq=99
start_bg "$WORKDIR/a.out" "$FIXTURES/spin" 40
pa=$BG_PID
start_bg "$WORKDIR/b.out" "$FIXTURES/spin" -n lp_decoy 40
pb=$BG_PID
start_bg "$WORKDIR/c.out" "$FIXTURES/spin" -n lp_other 40
pc=$BG_PID
for f in a b c; do
	wait_for_line "$WORKDIR/$f.out" ready || fail "spin fixture $f did not start"
done

cpu_poll_start "$WORKDIR/cpu.polls" "$pa" "$pb" "$pc"

# expect_target RUN COMM PID: COMM's spin_work samples match PID's CPU time
# (counted for COMM-PID: another test may run a "spin" at the same time)
expect_target()
{
	local folded=$WORKDIR/$1.pid.folded json=$WORKDIR/$1.json n exp lo hi win cpu
	[ -s "$folded" ] || lp_export "$WORKDIR/$1.pb.gz" "$folded" --format folded --per-pid ||
		fail "latprof export --per-pid of $1 failed"
	[ -s "$json" ] || lp_export "$WORKDIR/$1.pb.gz" "$json" --format json ||
		fail "latprof export --format json of $1 failed"
	n=$(folded_sum "$folded" "$2-$3" spin_work)
	win=$(json_py "$json" 'print(j["time_ns"], j["time_ns"] + j["duration_ns"])')
	cpu=$(cpu_window "$WORKDIR/cpu.polls" "$3" $win) || fail "$1: no CPU polls of pid $3 around the window $win"
	exp=$(calc "$cpu / 1e9 * $freq")
	lo=$(calc "$exp - 3 * sqrt($exp) - 2")
	hi=$(calc "$exp + 3 * sqrt($exp) + 2")
	info "$1: $2 (pid $3) spin_work samples=$n, cpu in the window x freq=$exp, want [$lo, $hi]"
	if ! in_range "$n" "$lo" "$hi"; then
		diag_file "folded" "$folded" 30
		fail "$1: $2 has $n spin_work samples, expected $exp (cpu in the window x freq) within [$lo, $hi]"
	fi
}

# expect_absent RUN COMM: COMM has no sample
expect_absent()
{
	local n
	n=$(folded_sum "$WORKDIR/$1.folded" "$2")
	if [ "$n" != 0 ]; then
		diag_file "folded" "$WORKDIR/$1.folded" 30
		fail "$1: $2 is not a target but has $n samples"
	fi
}

# --comm, repeated; hot_ab starts 1 s after record and must be caught too.
( sleep 1; exec "$FIXTURES/hot_ab" 3 ) >"$WORKDIR/late.out" 2>&1 &
late=$!
BG_PIDS="$BG_PIDS $late"
record_and_fold comm --comm spin --comm hot_ab -d 2 -F $freq
expect_target comm spin $pa
expect_absent comm lp_decoy
expect_absent comm lp_other
n=$(folded_sum "$WORKDIR/comm.folded" hot_ab hot_a)
info "comm: late-started hot_ab: hot_a samples=$n"
[ "$n" -gt 0 ] || { diag_file "folded" "$WORKDIR/comm.folded" 30; fail "--comm hot_ab: a process started after record began was not traced"; }
other=$(folded_comms "$WORKDIR/comm.folded" | grep -Ev '^(spin|hot_ab)(-[0-9]+)?$' | tr '\n' ' ')
[ -z "$other" ] || fail "--comm spin --comm hot_ab: samples of other comms: $other"
kill -KILL $late 2>/dev/null
wait $late 2>/dev/null

# -a: every process, the spinners included.
# This latprof runs under a name of its own, so another latprof running on
# the machine at the same time (it is a target of -a) is not mistaken for it.
cp "$LATPROF" "$WORKDIR/lp_selftest"
LATPROF=$WORKDIR/lp_selftest record_and_fold all -a -d 2 -F $freq
expect_target all spin $pa
expect_target all lp_decoy $pb
expect_target all lp_other $pc
# latprof never profiles itself (with dwarf it would unwind its own samples)
self=$(folded_sum "$WORKDIR/all.folded" lp_selftest)
[ "$self" = 0 ] || fail "-a: $self samples of latprof itself"

# -p PID,PID: both listed processes and nothing else.
record_and_fold pids -p "$pa,$pb" -d 2 -F $freq
expect_target pids spin $pa
expect_target pids lp_decoy $pb
expect_absent pids lp_other
other=$(folded_comms "$WORKDIR/pids.folded" | grep -Ev '^(spin|lp_decoy)(-[0-9]+)?$' | tr '\n' ' ')
[ -z "$other" ] || fail "-p $pa,$pb: samples of other comms: $other"
pass
