#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `latprof serve` as a pprof endpoint (issue 8): `go tool pprof -top` pulls
# /debug/pprof/profile?seconds=3 over HTTP while hot_ab runs and lists hot_a
# on top (hot_ab's own split is 75% hot_a); /debug/pprof/latency and
# /flamegraph answer with their formats. Then the safety rules, on a second
# agent with --token-file and --max-sessions 1: no token / wrong token 401,
# right token 200; HTTPS with --tls-cert/--tls-key, the certificate
# verified against the test's own CA (curl --cacert, no -k); openssl is
# required (make setup installs it); 400 for seconds=0, seconds=100000, hz=abc; 429 for a
# second concurrent profile; 404 for an unknown path; SIGTERM -> exit 0 and
# none of the agent's BPF programs left in `bpftool prog show`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture hot_ab
require_cmd go golang-go "go tool pprof pulling over HTTP"
require_cmd curl curl "the HTTP checks"
require_cmd openssl openssl "the HTTPS check's CA and certificate"

start_bg "$WORKDIR/hot_ab.out" "$FIXTURES/hot_ab" 20
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm hot_ab -F 199

go_pprof_top "http://127.0.0.1:$port/debug/pprof/profile?seconds=3" "$WORKDIR/top.txt"
rc=$?
if [ $rc != 0 ]; then
	diag_file "go tool pprof output" "$WORKDIR/top.txt"
	diag_file "latprof serve log" "$WORKDIR/serve.log"
	fail "go tool pprof -top http://127.0.0.1:$port/debug/pprof/profile?seconds=3 exited $rc"
fi
# the first function row of -top: the hottest
top=$(awk '/flat%/ { on = 1; next } on && NF { print $NF; exit }' "$WORKDIR/top.txt")
if [ "$top" != hot_a ]; then
	diag_file "go tool pprof -top" "$WORKDIR/top.txt" 40
	fail "hottest function over HTTP is '$top', expected hot_a"
fi
share=$(awk '/flat%/ { on = 1; next } on && $NF == "hot_a" { sub("%", "", $2); print $2; exit }' "$WORKDIR/top.txt")
info "go tool pprof over HTTP: hot_a on top with ${share}% flat"

curl -s --max-time 20 -o "$WORKDIR/lat.pb.gz" "http://127.0.0.1:$port/debug/pprof/latency?seconds=1" ||
	fail "GET /debug/pprof/latency failed"
pprof_sums "$WORKDIR/lat.pb.gz" | grep -q '^latency/nanoseconds ' ||
	fail "/debug/pprof/latency has no latency/nanoseconds column: $(pprof_sums "$WORKDIR/lat.pb.gz" | tr '\n' ' ')"
curl -s --max-time 20 -o "$WORKDIR/flame.svg" "http://127.0.0.1:$port/flamegraph?seconds=1&weight=cpu" ||
	fail "GET /flamegraph failed"
svg_check "$WORKDIR/flame.svg" "/flamegraph?seconds=1&weight=cpu"
[ "$(svg_sum "$WORKDIR/flame.svg" hot_a)" -gt 0 ] || fail "/flamegraph has no hot_a frame"

# the safety rules, on an agent with a token and one session
printf 's3cret-token\n' >"$WORKDIR/token"
port2=$(free_port)
start_serve "$WORKDIR/serve2.log" "$port2" --comm hot_ab --token-file "$WORKDIR/token" \
	--max-sessions 1
base=http://127.0.0.1:$port2
auth=(-H "Authorization: Bearer s3cret-token")
c=$(http_code "$base/healthz")
[ "$c" = 401 ] || fail "no token: HTTP $c, expected 401"
c=$(http_code "$base/metrics" -H "Authorization: Bearer s3cret-tokeN")
[ "$c" = 401 ] || fail "wrong token: HTTP $c, expected 401"
c=$(http_code "$base/metrics" -H "Authorization: Bearer s3cret-token-longer")
[ "$c" = 401 ] || fail "token with a suffix: HTTP $c, expected 401"
c=$(http_code "$base/healthz" "${auth[@]}")
[ "$c" = 200 ] || fail "right token: HTTP $c, expected 200"
for q in seconds=0 seconds=100000 hz=abc hz=0 pid=x weight=nope; do
	c=$(http_code "$base/debug/pprof/profile?$q" "${auth[@]}")
	[ "$c" = 400 ] || fail "/debug/pprof/profile?$q: HTTP $c, expected 400"
done
reason=$(curl -s --max-time 5 "${auth[@]}" "$base/debug/pprof/profile?hz=abc")
[ "$(printf '%s\n' "$reason" | wc -l)" = 1 ] && printf '%s' "$reason" | grep -q 'hz' ||
	fail "400 reason is not one line naming hz: '$reason'"
c=$(http_code "$base/no/such/path" "${auth[@]}")
[ "$c" = 404 ] || fail "unknown path: HTTP $c, expected 404"

# two concurrent profiles with --max-sessions 1: the second gets 429
curl -s --max-time 20 -o "$WORKDIR/first.pb.gz" -w '%{http_code}' "${auth[@]}" \
	"$base/debug/pprof/profile?seconds=3" >"$WORKDIR/first.code" &
first=$!
sleep 1
c=$(http_code "$base/debug/pprof/profile?seconds=1" "${auth[@]}")
[ "$c" = 429 ] || fail "second concurrent profile with --max-sessions 1: HTTP $c, expected 429"
wait $first
[ "$(cat "$WORKDIR/first.code")" = 200 ] || fail "first profile: HTTP $(cat "$WORKDIR/first.code")"
c=$(http_code "$base/metrics" "${auth[@]}")
[ "$c" = 200 ] || fail "/metrics after the profiles: HTTP $c"

# HTTPS with --tls-cert/--tls-key: the test's own throwaway CA signs a
# certificate for localhost and 127.0.0.1; curl verifies the served one
# against that CA alone (--cacert, never -k), so a wrong or unsigned
# certificate fails the check.
tls=$WORKDIR/tls
mkdir -p "$tls"
tls_ca "$tls" ca
tls_cert "$tls" server ca localhost 'subjectAltName=DNS:localhost,IP:127.0.0.1'
port3=$(free_port)
start_bg "$WORKDIR/serve3.log" "$LATPROF" serve --listen "127.0.0.1:$port3" --comm hot_ab \
	--tls-cert "$tls/server.crt" --tls-key "$tls/server.key"
wait_for_line "$WORKDIR/serve3.log" "serving on https" 15 ||
	{ diag_file "serve log" "$WORKDIR/serve3.log"; fail "serve with TLS did not start"; }
for url in "https://localhost:$port3/healthz" "https://127.0.0.1:$port3/healthz"; do
	c=$(http_code "$url" --cacert "$tls/ca.crt" --resolve "localhost:$port3:127.0.0.1")
	[ "$c" = 200 ] || fail "HTTPS $url verified against the test CA: HTTP $c, expected 200"
done
# the check can fail: a CA that did not sign the served certificate is refused
tls_ca "$tls" other
c=$(http_code "https://localhost:$port3/healthz" --cacert "$tls/other.crt" --resolve "localhost:$port3:127.0.0.1")
[ "$c" = 000 ] || fail "HTTPS verified against a CA that did not sign the certificate: HTTP $c, expected a TLS failure"
c=$(http_code "http://127.0.0.1:$port3/healthz")
[ "$c" = 000 ] || fail "plain HTTP to the TLS agent: HTTP $c, expected no answer"

# SIGTERM: exit 0, every program of the agent gone
ids=$(bpf_prog_ids "$SERVE_PID")
[ -n "$ids" ] || fail "the agent holds no BPF programs while serving"
kill -TERM "$SERVE_PID"
for ((i = 0; i < 100; i++)); do
	kill -0 "$SERVE_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$SERVE_PID" 2>/dev/null && fail "latprof serve still running 10 s after SIGTERM"
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "serve log" "$WORKDIR/serve2.log"; fail "latprof serve exited $rc after SIGTERM, expected 0"; }
# the kernel frees programs after an RCU grace period: allow it a moment
for ((i = 0; i < 50; i++)); do
	left=$(bpftool -j prog show | /usr/bin/python3 -c '
import json, sys
ids = set(int(x) for x in sys.argv[1:])
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p["id"] in ids))' $ids)
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "BPF programs $left of the agent still loaded after SIGTERM"
pass "hot_a ${share}% via go tool pprof over HTTP; 401/200, 400, 429, 404 as specified; SIGTERM detached $(echo $ids | wc -w) programs"
