#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `latprof serve` as a flight recorder (issue 34, item 1): an agent keeping
# 1 s windows (--history-window 1) while the spike fixture serves requests
# and, 5 s in, blocks every request in stall_in_lock for 5 s, printing the
# spike's start and end (wall clock) and the time it spent there. After the
# spike, a profile cut out of the history for [T-5 s, T+10 s] charges its
# latency to stall_in_lock, within 85-110% of the fixture's own total (most
# of the profile's latency); one
# for the quiet seconds before the spike has CPU in handle_request and no
# stall_in_lock at all. The windows hold the syscall statistics too: the
# spike's clock_nanosleep calls of 16 ms or more add up to the fixture's
# time in stall_in_lock (85-110%), the quiet seconds' to under 5% of it.
# Then the requests' rules: history=1&seconds=3 is a
# profile; start after end, hz with a history request, a window before the
# agent started (404) are refused; the flame graph of the spike has the
# frame. Window and look-back are short so the test takes ~20 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture spike
require_cmd curl curl "the HTTP checks"

port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm spike -F 199 --history "${HISTORY_MIN:-1}" \
	--history-window 1
wait_for_line "$WORKDIR/serve.log" "history: windows" 15 ||
	{ diag_file "latprof serve log" "$WORKDIR/serve.log"; fail "the history did not start"; }
base=http://127.0.0.1:$port
start_bg "$WORKDIR/spike.out" "$FIXTURES/spike" 16 5 5
fixture=$BG_PID
t_begin=$(date +%s.%N)
wait "$fixture" || fail "spike exited $?"
t=$(kv "$WORKDIR/spike.out" spike_start spike_start)
stall_ns=$(kv "$WORKDIR/spike.out" spike_end stall_ns)
[ -n "$t" ] && [ -n "$stall_ns" ] || { diag_file "spike output" "$WORKDIR/spike.out"; fail "spike printed no spike"; }
# the last window (T+10 s .. the fixture's end, T+11 s) is closed within a
# second; tests/long/test_serve_history_late.sh pulls a minute later
sleep "${PULL_DELAY_S:-1.5}"

t_s=$(calc "$t / 1e9")
curl -s --max-time 20 -o "$WORKDIR/spike.pb.gz" -w '%{http_code}' \
	"$base/debug/pprof/profile?start=$(calc "$t_s - 5")&end=$(calc "$t_s + 10")" >"$WORKDIR/code" ||
	fail "GET the spike's history failed"
[ "$(cat "$WORKDIR/code")" = 200 ] || { diag_file "reply" "$WORKDIR/spike.pb.gz"; fail "the spike's history: HTTP $(cat "$WORKDIR/code")"; }
export_or_fail "$WORKDIR/spike.pb.gz" "$WORKDIR/spike.folded" --format folded --weight latency
lat_total=$(folded_sum "$WORKDIR/spike.folded" spike)
lat_stall=$(folded_sum "$WORKDIR/spike.folded" spike stall_in_lock)
r=$(ratio "$lat_stall" "$stall_ns")
info "[T-5 s, T+10 s]: stall_in_lock ${lat_stall} ns of ${lat_total} ns latency; the fixture's ${stall_ns} ns (ratio $r)"
in_range "$r" 0.85 1.10 || { folded_top "$WORKDIR/spike.folded" spike; fail "the spike's profile charges stall_in_lock $r of the fixture's time, want 0.85..1.10"; }
# the quiet requests' 200 us sleeps are slow too at times (a busy machine)
in_range "$(ratio "$lat_stall" "$lat_total")" 0.5 1 ||
	fail "the spike's profile: stall_in_lock is only $(ratio "$lat_stall" "$lat_total") of its latency"
profile_meta "$WORKDIR/spike.pb.gz" >"$WORKDIR/spike.meta"
grep -q '^history.windows=' "$WORKDIR/spike.meta" || fail "no history.windows in the profile's metadata"
grep -q '^freq_hz=199$' "$WORKDIR/spike.meta" || fail "the history profile lacks record's metadata (freq_hz=199)"

# long_sleeps FILE: the count and total ns of the fixture's clock_nanosleep
# calls of 16 ms or more, from the histogram of a profile's statistics
long_sleeps()
{
	"$LATPROF" export --format json -o "$WORKDIR/stats.json" "$1" ||
		fail "export --format json $1 failed"
	json_py "$WORKDIR/stats.json" '
n = ns = 0
for s in j.get("syscalls", []):
    if s.get("pid") == '"$fixture"' and s.get("name") == "clock_nanosleep":
        for b in s["hist"]:
            if b["low_us"] >= 16384: n += b["count"]; ns += b["sum_ns"]
print(n, ns)'
}
read -r n_long ns_long < <(long_sleeps "$WORKDIR/spike.pb.gz")
r_sys=$(ratio "$ns_long" "$stall_ns")
info "[T-5 s, T+10 s] statistics: $n_long clock_nanosleep calls of 16 ms or more, $ns_long ns (ratio $r_sys)"
in_range "$r_sys" 0.85 1.10 || { json_syscalls_of "$WORKDIR/stats.json" "$fixture"; fail "the spike's syscall statistics hold $r_sys of the fixture's stall in calls of 16 ms or more, want 0.85..1.10"; }

# the quiet seconds: from the fixture's start to a second before the spike
curl -s --max-time 20 -o "$WORKDIR/quiet.pb.gz" -w '%{http_code}' \
	"$base/debug/pprof/profile?start=$(calc "$t_begin + 0.5")&end=$(calc "$t_s - 1")" >"$WORKDIR/code"
[ "$(cat "$WORKDIR/code")" = 200 ] || fail "the quiet history: HTTP $(cat "$WORKDIR/code")"
export_or_fail "$WORKDIR/quiet.pb.gz" "$WORKDIR/quiet.lat" --format folded --weight latency
export_or_fail "$WORKDIR/quiet.pb.gz" "$WORKDIR/quiet.cpu" --format folded --weight cpu
q_stall=$(folded_sum "$WORKDIR/quiet.lat" spike stall_in_lock)
q_cpu=$(folded_sum "$WORKDIR/quiet.cpu" spike handle_request)
info "quiet seconds: stall_in_lock ${q_stall:-0} ns, handle_request ${q_cpu} CPU samples"
[ "${q_stall:-0}" = 0 ] || fail "the quiet seconds charge ${q_stall} ns to stall_in_lock"
[ "$q_cpu" -gt 0 ] || fail "the quiet seconds have no CPU sample in handle_request (an empty profile proves nothing)"
read -r n_long ns_long < <(long_sleeps "$WORKDIR/quiet.pb.gz")
q_calls=$(json_syscall "$WORKDIR/stats.json" "$fixture" clock_nanosleep count)
info "quiet seconds' statistics: ${q_calls:-0} clock_nanosleep calls, $n_long of 16 ms or more"
[ "${q_calls:-0}" -gt 100 ] || fail "the quiet seconds hold ${q_calls:-0} clock_nanosleep calls (an empty window proves nothing)"
# a 200 us sleep stretched past 16 ms by a loaded machine is no stall: the
# spike's range holds some 240 of them, the quiet one must hold next to none
in_range "$(ratio "$ns_long" "$stall_ns")" 0 0.05 || { json_syscalls_of "$WORKDIR/stats.json" "$fixture"; fail "the quiet seconds hold $n_long clock_nanosleep calls of 16 ms or more ($ns_long ns)"; }

c=$(http_code "$base/debug/pprof/profile?history=1&seconds=3")
[ "$c" = 200 ] || fail "history=1&seconds=3: HTTP $c"
c=$(http_code "$base/debug/pprof/profile?start=$(calc "$t_s + 5")&end=$(calc "$t_s")")
[ "$c" = 400 ] || fail "start after end: HTTP $c, expected 400"
c=$(http_code "$base/debug/pprof/profile?start=-10&hz=99")
[ "$c" = 400 ] || fail "hz with a history request: HTTP $c, expected 400"
c=$(http_code "$base/debug/pprof/profile?start=1000&end=2000")
[ "$c" = 404 ] || fail "a window before the agent: HTTP $c, expected 404"
curl -s --max-time 20 -o "$WORKDIR/flame.svg" \
	"$base/flamegraph?weight=latency&start=$(calc "$t_s - 5")&end=$(calc "$t_s + 10")" ||
	fail "GET the spike's flame graph failed"
grep -q stall_in_lock "$WORKDIR/flame.svg" || fail "the spike's flame graph has no stall_in_lock"

kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "latprof serve log" "$WORKDIR/serve.log"; fail "serve exited $rc after SIGTERM"; }
pass "spike charged to stall_in_lock ($r of the fixture's time), the quiet seconds not"
