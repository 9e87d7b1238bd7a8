#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A process named by -p gets one block of serve's per-CPU syscall array, at
# its first syscall, however often it is named, and a kernel thread named
# by -p gets none (it makes no syscall and never exits, so a block it held
# would never come back). Before, user space claimed a block for each -p
# pid at the start: `-p 2` held one for kthreadd for the agent's life
# (88306ac: "owned by kthreadd: 1").
# Ground truth: the owners in the fast_slots map as bpftool reads it, and
# the workload's own process id.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_cmd curl curl "GET /metrics"
require_cmd bpftool bpftool "reading the fast_slots map"

start_bg "$WORKDIR/loop.out" /usr/bin/python3 -c '
import os, sys, time
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    os.getppid()
    time.sleep(0.01)
'
loop=$BG_PID
wait_for_line "$WORKDIR/loop.out" ready 10 || fail "the workload did not start"
kthreadd=2
[ "$(cat /proc/$kthreadd/comm 2>/dev/null)" = kthreadd ] || skip "pid 2 is not kthreadd here"

port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" -v -v -p "$loop,$loop" -p "$kthreadd"
blocks=$(sed -n 's/.*syscall stats: \([0-9]*\) blocks of the per-CPU array, handed back.*/\1/p' \
	"$WORKDIR/serve.log" | head -1)
[ -n "$blocks" ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "serve logged no block count"; }
[ "$blocks" -gt 0 ] || skip "no block of the per-CPU array fits this machine's CPUs"

# owners PID: how many blocks of the newest fast_slots map PID owns
owners()
{
	local id
	id=$(bpftool -j map show | /usr/bin/python3 -c '
import json, sys
ids = [m["id"] for m in json.load(sys.stdin) if m.get("name") == "fast_slots"]
print(max(ids) if ids else "")')
	[ -n "$id" ] || { echo none; return; }
	bpftool -j map dump id "$id" | /usr/bin/python3 -c '
import json, sys
pid = int(sys.argv[1])
n = 0
for e in json.load(sys.stdin):
    v = e.get("value")
    v = int.from_bytes(bytes(int(b, 16) for b in v), "little") if isinstance(v, list) else int(v)
    n += v == pid
print(n)' "$1"
}

# the loop's first syscalls after attach claim its block
for ((i = 0; i < 50; i++)); do
	[ "$(owners "$loop")" = 1 ] && break
	sleep 0.1
done
got_loop=$(owners "$loop")
got_kthreadd=$(owners "$kthreadd")
info "$blocks blocks; owned by the workload (named twice): $got_loop, by kthreadd: $got_kthreadd"
[ "$got_loop" = 1 ] || {
	diag_file "serve log" "$WORKDIR/serve.log"
	fail "the workload, named twice by -p, owns $got_loop blocks, expected 1"
}
[ "$got_kthreadd" = 0 ] || fail "kthreadd, named by -p, owns $got_kthreadd blocks, expected 0"

curl -s --max-time 5 "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt" || fail "GET /metrics failed"
calls=$(awk 'index($0, "latprof_syscall_duration_seconds_count{") == 1 &&
	index($0, "syscall=\"getppid\"") { n += $2 } END { print n + 0 }' "$WORKDIR/metrics.txt")
[ "$calls" -gt 0 ] || fail "/metrics counts no getppid of the workload"
pass "-p X,X: one block for X ($calls getppid counted); -p 2: none for kthreadd"
