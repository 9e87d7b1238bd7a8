#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A trigger on the requests' p99 (issue 34, item 2): `serve --requests` with
# 1 s history windows and the rule requests_p99_ms=150 watches req_server.
# First 3 s of /spin requests (20 ms of CPU each, one at a time: p99 well
# under 150 ms), then 20 /sleep requests (200 ms each, --sleep-ms 200, 4 at
# once): the rule
# fires once, during the slow ones (its first window over begins between the
# first slow request and the client's end, both timed here), and the file
# charges handle_sleep 85-110% of the 20 x 200 ms the slow requests slept.
# A rule on requests without --requests is refused (exit 2).
#
# The quiet phase runs one /spin at a time and the threshold is 150 ms, not
# 100: the agent's first symbolization of req_server's stacks takes a core
# for ~60 ms, and with two /spin requests spinning on a 2-CPU machine one of
# them lost it (bpftrace on sched_switch: preempted by latprof 4 times for
# 10-15 ms), so a 20 ms /spin took 72-111 ms and the rule fired early.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture req_server
require_fixture req_client
require_cmd curl curl "the HTTP checks"

dir=$WORKDIR/triggers
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm req_server --requests -F 199 --history 1 \
	--history-window 1 --trigger-dir "$dir" \
	--trigger name=slowreq,requests_p99_ms=150,before_s=3,after_s=1,every_s=1
wait_for_line "$WORKDIR/serve.log" "history: windows" 15 || fail "the history did not start"
start_bg "$WORKDIR/server.out" "$FIXTURES/req_server" --port 0 --sleep-ms 200
wait_for_line "$WORKDIR/server.out" "req_server pid=" 5 || fail "req_server did not start"
sport=$(kv "$WORKDIR/server.out" "req_server pid=" port)
sleep 1.5	# the recorder sees req_server's process
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt $end ]; do
	"$FIXTURES/req_client" --port "$sport" --requests 10 --concurrency 1 --paths /spin \
		>>"$WORKDIR/quiet.out" || fail "req_client /spin failed"
done
t_slow=$(date +%s%N)
"$FIXTURES/req_client" --port "$sport" --requests 20 --concurrency 4 --paths /sleep \
	>"$WORKDIR/slow.out" || fail "req_client /sleep failed"
t_end=$(date +%s%N)
for ((i = 0; i < 50; i++)); do
	[ -n "$(ls "$dir" 2>/dev/null)" ] && break
	sleep 0.2
done
sleep 1.5	# a second file, had there been one, would be due by now
mapfile -t files < <(ls "$dir" 2>/dev/null)
[ ${#files[@]} = 1 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "the requests' rule saved ${#files[@]} files, expected 1"; }
f=$dir/${files[0]}
profile_meta "$f" >"$WORKDIR/meta"
first=$(awk -F= '$1 == "trigger.first_over_ns" { print $2 }' "$WORKDIR/meta")
value=$(awk -F= '$1 == "trigger.value" { print $2 }' "$WORKDIR/meta")
info "fired at p99 $(calc "$value / 1e6") ms; its first window began $(calc "($first - $t_slow) / 1e9") s after the first slow request"
in_range "$first" "$((t_slow - 1000000000))" "$t_end" ||
	fail "the rule's first window over began $(calc "($first - $t_slow) / 1e9") s from the slow requests' start, not during them"
export_or_fail "$f" "$WORKDIR/f.folded" --format folded --weight latency
lat=$(folded_sum "$WORKDIR/f.folded" req_server)
sl=$(folded_sum "$WORKDIR/f.folded" req_server handle_sleep)
r=$(ratio "$sl" $((20 * 200000000)))
info "${files[0]}: handle_sleep $(calc "$sl / 1e9") s, $r of the 20 x 200 ms the slow requests slept"
in_range "$r" 0.85 1.10 || { folded_top "$WORKDIR/f.folded" req_server; fail "the file charges handle_sleep $r of the slow requests' sleep, want 0.85..1.10"; }
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited $? after SIGTERM"

"$LATPROF" serve --listen 127.0.0.1:0 --history 1 --trigger-dir "$dir" --trigger name=r,requests_p99_ms=5 \
	>"$WORKDIR/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "requests_p99_ms without --requests exited $rc, expected 2"
check_one_line_error "$WORKDIR/bad.out" "needs --requests" "requests_p99_ms without --requests"
pass "one file during the slow requests, handle_sleep in it"
