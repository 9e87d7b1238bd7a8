#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Idle waits told apart from waits on the path of work, the same split in
# every output.
#
# Ground truth (from the fixture, not latprof): idle_loop parks 10 x 100 ms
# in epoll_wait under idle_wait() (idle: the rule of docs/syscalls.md) and
# 5 x reads a pipe under do_work() that a helper thread fills 50 ms later
# (on the path; the helper's own 50 ms nanosleeps are on the path too); it
# times both around the syscalls (idle_ns, path_ns). Checks, `record --
# idle_loop`:
#   - report: the first slow call site is do_work's read or the writer's
#     sleep, not the 4x longer epoll_wait; the idle waits are listed apart,
#     their total within 10% of idle_ns, with idle_wait's site;
#   - export --format json: --weight latency:idle totals idle_ns +-10%,
#     latency:path at least 0.9 x path_ns, and the two add up exactly to
#     --weight latency;
#   - the folded stacks of latency:idle and latency:path sum to the same two
#     totals (exact), the pprof profile's samples labelled wait=idle and
#     wait=path too (decoded without latprof), and the SVG of latency:idle
#     says so in its title.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture idle_loop

record_or_fail il -- "$FIXTURES/idle_loop" 10
prof=$WORKDIR/il.pb.gz
out=$WORKDIR/il.out
idle_ns=$(kv "$out" "idle_loop " idle_ns)
path_ns=$(kv "$out" "idle_loop " path_ns)
[ -n "$idle_ns" ] && [ -n "$path_ns" ] || { diag_file "command stdout" "$out"; fail "idle_loop printed no idle_ns/path_ns"; }

report=$WORKDIR/il.report
lp_report "$prof" "$report" || { diag_file "report stderr" "$report.err"; fail "latprof report exited non-zero"; }
sites=$(awk '/^Slow call sites/ { s = 1; next } s && /^[^ ]/ { s = 0 } s' "$report")
first=$(echo "$sites" | awk '$NF ~ /^syscall:/ { print $NF; exit }')
case $first in
syscall:read | syscall:clock_nanosleep | syscall:nanosleep) ;;
*) echo "$sites" | sed 's/^/  | /'; fail "the first slow call site is '$first', not an on-path wait" ;;
esac
idle_line=$(echo "$sites" | grep -A1 'idle waits, apart' | tr '\n' ' ')
[ -n "$idle_line" ] || { echo "$sites" | sed 's/^/  | /'; fail "the report lists no idle waits apart"; }
echo "$sites" | awk '/idle waits, apart/ { s = 1 } s' | grep -q 'idle_wait$' ||
	{ echo "$sites" | sed 's/^/  | /'; fail "no idle site names idle_wait"; }

json_total()
{
	export_or_fail "$prof" "$WORKDIR/$2.json" --format json --weight "$1"
	/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"])' \
		"$WORKDIR/$2.json"
}
all=$(json_total latency all)
idle=$(json_total latency:idle idle)
path=$(json_total latency:path path)
info "truth idle_ns=$idle_ns path_ns=$path_ns; json latency=$all idle=$idle path=$path"
in_range "$(calc "$idle / $idle_ns")" 0.90 1.10 || fail "latency:idle $idle ns, truth $idle_ns +-10%"
awk -v p="$path" -v t="$path_ns" 'BEGIN { exit !(p >= 0.9 * t) }' || fail "latency:path $path ns < 0.9 x $path_ns"
[ $((idle + path)) = "$all" ] || fail "latency:idle $idle + latency:path $path != latency $all"

for w in idle path; do
	export_or_fail "$prof" "$WORKDIR/$w.folded" --format folded --weight "latency:$w"
	sum=$(awk '{ s += $NF } END { printf "%d", s }' "$WORKDIR/$w.folded")
	want=$([ $w = idle ] && echo "$idle" || echo "$path")
	[ "$sum" = "$want" ] || fail "folded latency:$w sums to $sum, json says $want"
	pb=$(/usr/bin/python3 "$(dirname "$0")/pprof_decode.py" labels "$prof" wait |
		awk -v w="$w" '$1 == w && $2 == "latency/nanoseconds" { print $3 }')
	[ "$pb" = "$want" ] || fail "pprof: latency of the samples labelled wait=$w is '$pb', json says $want"
done
timeout -k 5 30 "$LATPROF" flamegraph "$prof" --weight latency:idle -o "$WORKDIR/idle.svg" ||
	fail "flamegraph --weight latency:idle failed"
grep -q 'idle waits only' "$WORKDIR/idle.svg" || fail "the latency:idle SVG does not say idle waits only"
grep -q 'idle_wait' "$WORKDIR/idle.svg" || fail "the latency:idle SVG has no idle_wait frame"
pass "idle $idle ns (truth $idle_ns), path $path ns (truth >= $path_ns), first site $first; report, json, folded, pprof and svg agree"
