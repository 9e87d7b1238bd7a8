#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What `latprof top` costs (issue 33: "latprof top's own CPU at most 2% of
# one core at 99 Hz on the demo, and no growth of its memory over a
# 10-minute run"). The workload is the demo (examples/demo/demo_work: a
# request loop of ~2 s CPU with a backend process and a worker), restarted
# in a shell loop for the whole run, and each variant watches it at 99 Hz
# with its default collectors:
#
#   record   latprof record -F 99 (the same session, no looks): the floor
#   batch    latprof top -b -F 99, snapshots to /dev/null
#   screen   latprof top -F 99 on a 200x50 terminal (tmux), redrawn each second
#
# Measured per run: latprof's CPU time (utime + stime, /proc/PID/stat)
# between SETTLE s after the start and the end of the run, as a share of one
# core over that wall time, and its RSS then and at the end. Every variant
# runs once per round, in an order rotated each round.
#
# With -m MINUTES, instead: one run of batch for MINUTES, RSS and CPU
# printed every 30 s (the memory check). -w steady watches one long-lived
# process instead of the demo's loop (tests/fixtures/top_work: a service
# whose processes do not come and go).
#
# Usage: bench/top_cost.sh [-r ROUNDS] [-n SECONDS] [-m MINUTES] [-w demo|steady] [-o FILE]
set -u
. "$(dirname "$0")/lib.sh"

ROUNDS=3
SECS=30
SETTLE=5
MINUTES=
OUT=
WORK=demo
USAGE="[-r ROUNDS] [-n SECONDS] [-m MINUTES] [-w demo|steady] [-o FILE]"
while getopts "r:n:m:w:o:h" opt; do
	case $opt in
	w) WORK=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	n) SECS=$OPTARG ;;
	m) MINUTES=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] && [[ $SECS =~ ^[1-9][0-9]*$ ]] && ((SECS > SETTLE)) || usage
[ -z "$MINUTES" ] || [[ $MINUTES =~ ^[1-9][0-9]*$ ]] || usage
need_root "latprof loads BPF"
need_latprof
has tmux "the screen variant" || die "tmux is needed for the screen variant"
DEMO=$ROOT/build/examples/demo_work
[ -x "$DEMO" ] || make -C "$ROOT" -s build/examples/demo_work || die "cannot build the demo"
VARIANTS="record batch screen"
make_tmp
SOCK=lp-bench-$$
RUNS=$TMP/runs.tsv
case $WORK in
demo) LOOP="while :; do $DEMO >/dev/null; done" ;;
steady) [ -x "$ROOT/build/fixtures/top_work" ] || make -C "$ROOT" -s fixtures ||
		die "cannot build the fixtures"
	LOOP="exec $ROOT/build/fixtures/top_work $TMP/status" ;;
*) usage ;;
esac

# rss_kb PID: VmRSS of PID
rss_kb()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# start VARIANT: latprof watching the demo loop; sets TPID
start()
{
	local i
	TPID=
	case $1 in
	record) "$LATPROF" record -q -F 99 -o "$TMP/rec.pb.gz" -- sh -c "$LOOP" 2>"$TMP/tool.err" &
		TPID=$! ;;
	batch) "$LATPROF" top -b -F 99 -- sh -c "$LOOP" >/dev/null 2>"$TMP/tool.err" &
		TPID=$! ;;
	screen) tmux -L "$SOCK" -f /dev/null new-session -d -x 200 -y 50 \
			"$LATPROF top -F 99 -- sh -c '$LOOP' 2>$TMP/tool.err"
		for ((i = 0; i < 50; i++)); do
			[ -n "$TPID" ] && break
			sleep 0.1
			TPID=$(pgrep -f "^$LATPROF top -F 99 -- sh" | head -n 1)
		done ;;
	esac
	[ -n "$TPID" ] || die "$1: latprof did not start"
}

stop()
{
	local i
	kill -INT "$TPID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$TPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$TPID" 2>/dev/null
	tmux -L "$SOCK" kill-server 2>/dev/null
	pkill -f "^$DEMO" 2>/dev/null
	pkill -f "^$ROOT/build/fixtures/top_work $TMP/status" 2>/dev/null
	wait 2>/dev/null
}

run()
{
	local v=$1 r=$2 c0 c1 t0 t1 rss0 rss1
	start "$v"
	sleep "$SETTLE"
	c0=$(cpu_s "$TPID") t0=$EPOCHREALTIME rss0=$(rss_kb "$TPID")
	sleep $((SECS - SETTLE))
	c1=$(cpu_s "$TPID") t1=$EPOCHREALTIME rss1=$(rss_kb "$TPID")
	stop
	awk -v v="$v" -v r="$r" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
		-v a="$rss0" -v b="$rss1" 'BEGIN {
			printf "%s\t%d\t%.2f\t%d\t%d\n", v, r, 100 * (c1 - c0) / (t1 - t0), a, b }' >>"$RUNS"
}

summary()
{
	local v
	printf "%-8s %22s %22s\n" variant "CPU % of a core" "RSS MB end (settled)"
	printf "%-8s %22s %22s\n" "" "min / median / max" "median"
	for v in $VARIANTS; do
		grep -P "^$v\t" "$RUNS" >"$TMP/v.tsv"
		printf "%-8s %6.2f / %5.2f / %5.2f %15.1f (%.1f)\n" "$v" \
			"$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(calc_mb "$(col_stat "$TMP/v.tsv" 5 med)")" \
			"$(calc_mb "$(col_stat "$TMP/v.tsv" 4 med)")"
	done
	echo "$ROUNDS rounds of ${SECS}s, CPU over the last $((SECS - SETTLE))s of each; the demo in a loop"
}

calc_mb()
{
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

if [ -n "$MINUTES" ]; then
	echo "$BENCH: latprof top -b -F 99 on the $WORK workload for $MINUTES minutes" >&2
	start batch
	c0=$(cpu_s "$TPID") t0=$EPOCHREALTIME
	printf "%8s %10s %12s\n" minute "RSS MB" "CPU % (30s)" | tee "$RUNS"
	for ((s = 30; s <= MINUTES * 60; s += 30)); do
		sleep 30
		c1=$(cpu_s "$TPID") t1=$EPOCHREALTIME
		awk -v m="$s" -v k="$(rss_kb "$TPID")" -v c="$(awk -v a="$c0" -v b="$c1" -v x="$t0" -v y="$t1" \
			'BEGIN { printf "%.2f", 100 * (b - a) / (y - x) }')" \
			'BEGIN { printf "%8.1f %10.1f %12s\n", m / 60, k / 1024, c }' | tee -a "$RUNS"
		c0=$c1 t0=$t1
	done
	stop
	[ -z "$OUT" ] || cp "$RUNS" "$OUT"
	exit 0
fi
run_rounds "the demo in a loop, ${SECS}s a run"
report raw "$RUNS"
