#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nginx (Debian's nginx-light) + wrk with --requests: one worker proxying to
# a backend that sleeps 20 ms per request.
#
# Ground truth (from the client, not latprof): wrk sends GET / over 4
# keep-alive connections for 4 s and prints how many requests completed and
# its latency distribution (--latency). nginx proxies each request to a
# Python backend (ThreadingHTTPServer) that sleeps 20 ms before it answers,
# so a request takes tens of milliseconds (wrk's p50 was 64 ms here), far
# above loopback's microseconds that wrk counts and the server does not.
# Checks, `record -p WORKER --requests` around the wrk run:
#   - latprof's request count (requests accepted by the worker, answered)
#     equals wrk's +-1% (wrk leaves out the <= 4 requests in flight when it
#     stops);
#   - latprof's p50 and p99 within 20% of wrk's;
#   - every request is marked shared (nginx serves all its connections on one
#     event loop: the breakdown is proportional) and the report has the
#     Requests section.
# Then the wait rule (docs/syscalls.md, "Idle waits"), `record -p WORKER`
# while a client sends 15 requests one after the other, timing each (its
# clock is the truth), then leaves nginx with nothing to do for 1 s:
#   - the worker's epoll_wait while a proxied request is open is on the
#     path: latency:path >= 85% of the requests' time the client measured,
#     and no more than that time (+2%, +10 ms): its waits between requests
#     stay out;
#   - its waits with no request open are idle: latency:idle >= 85% of the
#     time between the requests and the pause, by the client's clock (its
#     upstream connections, kept alive, do not make it undecided).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_cmd wrk wrk "the nginx test's client"
require_cmd nginx nginx-light "the nginx test"

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bport=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORKDIR/backend.py" <<PY
import http.server, socketserver, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.02)
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", $bport), H).serve_forever()
PY
start_bg "$WORKDIR/backend.out" /usr/bin/python3 "$WORKDIR/backend.py"
mkdir -p "$WORKDIR/logs"
cat >"$WORKDIR/nginx.conf" <<CONF
worker_processes 1;
user root;
pid $WORKDIR/nginx.pid;
error_log $WORKDIR/logs/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	upstream backend { server 127.0.0.1:$bport; keepalive 8; }
	server {
		listen 127.0.0.1:$port;
		location / {
			proxy_pass http://backend;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
CONF
start_bg "$WORKDIR/nginx.out" nginx -p "$WORKDIR" -c "$WORKDIR/nginx.conf" -g 'daemon off;'
master=$BG_PID
for ((i = 0; i < 100; i++)); do
	worker=$(pgrep -P "$master" 2>/dev/null | head -1)
	[ -n "$worker" ] && curl -sf "http://127.0.0.1:$port/" >/dev/null && break
	sleep 0.1
done
# the master dies by SIGKILL at exit, and a worker outlives its master: each
# run left one behind (ten orphans after a day of CI runs)
[ -n "$worker" ] && at_exit kill -KILL "$worker"
curl -sf "http://127.0.0.1:$port/" >/dev/null ||
	{ diag_file nginx "$WORKDIR/nginx.out"; diag_file "error log" "$WORKDIR/logs/error.log"; fail "nginx never answered"; }

prof=$WORKDIR/ngx.pb.gz
record_around_wrk "$worker" "$prof" -t1 -c4 -d4s "http://127.0.0.1:$port/"
# docs/servers.md measured p50 within 0.3% of wrk's, p99 within 1-6%
REQ_P50_TOL=0.03 REQ_P99_TOL=0.12 requests_match_wrk "$prof"
[ "$REQ_SHARED" = "$REQ_N" ] || fail "$REQ_SHARED of $REQ_N requests marked shared on nginx's event loop"
lp_report "$prof" "$WORKDIR/report.txt" || fail "latprof report failed"
grep -q '^Requests' "$WORKDIR/report.txt" || { diag_file report "$WORKDIR/report.txt" 60; fail "the report has no Requests section"; }
# the wait rule
cat >"$WORKDIR/client.py" <<PY
import sys, time, urllib.request
busy = 0
t0 = time.monotonic_ns()
for _ in range(15):
    t = time.monotonic_ns()
    urllib.request.urlopen("http://127.0.0.1:$port/").read()
    busy += time.monotonic_ns() - t
    time.sleep(0.05)
time.sleep(1)
print("busy_ns=%d quiet_ns=%d" % (busy, time.monotonic_ns() - t0 - busy), flush=True)
PY
prof=$WORKDIR/ngw.pb.gz
start_bg "$WORKDIR/lpw.err" "$LATPROF" record -v -p "$worker" -o "$prof"
lp=$BG_PID
wait_for_line "$WORKDIR/lpw.err" "attached after" 20 || { diag_file "latprof stderr" "$WORKDIR/lpw.err"; fail "latprof did not attach"; }
/usr/bin/python3 "$WORKDIR/client.py" >"$WORKDIR/client.out" 2>&1 ||
	{ diag_file client "$WORKDIR/client.out"; fail "the client failed"; }
kill -INT "$lp"
wait "$lp" || { diag_file "latprof stderr" "$WORKDIR/lpw.err"; fail "latprof record exited non-zero"; }
busy=$(kv "$WORKDIR/client.out" "" busy_ns)
quiet=$(kv "$WORKDIR/client.out" "" quiet_ns)
for w in path idle; do
	export_or_fail "$prof" "$WORKDIR/ngw.$w.folded" --format folded --weight latency:$w
done
epoll_sum() { awk '/;syscall:epoll_wait [0-9]+$/ { s += $NF } END { printf "%.0f", s }' "$1"; }
path=$(epoll_sum "$WORKDIR/ngw.path.folded")
idle=$(epoll_sum "$WORKDIR/ngw.idle.folded")
info "worker's epoll_wait: path $path ns (the client measured $busy in requests)," \
	"idle $idle ns (it measured $quiet between them)"
[ "$(calc "($path >= 0.85 * $busy && $path <= 1.02 * $busy + 10000000 && $idle >= 0.85 * $quiet)")" = 1.000 ] || {
	cat "$WORKDIR"/ngw.*.folded | cut -c1-200 | sed 's/^/  | /' >&2
	fail "the worker's waits are not split by requests open"
}
pass "$REQ_N requests (wrk $WRK_N), p50 $REQ_P50 / $WRK_P50 ns, p99 $REQ_P99 / $WRK_P99 ns;" \
	"epoll_wait path $(ratio "$path" "$busy") of the requests' time, idle $(ratio "$idle" "$quiet") of the rest"
