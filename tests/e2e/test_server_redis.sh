#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Redis (Debian's redis-server) + redis-benchmark with appendfsync always:
# the AOF's fdatasync found and charged to the server's write path.
#
# Ground truth (not from latprof): strace -c counts the server's fdatasync
# calls over the benchmark (every SET's AOF write is flushed and synced
# before the event loop sleeps again: beforeSleep -> flushAppendOnlyFile).
# redis-server on a disk file system, a unix socket, no snapshots;
# redis-benchmark -t set -n 3000 -c 4. Checks, `record -p REDIS`:
#   - latprof's fdatasync count equals strace's (+-2%: strace attaches and
#     detaches a moment apart from latprof);
#   - >= 90% of the slow fdatasync time (calls >= 10 us, with stacks) is under
#     flushAppendOnlyFile (Debian's binary keeps its global symbols; static
#     functions would be "redis-server+0x...");
#   - the report has a slow call site naming flushAppendOnlyFile.
# --min-duration 10 (us): with the default 1 ms, a CI run on a fast disk saw
# all 845 fdatasync calls complete under it and had no stack to check.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_cmd redis-server redis-server "the Redis test"
require_cmd redis-benchmark redis-tools "the Redis test's client"
require_cmd strace strace "the Redis test's ground truth"
disk_workdir
rdir=$DISK_DIR/redis
mkdir -p "$rdir" || fail "cannot create $rdir"
start_bg "$WORKDIR/redis.log" redis-server --port 0 --unixsocket "$rdir/redis.sock" --dir "$rdir" \
	--appendonly yes --appendfsync always --save '' --daemonize no
redis=$BG_PID
for ((i = 0; i < 100; i++)); do
	[ -S "$rdir/redis.sock" ] && break
	sleep 0.05
done
[ -S "$rdir/redis.sock" ] || { diag_file "redis log" "$WORKDIR/redis.log"; fail "redis-server did not start"; }

prof=$WORKDIR/redis.pb.gz
# stopped with SIGTERM once strace has detached (a background job ignores SIGINT)
start_bg "$WORKDIR/lp.err" "$LATPROF" record -v -p "$redis" -d 40 --min-duration 10 -o "$prof"
lp=$BG_PID
# loaded is not attached: -v says when every program is attached
wait_for_line "$WORKDIR/lp.err" "attached after" 20 || { diag_file "latprof stderr" "$WORKDIR/lp.err"; fail "latprof did not attach"; }
start_bg "$WORKDIR/strace.err" strace -f -c -e trace=fdatasync -p "$redis" -o "$WORKDIR/strace.out"
st=$BG_PID
wait_for_line "$WORKDIR/strace.err" "attached" 10 || { diag_file strace "$WORKDIR/strace.err"; fail "strace did not attach"; }
redis-benchmark -s "$rdir/redis.sock" -t set -n 3000 -c 4 -q >"$WORKDIR/bench.out" 2>&1 ||
	{ diag_file redis-benchmark "$WORKDIR/bench.out"; fail "redis-benchmark failed"; }
sleep 0.3
kill -INT "$st"
wait "$st"
kill -TERM "$lp"
wait "$lp" || { diag_file "latprof stderr" "$WORKDIR/lp.err"; fail "latprof record exited non-zero"; }
truth=$(awk '$NF == "fdatasync" { print $4 }' "$WORKDIR/strace.out")
[ "${truth:-0}" -gt 100 ] || { diag_file strace "$WORKDIR/strace.out"; fail "strace counted '$truth' fdatasync: too few"; }

export_or_fail "$prof" "$WORKDIR/redis.json" --format json
count=$(/usr/bin/python3 -c '
import json, sys
print(sum(s["count"] for s in json.load(open(sys.argv[1]))["syscalls"] if s["name"] == "fdatasync"))' "$WORKDIR/redis.json")
export_or_fail "$prof" "$WORKDIR/lat.folded" --format folded --weight latency
read -r slow under < <(awk '/;syscall:fdatasync [0-9]+$/ { t += $NF; if (/;flushAppendOnlyFile;/) u += $NF }
	END { printf "%d %d\n", t, u }' "$WORKDIR/lat.folded")
info "$(tr '\r' '\n' <"$WORKDIR/bench.out" | grep -a 'requests per second' | tail -1); fdatasync: latprof $count, strace $truth; slow $slow ns, $under under flushAppendOnlyFile"
in_range "$(calc "$count / $truth")" 0.98 1.02 || fail "latprof counted $count fdatasync, strace $truth"
[ "$slow" -gt 0 ] || fail "no fdatasync reached the 10 us threshold (tmpfs?)"
in_range "$(calc "$under / $slow")" 0.90 1.0 ||
	{ grep 'syscall:fdatasync' "$WORKDIR/lat.folded" | head -3 | cut -c1-300; fail "only $under of $slow ns of slow fdatasync under flushAppendOnlyFile"; }
lp_report "$prof" "$WORKDIR/report.txt" || fail "latprof report failed"
awk '/^Slow call sites/ { s = 1; next } s && /^[^ ]/ { s = 0 } s && /flushAppendOnlyFile/ { ok = 1 } END { exit !ok }' \
	"$WORKDIR/report.txt" || { diag_file report "$WORKDIR/report.txt" 60; fail "no slow call site names flushAppendOnlyFile"; }
pass "fdatasync $count (strace $truth), $under of $slow slow ns under flushAppendOnlyFile"
