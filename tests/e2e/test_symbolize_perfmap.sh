#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A JIT's perf map names the code it generated.
#
# Ground truth: jit_spin runs ~1 s of CPU in machine code it copied into an
# anonymous executable mapping, and with "perf-map" writes
# /tmp/perf-PID.map naming that code jit_hot_loop (the file format perf
# reads, written as Python 3.12 -X perf and node --perf-basic-prof do).
# Checks, `record -F 499 -- jit_spin 1 perf-map`: >= 90% of jit_spin's
# samples have the leaf jit_hot_loop_[j] (the JIT suffix), and the samples add up to the CPU time
# the program printed x 499 Hz +-10%.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
# Then whose map is trusted: anyone can create /tmp/perf-PID.map for a pid
# not theirs, and latprof reads it as root once the process is gone. jit_spin
# runs as nobody (setpriv) and its map is replaced while it runs:
#   - left alone (nobody's, like the process): >= 90% named;
#   - chowned to daemon (planted by another user): nothing named, and -v
#     says "pid N (jit_spin): perf map refused: owned by neither the
#     process's user nor root";
#   - a FIFO: the record ends within its timeout (the read blocked forever),
#     nothing named, and -v says "... perf map refused: not a regular file".
#     Any older latprof -a running beside the test blocks on it too (a soak
#     `serve -a` did, in two threads): the FIFO is opened read-write while it
#     is removed, which gives such a reader a writer, then its end of file.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture jit_spin
command -v setpriv >/dev/null || fail "setpriv (util-linux) not installed"

record_or_fail jit -F 499 -- "$FIXTURES/jit_spin" 1 perf-map
pid=$(kv "$WORKDIR/jit.out" "jit_spin " pid)
cpu=$(kv "$WORKDIR/jit.out" "jit_spin " cpu_ns)
[ -n "$pid" ] || { diag_file "command stdout" "$WORKDIR/jit.out"; fail "jit_spin printed no pid"; }
at_exit rm -f "/tmp/perf-$pid.map"
[ -s "/tmp/perf-$pid.map" ] || fail "jit_spin wrote no /tmp/perf-$pid.map"
folded=$WORKDIR/jit.folded
export_or_fail "$WORKDIR/jit.pb.gz" "$folded" --format folded
total=$(folded_sum "$folded" jit_spin)
named=$(awk "$FOLDED_AWK"'{ v = folded_parse(); if (folded_is("jit_spin") && f[n] == "jit_hot_loop_[j]") s += v } END { print s + 0 }' "$folded")
want=$(calc "$cpu * 499 / 1e9")
info "samples: $named of $total with leaf jit_hot_loop_[j] (cpu x freq = $want)"
if [ "$total" -le 0 ] || ! in_range "$(ratio "$named" "$total")" 0.90 1; then
	folded_top "$folded" jit_spin 5
	fail "$named of $total samples have the leaf jit_hot_loop_[j], expected >= 90%"
fi
in_range "$(ratio "$total" "$want")" 0.9 "$(away_hi 1.1)" || fail "$total samples, expected $want +-10%"

# planted NAME MUTATION: record -v jit_spin as nobody; once its map exists,
# MUTATION runs with the map's path as $1. Sets PL_RC, PL_TOTAL, PL_NAMED.
planted()
{
	local name=$1 mutate=$2 lp jpid map i
	lp_record "$WORKDIR/$name.out" "$WORKDIR/$name.err" -v -F 499 -o "$WORKDIR/$name.pb.gz" \
		-- setpriv --reuid=nobody --regid=nogroup --clear-groups "$FIXTURES/jit_spin" 1 perf-map &
	lp=$!
	# (30 s: a loaded machine's start-up took seconds)
	for ((i = 0; i < 600; i++)); do
		jpid=$(pgrep -n -x -f "$FIXTURES/jit_spin 1 perf-map")
		[ -n "$jpid" ] && [ -s "/tmp/perf-$jpid.map" ] && break
		sleep 0.05
	done
	[ -n "$jpid" ] || { wait $lp; fail "$name: jit_spin did not start"; }
	map=/tmp/perf-$jpid.map
	[ -s "$map" ] || { wait $lp; fail "$name: jit_spin wrote no map ($map)"; }
	at_exit rm -f "$map"
	bash -c "$mutate" - "$map" || fail "$name: cannot plant the map ($mutate)"
	wait $lp
	PL_RC=$?
	[ -p "$map" ] && timeout 5 bash -c 'exec 3<>"$1" && rm -f "$1"' - "$map"
	PL_TOTAL=0 PL_NAMED=0
	[ $PL_RC = 0 ] || return
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.folded" --format folded
	PL_TOTAL=$(folded_sum "$WORKDIR/$name.folded" jit_spin)
	PL_NAMED=$(awk "$FOLDED_AWK"'{ v = folded_parse(); if (folded_is("jit_spin") && f[n] == "jit_hot_loop_[j]") s += v } END { print s + 0 }' "$WORKDIR/$name.folded")
	info "$name: $PL_NAMED of $PL_TOTAL samples named jit_hot_loop"
}

# refused NAME REASON: the map was not used, and -v said why
refused()
{
	[ $PL_RC = 0 ] || { diag_file "record stderr" "$WORKDIR/$1.err" 5; fail "$1: record exited $PL_RC"; }
	[ "$PL_TOTAL" -gt 0 ] || fail "$1: no jit_spin samples"
	[ "$PL_NAMED" = 0 ] || fail "$1: $PL_NAMED of $PL_TOTAL samples named by a map that is not the process's"
	grep -q "(jit_spin): perf map refused: $2" "$WORKDIR/$1.err" ||
		{ diag_file "record stderr" "$WORKDIR/$1.err" 20; fail "$1: -v did not say \"(jit_spin): perf map refused: $2\""; }
}

planted own ':'
[ $PL_RC = 0 ] || { diag_file "record stderr" "$WORKDIR/own.err" 5; fail "own: record exited $PL_RC"; }
[ "$PL_TOTAL" -gt 0 ] && in_range "$(ratio "$PL_NAMED" "$PL_TOTAL")" 0.90 1 ||
	fail "own: $PL_NAMED of $PL_TOTAL samples named by nobody's own map, expected >= 90%"
own=$PL_NAMED/$PL_TOTAL
planted owner 'chown daemon:daemon "$1"'
refused owner "owned by neither the process's user nor root"
planted fifo 'rm -f "$1" && mkfifo -m 644 "$1"'
refused fifo "not a regular file"
pass "$named of $total samples in jit_hot_loop, named by the perf map; as nobody $own named by its own map, none by daemon's or a FIFO"
