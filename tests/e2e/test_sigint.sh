#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `record -p PID` stops cleanly on SIGINT and SIGTERM, and on -d.
#
# Ground truth: the target's CPU time from /proc/PID/schedstat, polled every
# 10 ms (cpu_poll_start), inside the recording's own window (the profile's
# time_ns, when sampling began, and duration_ns): N = cpu_s x freq samples
# expected, within 3 sqrt(N) + 2 (sampling's spread, plus a sample at each
# edge). The CPU over latprof's whole run, start-up included, said nothing
# under load: a busy machine made start-up 70% of a 2 s run.
# Checks: record says when it is recording (what a script waits for before
# it starts the load: examples/model_server/run.sh); exit status 0; the
# profile is complete (export works, go tool pprof
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
cpu_poll_start "$WORKDIR/cpu.polls" "$spid"

# check_run NAME RC: checks shared by the three ways of stopping.
check_run()
{
	local name=$1 rc=$2 cpu exp n lo hi left win i
	local dir=$WORKDIR/$name prof=$WORKDIR/$name/out.pb.gz
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
	lp_export "$prof" "$WORKDIR/$name.json" --format json || fail "$name: export --format json failed"
	win=$(json_py "$WORKDIR/$name.json" 'print(j["time_ns"], j["time_ns"] + j["duration_ns"])')
	# a poll after the window's end: the poller sleeps 10 ms between polls,
	# but a loaded machine can keep it off a CPU for longer (CI: > 50 ms)
	for ((i = 0; i < 200; i++)); do
		awk -v hi="${win#* }" -v p="$spid" '$2 == p && $1 > hi { f = 1 } END { exit !f }' \
			"$WORKDIR/cpu.polls" && break
		sleep 0.01
	done
	# shellcheck disable=SC2086
	cpu=$(cpu_window "$WORKDIR/cpu.polls" "$spid" $win) || fail "$name: no CPU polls around $win"
	exp=$(calc "$cpu / 1e9 * $freq")
	lo=$(calc "$exp - 3 * sqrt($exp) - 2")
	hi=$(calc "$exp + 3 * sqrt($exp) + 2")
	info "$name: spin_work samples=$n, target cpu in the recording's window x freq=$exp, want [$lo, $hi]"
	if ! in_range "$n" "$lo" "$hi"; then
		diag_file "folded" "$WORKDIR/$name.folded"
		fail "$name: $n spin_work samples, expected $exp +- 3 sqrt(N) + 2"
	fi
	kill -0 "$spid" 2>/dev/null || fail "$name: the target process $spid died"
	state=$(awk '{ sub(/^.*\) /, ""); print $1 }' /proc/$spid/stat)
	case $state in
	R | S) ;;
	*) fail "$name: target process $spid left in state $state" ;;
	esac
}

mkdir -p "$WORKDIR/int" "$WORKDIR/term" "$WORKDIR/dur"
signal_record INT 2 "$WORKDIR/int/out.pb.gz" "$WORKDIR/int.err" -p "$spid" -F $freq
check_run int $?
info "int: exited ${SIG_ELAPSED_S}s after SIGINT"
grep -qxF "latprof: recording until Ctrl-C (SIGINT), then writing $WORKDIR/int/out.pb.gz" "$WORKDIR/int.err" ||
	{ diag_file "record stderr" "$WORKDIR/int.err"; fail "int: record -p did not say it was recording"; }

go_pprof_top "$WORKDIR/int/out.pb.gz" "$WORKDIR/int.pprof" || {
	diag_file "go tool pprof" "$WORKDIR/int.pprof"
	fail "go tool pprof -top cannot read the profile written on SIGINT"
}
grep -q spin_work "$WORKDIR/int.pprof" || {
	diag_file "go tool pprof" "$WORKDIR/int.pprof"
	fail "go tool pprof -top does not show spin_work"
}

signal_record TERM 1.5 "$WORKDIR/term/out.pb.gz" "$WORKDIR/term.err" -p "$spid" -F $freq
check_run term $?
info "term: exited ${SIG_ELAPSED_S}s after SIGTERM"

t0=$(date +%s.%N)
lp_record "$WORKDIR/dur.out" "$WORKDIR/dur.err" -p "$spid" -F $freq -d 1 -o "$WORKDIR/dur/out.pb.gz"
rc=$?
elapsed=$(calc "$(date +%s.%N) - $t0")
info "dur: -d 1 took ${elapsed}s"
check_run dur $rc
in_range "$elapsed" 0.9 15 || fail "dur: record -d 1 took ${elapsed}s"
grep -qxF "latprof: recording for 1 s (Ctrl-C stops it sooner), then writing $WORKDIR/dur/out.pb.gz" \
	"$WORKDIR/dur.err" || { diag_file "record stderr" "$WORKDIR/dur.err"; fail "dur: record -p -d 1 did not say it was recording"; }
pass
