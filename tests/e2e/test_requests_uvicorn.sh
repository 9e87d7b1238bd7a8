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
timeout -k 5 40 "$LATPROF" record -v -p "$app" --requests -o "$prof" >"$WORKDIR/rec.out" 2>"$WORKDIR/rec.err" &
lp=$!
wait_for_line "$WORKDIR/rec.err" "attached after" 20 || { diag_file "record stderr" "$WORKDIR/rec.err"; fail "latprof record did not attach"; }
wrk -t2 -c2 -d6s --latency "http://127.0.0.1:$port/predict" >"$WORKDIR/wrk.out" 2>&1
sleep 0.5
kill -INT "$lp"
wait "$lp" || { diag_file "record stderr" "$WORKDIR/rec.err"; fail "latprof record failed"; }

# wrk: "  1234 requests in 4.00s, ..." and "     50%   15.20ms" lines
wrk_n=$(awk '/ requests in / { print $1 }' "$WORKDIR/wrk.out")
wrk_ns()
{
	awk -v q="$1" '$1 == q {
		v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		print int(v * (u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : 1)) }' "$WORKDIR/wrk.out"
}
wrk_p50=$(wrk_ns 50%)
wrk_p99=$(wrk_ns 99%)
errors=$(grep -c "Non-2xx\|Socket errors" "$WORKDIR/wrk.out")
[ -n "$wrk_n" ] && [ -n "$wrk_p50" ] && [ "$errors" = 0 ] || { diag_file wrk "$WORKDIR/wrk.out"; fail "wrk failed or saw errors"; }

json=$WORKDIR/uv.json
"$LATPROF" export "$prof" --format json -o "$json" 2>"$WORKDIR/export.err" ||
	{ diag_file "export stderr" "$WORKDIR/export.err"; fail "export --format json failed"; }
read -r n p50 p99 shared cpu <<<"$(json_py "$json" '
r = j["requests"]
print(r["count"], r["p50_ns"], r["p99_ns"], r["shared"], r["average"]["cpu_ns"])')"
info "latprof: $n requests p50=$p50 p99=$p99 shared=$shared avg cpu=$cpu ns; wrk: $wrk_n requests p50=$wrk_p50 p99=$wrk_p99"
in_range "$n" "$(calc "$wrk_n * 0.99")" "$(calc "$wrk_n * 1.01")" || fail "latprof found $n requests, wrk completed $wrk_n (want +-1%)"
in_range "$(ratio "$p50" "$wrk_p50")" 0.80 1.20 || fail "p50 $p50 ns, wrk says $wrk_p50 ns (want +-20%)"
in_range "$(ratio "$p99" "$wrk_p99")" 0.80 1.20 || fail "p99 $p99 ns, wrk says $wrk_p99 ns (want +-20%)"
[ "$shared" = "$n" ] || fail "$shared of $n requests marked shared on uvicorn's event loop"
[ "${cpu:-0}" -gt 0 ] || fail "no CPU in the requests' breakdown"
"$LATPROF" report "$prof" --no-color >"$WORKDIR/report.txt" 2>&1
grep -q "shared event loop: breakdown is proportional" "$WORKDIR/report.txt" ||
	{ diag_file report "$WORKDIR/report.txt" 60; fail "report does not say the breakdown is proportional"; }
pass "$n requests (wrk $wrk_n), p50 $p50 / $wrk_p50 ns, p99 $p99 / $wrk_p99 ns"
