#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One session, one set of options (issue 15):
#   1. record and serve take the collector options from one parser: the same
#      bad value gets the same one-line message and exit status 2 from both;
#   2. serve --config FILE works (the file's freq shows in /metrics, its
#      listen address is the one served);
#   3. a profile pulled from serve and one written by record of the same
#      target carry the same run-metadata keys (both come from one session
#      finish), with the same values where they describe the collectors.
# Ground truth: the options given; the keys of record's profile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
require_root_bpf
require_fixture spin
require_cmd curl

# 1. the same bad values, the same answers
bad=(
	"-F 0|invalid frequency '0': want 1..10000 Hz"
	"-F 20000|invalid frequency '20000': want 1..10000 Hz"
	"--mode bogus|invalid --mode 'bogus'"
	"--min-duration -1|invalid --min-duration '-1': want microseconds"
	"--min-block 99999999999|invalid --min-block '99999999999'"
	"--stack-size 10|invalid --stack-size '10': want 1024..32768 bytes"
	"--unwind sideways|invalid --unwind 'sideways'"
	"--syscalls nosuchcall|unknown syscall 'nosuchcall'"
	"--max-requests 0|invalid --max-requests '0'"
	"--debug-dir /nonexistent/dir|invalid --debug-dir '/nonexistent/dir'"
	"--comm=|invalid --comm ''"
	"-p 999999999|invalid pid"
)
n=0
for case in "${bad[@]}"; do
	args=${case%%|*}
	want=${case#*|}
	for verb in record serve; do
		# shellcheck disable=SC2086
		timeout 10 "$LATPROF" $verb $args -a >"$WORKDIR/out" 2>"$WORKDIR/err"
		rc=$?
		[ $rc = 2 ] || { diag_file stderr "$WORKDIR/err"; fail "$verb $args: exit $rc, expected 2"; }
		check_one_line_error "$WORKDIR/err" "$want" "$verb $args"
		cp "$WORKDIR/err" "$WORKDIR/err.$verb"
	done
	cmp -s "$WORKDIR/err.record" "$WORKDIR/err.serve" ||
		fail "$args: record says '$(cat "$WORKDIR/err.record")', serve '$(cat "$WORKDIR/err.serve")'"
	n=$((n + 1))
done
info "$n bad values: record and serve print the same line and exit 2"

# 2. serve --config
port=$(free_port)
cat >"$WORKDIR/serve.yaml" <<YAML
listen: 127.0.0.1:$port
freq: 49
mode: [cpu, syscall]
YAML
start_bg "$WORKDIR/serve_cfg.log" "$LATPROF" serve --config "$WORKDIR/serve.yaml"
SERVE_PID=$BG_PID
wait_for_line "$WORKDIR/serve_cfg.log" "serving on http://127.0.0.1:$port" 15 || {
	diag_file "serve log" "$WORKDIR/serve_cfg.log"
	fail "serve --config did not listen on the file's port $port"
}
curl -s --max-time 30 "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt"
grep -qx 'latprof_sampling_frequency_hertz 49' "$WORKDIR/metrics.txt" || {
	grep sampling "$WORKDIR/metrics.txt"
	fail "serve --config: /metrics does not show the file's freq 49"
}
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
info "serve --config: listens on the file's address, samples at the file's 49 Hz"

# 3. the same target through record and through serve
start_bg "$WORKDIR/spin.out" "$FIXTURES/spin" 60
SPIN=$BG_PID
wait_for_line "$WORKDIR/spin.out" "ready" 5 || fail "spin did not start"
lp_record "$WORKDIR/rec.out" "$WORKDIR/rec.err" -p "$SPIN" -d 2 -F 199 \
	-o "$WORKDIR/rec.pb.gz" || { diag_file "record stderr" "$WORKDIR/rec.err"; fail "record -p failed"; }
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" -p "$SPIN" -F 199
code=$(curl -s -o "$WORKDIR/srv.pb.gz" -w '%{http_code}' --max-time 30 \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=2")
[ "$code" = 200 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "profile request: HTTP $code"; }
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
kill "$SPIN"

# run-metadata keys: not the counters, the per-process and per-syscall
# tallies or the numbered timeline intervals, which depend on what the two
# seconds happened to hold
keys()
{
	profile_meta "$1" | cut -d= -f1 |
		grep -vE '^(count|lost|proc|process|syscall)\.|^timeline\.[0-9]' | sort
}
keys "$WORKDIR/rec.pb.gz" >"$WORKDIR/rec.keys"
keys "$WORKDIR/srv.pb.gz" >"$WORKDIR/srv.keys"
if ! diff "$WORKDIR/rec.keys" "$WORKDIR/srv.keys" >"$WORKDIR/keys.diff"; then
	diag_file "record's keys (<) vs serve's (>)" "$WORKDIR/keys.diff"
	fail "a profile from serve and one from record carry different run-metadata keys"
fi
nk=$(grep -c '' "$WORKDIR/rec.keys")
[ "$nk" -ge 10 ] || fail "only $nk run-metadata keys in record's profile"
for k in freq_hz unwind mode syscall_hooks min_duration_us version kernel; do
	a=$(profile_meta "$WORKDIR/rec.pb.gz" | grep "^$k=")
	b=$(profile_meta "$WORKDIR/srv.pb.gz" | grep "^$k=")
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "$k: record has '$a', serve '$b'"
done
pass "same messages for $n bad values, serve --config, $nk identical run-metadata keys from record and serve"
