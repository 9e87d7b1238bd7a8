#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve's triggers over a quiet run (issue 34, item 2): the spike fixture
# serving requests for 5 minutes (QUIET_S=300) without a spike, watched by an
# agent with 1 s history windows and the p99 rule of test_serve_triggers
# (clock_nanosleep over 15 ms two windows in a row, every_s=1): no file, no firing
# (latprof_trigger_firings_total 0), and the rule was live: the same agent
# then fires once on a 3 s spike at the end of a second fixture run. And
# the history's memory stayed under its cap (latprof_history_memory_bytes
# read every 10 s, --history-max-mb 2, look-back 10 minutes: the cap, not
# the look-back, drops windows).
TEST_BUDGET_S=${TEST_BUDGET_S:-330}
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/serve_lib.sh"
require_root_bpf
require_fixture spike
require_cmd curl curl "the HTTP checks"

quiet_s=${QUIET_S:-300}
dir=$WORKDIR/triggers
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm spike -F 199 --history 10 --history-window 1 \
	--history-max-mb 2 --trigger-dir "$dir" \
	--trigger name=sleepy,syscall=clock_nanosleep,p99_ms=15,windows=2,before_s=5,after_s=1,every_s=1
wait_for_line "$WORKDIR/serve.log" "history: windows" 15 || fail "the history did not start"
base=http://127.0.0.1:$port
start_bg "$WORKDIR/quiet.out" "$FIXTURES/spike" "$quiet_s" 0 0 0 0
fixture=$BG_PID
max_bytes=0
while kill -0 "$fixture" 2>/dev/null; do
	sleep 10
	b=$(curl -s --max-time 5 "$base/metrics" | awk '$1 == "latprof_history_memory_bytes" { print $2 }')
	[ -n "$b" ] && [ "$b" -gt "$max_bytes" ] && max_bytes=$b
done
n=$(ls "$dir" 2>/dev/null | wc -l)
fired=$(curl -s --max-time 5 "$base/metrics" | awk '$1 == "latprof_trigger_firings_total{rule=\"sleepy\"}" { print $2 }')
info "${quiet_s} s quiet: ${n} files, ${fired} firings; history memory at most ${max_bytes} bytes"
[ "$n" = 0 ] || { ls -l "$dir"; diag_file "serve log" "$WORKDIR/serve.log"; fail "the quiet run saved $n files"; }
[ "$fired" = 0 ] || fail "the quiet run fired the rule $fired times"
[ "$max_bytes" -gt 0 ] && [ "$max_bytes" -le $((2 << 20)) ] || fail "history memory $max_bytes bytes, cap 2 MiB"
"$FIXTURES/spike" 8 3 3 >"$WORKDIR/spike.out" || fail "spike exited $?"
sleep 2
fired=$(curl -s --max-time 5 "$base/metrics" | awk '$1 == "latprof_trigger_firings_total{rule=\"sleepy\"}" { print $2 }')
[ "$fired" = 1 ] || fail "a spike after the quiet run: $fired firings, expected 1 (the rule was not live?)"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited $? after SIGTERM"
pass "no firing in ${quiet_s} s of quiet, one on the spike after; history under its 2 MiB cap"
