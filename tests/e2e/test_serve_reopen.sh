#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve's one session keeps the images of every process it saw, gone ones
# too; past 4,096 gone (a fork and exec leaves two) it opens a fresh one
# at a window's end, which takes over (here past 256,
# LATPROF_DEBUG_RECYCLE_ENDED: thousands of processes in a few seconds lose
# some of their lifecycle events, and with them the count)
# (src/serve_history.c). The fresh one must keep the targets: the command
# serve started (still its child: serve ends with it) and the processes it
# started that live. Here the command starts a waiter, then 300 short-lived
# processes, then waits to be told to end; once the agent says it took a
# fresh session, the waiter execs
# sys_count, which makes 5,000 getppid calls (its own count is the ground
# truth). /metrics must count all of them under its name, a history pull
# must hold them in its syscall statistics, and serve must exit 0 when the
# command does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture sys_count
require_cmd curl curl "GET /metrics"

name=lpreopen$$
name=${name:0:15}
cp "$FIXTURES/sys_count" "$WORKDIR/$name" || fail "cannot copy sys_count"
# FIFOs, not polling: no process but the 300 comes and goes
mkfifo "$WORKDIR/go" "$WORKDIR/done" || fail "mkfifo failed"
cat >"$WORKDIR/cmd.sh" <<SH
( read -r _ <"$WORKDIR/go"
  exec "$WORKDIR/$name" 5000 >"$WORKDIR/count.out" 2>&1 ) &
for i in \$(seq 300); do /bin/true; done
touch "$WORKDIR/churned"
wait
read -r _ <"$WORKDIR/done"
SH
port=$(free_port)
LATPROF_DEBUG_RECYCLE_ENDED=256 start_serve "$WORKDIR/serve.log" "$port" --history-window 1 \
	-- bash "$WORKDIR/cmd.sh"
# the churn done, and the fresh sessions it causes (each process leaves two
# images gone, its fork's and its exec's) over: none for two windows
for ((i = 0; i < 600; i++)); do
	[ -e "$WORKDIR/churned" ] && break
	sleep 0.1
done
[ -e "$WORKDIR/churned" ] || fail "the command did not start 300 processes in 60 s"
fresh=-1
for ((i = 0; i < 20; i++)); do
	n=$(grep -c "history: a fresh session" "$WORKDIR/serve.log")
	[ "$n" = "$fresh" ] && [ "$n" -gt 0 ] && break
	fresh=$n
	sleep 2
done
[ "$fresh" -gt 0 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "no fresh session after 300 processes gone"; }
timeout 10 sh -c "echo >'$WORKDIR/go'" || fail "the command's waiter is gone"
for ((i = 0; i < 100; i++)); do
	[ -s "$WORKDIR/count.out" ] && break
	sleep 0.1
done
calls=$(kv "$WORKDIR/count.out" sys_count getppid)
pid=$(kv "$WORKDIR/count.out" sys_count pid)
[ "$calls" = 5000 ] || { diag_file "sys_count" "$WORKDIR/count.out"; fail "sys_count made '$calls' calls, asked 5000"; }

# the agent drains every second
got=
for ((i = 0; i < 30; i++)); do
	curl -s --max-time 5 "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt" ||
		fail "GET /metrics failed"
	got=$(awk -v sel="comm=\"$name\",syscall=\"getppid\"" '
		index($0, "latprof_syscall_duration_seconds_count{") == 1 && index($0, sel) { print $2 }' \
		"$WORKDIR/metrics.txt")
	[ "$got" = 5000 ] && break
	sleep 0.2
done
info "after $fresh fresh sessions: /metrics counts ${got:-no} getppid of $name's 5000"
[ "$got" = 5000 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "/metrics counts '${got}' getppid calls of $name, it made 5000"; }

# its windows: closed a window on
sleep 1.5
code=$(curl -s --max-time 20 -o "$WORKDIR/win.pb.gz" -w '%{http_code}' \
	"http://127.0.0.1:$port/debug/pprof/profile?history=1&seconds=8")
[ "$code" = 200 ] || fail "history=1&seconds=8: HTTP $code"
"$LATPROF" export --format json -o "$WORKDIR/win.json" "$WORKDIR/win.pb.gz" ||
	fail "export --format json failed"
wcount=$(json_syscall "$WORKDIR/win.json" "$pid" getppid count)
info "the last 8 s of history: ${wcount:-no} getppid calls of pid $pid"
[ "$wcount" = 5000 ] || fail "the history holds '${wcount}' getppid calls of pid $pid, it made 5000"

# serve ends with its command (still its child after the fresh session)
timeout 10 sh -c "echo >'$WORKDIR/done'" || fail "the command is gone before its end"
for ((i = 0; i < 100; i++)); do
	kill -0 "$SERVE_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$SERVE_PID" 2>/dev/null && { diag_file "serve log" "$WORKDIR/serve.log"; fail "serve still runs 10 s after its command ended"; }
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "serve exited $rc"; }
grep -q "command exited with status 0" "$WORKDIR/serve.log" ||
	{ diag_file "serve log" "$WORKDIR/serve.log"; fail "serve did not say its command exited"; }
pass "a fresh session kept the command's live child: 5000 of 5000 getppid in /metrics and the history; serve ended with its command"
