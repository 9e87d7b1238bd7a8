#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Request tracking on an event-loop server: the FastAPI example under uvicorn.
#
# Ground truth (from the client, not latprof): wrk sends GET /predict (a sync
# endpoint: the loop thread reads and writes, an anyio worker thread
# computes for ~15 ms) over 2 keep-alive connections for 6 s and prints how
# many requests completed and its latency distribution (--latency).
# Checks, `record -p APP --requests` around the wrk run:
#   - latprof's request count equals wrk's, +-1% (wrk leaves out the <= 2
#     requests still in flight when it stops; the server may answer them);
#   - latprof's p50 and p99 are within 20% of wrk's;
#   - every request is marked shared (the loop thread accepts and reads:
#     the breakdown is proportional), and the report says so;
#   - the breakdown has CPU (the worker threads' model inference).
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v wrk >/dev/null || skip "wrk not installed"
/usr/bin/python3 -c 'import fastapi, uvicorn, sklearn' 2>/dev/null || skip "python3-fastapi, python3-uvicorn or python3-sklearn missing"
app_dir=$(cd "$(dirname "$0")/../../examples/model_server" && pwd)

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_bg "$WORKDIR/app.out" /usr/bin/python3 "$app_dir/app.py" --port "$port" --backend-port 1 --data-dir "$WORKDIR/data"
app=$BG_PID
for ((i = 0; i < 160; i++)); do
	curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
	kill -0 "$app" 2>/dev/null || { diag_file app "$WORKDIR/app.out"; fail "app.py exited"; }
	sleep 0.25
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { diag_file app "$WORKDIR/app.out"; fail "app.py never answered /healthz"; }
info "app pid $app on port $port"

prof=$WORKDIR/uv.pb.gz
record_around_wrk "$app" "$prof" -t2 -c2 -d6s "http://127.0.0.1:$port/predict"
requests_match_wrk "$prof"
[ "$REQ_SHARED" = "$REQ_N" ] || fail "$REQ_SHARED of $REQ_N requests marked shared on uvicorn's event loop"
[ "${REQ_CPU:-0}" -gt 0 ] || fail "no CPU in the requests' breakdown"
"$LATPROF" report "$prof" --no-color >"$WORKDIR/report.txt" 2>&1
grep -q "shared event loop: breakdown is proportional" "$WORKDIR/report.txt" ||
	{ diag_file report "$WORKDIR/report.txt" 60; fail "report does not say the breakdown is proportional"; }
pass "$REQ_N requests (wrk $WRK_N), p50 $REQ_P50 / $WRK_P50 ns, p99 $REQ_P99 / $WRK_P99 ns"
