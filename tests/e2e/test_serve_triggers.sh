#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve's triggers (issue 34, item 2), configured from a YAML file (rules as
# mappings): an agent with 1 s history windows watches the spike fixture,
# which spikes three times (3 s each, 8 s apart), every request blocking
# 20 ms in stall_in_lock during a spike, else sleeping 200 us. Rule
# "sleepy" (clock_nanosleep's p99 over 15 ms two windows in a row: a busy
# machine delays a 200 us sleep by 10 ms at times) fires once per spike: three
# files, none in the quiet seconds between, each rule's first window over
# the threshold starting within one window (1 s, plus 0.5 s of slack for
# the window's alignment) of the spike's start as the fixture printed it;
# each file (5 s before the firing, 4 s after: the whole spike) is record's
# format (latprof report and flamegraph read it) with the rule in its
# metadata, and charges stall_in_lock 85-110% of the time the fixture
# measured there in that spike, most of the file's latency. Rule
# "limited" (the same, every_s=600) saves the first and counts two
# suppressed. /profiles lists the four files, /profiles/NAME serves one
# byte for byte, latprof_trigger_firings_total counts them. An agent
# restarted on the directory lists and serves the four as an earlier run's,
# and removes none. Bad rules exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture spike
require_cmd curl curl "the HTTP checks"

dir=$WORKDIR/triggers
cat >"$WORKDIR/serve.yaml" <<YAML
history: 1
history-window: 1
trigger-dir: $dir
trigger:
  - name: sleepy
    syscall: clock_nanosleep
    p99_ms: 15
    windows: 2
    before_s: 5
    after_s: 4
    every_s: 1
  - name: limited
    syscall: clock_nanosleep
    p99_ms: 15
    windows: 2
    before_s: 2
    after_s: 0
    every_s: 600
YAML
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm spike -F 199 --config "$WORKDIR/serve.yaml"
wait_for_line "$WORKDIR/serve.log" "history: windows" 15 ||
	{ diag_file "latprof serve log" "$WORKDIR/serve.log"; fail "the history did not start"; }
base=http://127.0.0.1:$port
"$FIXTURES/spike" 24 4 3 8 3 >"$WORKDIR/spike.out" || fail "spike exited $?"
# the last spike's file comes after_s = 4 s after its firing, ~1 s after the fixture's end
for ((i = 0; i < 50; i++)); do
	curl -s --max-time 10 -o "$WORKDIR/list.json" "$base/profiles" || fail "GET /profiles failed"
	json_py "$WORKDIR/list.json" 'print(len(j))' >"$WORKDIR/n" ||
		{ diag_file "/profiles" "$WORKDIR/list.json"; fail "/profiles is not JSON"; }
	[ "$(cat "$WORKDIR/n")" -ge 4 ] && break
	sleep 0.2
done
sleep 1	# a fifth file, had there been one, would be due by now
curl -s --max-time 10 -o "$WORKDIR/list.json" "$base/profiles" || fail "GET /profiles failed"
json_py "$WORKDIR/list.json" 'print(len(j))' >"$WORKDIR/n" || fail "/profiles is not JSON"
mapfile -t starts < <(awk -F'[= ]' '/^spike_start=/ { print $2 }' "$WORKDIR/spike.out")
mapfile -t stalls < <(awk -F'[= ]' '/^spike_end=/ { print $4 }' "$WORKDIR/spike.out")
[ ${#starts[@]} = 3 ] || { diag_file "spike output" "$WORKDIR/spike.out"; fail "the fixture printed ${#starts[@]} spikes, expected 3"; }
mapfile -t sleepy < <(ls "$dir" | grep '^sleepy-.*\.pb\.gz$' | sort)
mapfile -t limited < <(ls "$dir" | grep '^limited-.*\.pb\.gz$')
[ ${#sleepy[@]} = 3 ] || { diag_file "latprof serve log" "$WORKDIR/serve.log"; fail "rule sleepy saved ${#sleepy[@]} files over three spikes, expected 3"; }
[ ${#limited[@]} = 1 ] || fail "rule limited (every_s=600) saved ${#limited[@]} files, expected 1"
[ "$(cat "$WORKDIR/n")" = 4 ] || { diag_file "/profiles" "$WORKDIR/list.json"; fail "/profiles lists $(cat "$WORKDIR/n") files, expected 4"; }

for i in 0 1 2; do
	f=$dir/${sleepy[$i]}
	profile_meta "$f" >"$WORKDIR/meta.$i"
	grep -q '^trigger.name=sleepy$' "$WORKDIR/meta.$i" || fail "${sleepy[$i]}: no trigger.name=sleepy in its metadata"
	grep -q '^trigger.rule=name=sleepy,syscall=clock_nanosleep,p99_ms=15,windows=2' "$WORKDIR/meta.$i" ||
		fail "${sleepy[$i]}: the rule is not in its metadata"
	first=$(awk -F= '$1 == "trigger.first_over_ns" { print $2 }' "$WORKDIR/meta.$i")
	d=$(calc "($first - ${starts[$i]}) / 1e9")
	info "spike $((i + 1)): rule's first window over the threshold began ${d} s after the spike's start"
	in_range "$d" -1.5 1.5 || fail "spike $((i + 1)): the rule's first window began $d s from the spike's start, want within one window (1 s, 0.5 s slack)"
	export_or_fail "$f" "$WORKDIR/f$i.folded" --format folded --weight latency
	lat=$(folded_sum "$WORKDIR/f$i.folded" spike)
	stall=$(folded_sum "$WORKDIR/f$i.folded" spike stall_in_lock)
	r=$(ratio "$stall" "${stalls[$i]}")
	info "${sleepy[$i]}: stall_in_lock $r of the spike's own time, $(ratio "$stall" "$lat") of the file's latency"
	in_range "$r" 0.85 1.10 || { folded_top "$WORKDIR/f$i.folded" spike; fail "${sleepy[$i]}: stall_in_lock $r of the fixture's time in the spike, want 0.85..1.10"; }
	in_range "$(ratio "$stall" "$lat")" 0.5 1 || { folded_top "$WORKDIR/f$i.folded" spike; fail "${sleepy[$i]}: stall_in_lock is not most of its latency"; }
	"$LATPROF" report "$f" >"$WORKDIR/report.$i" 2>&1 || fail "latprof report ${sleepy[$i]} exited $?"
	grep -q stall_in_lock "$WORKDIR/report.$i" || { diag_file report "$WORKDIR/report.$i"; fail "latprof report ${sleepy[$i]} has no stall_in_lock"; }
done
"$LATPROF" flamegraph "$dir/${sleepy[0]}" --weight latency -o "$WORKDIR/f0.svg" 2>"$WORKDIR/flame.err" ||
	{ diag_file flamegraph "$WORKDIR/flame.err"; fail "latprof flamegraph ${sleepy[0]} failed"; }
grep -q stall_in_lock "$WORKDIR/f0.svg" || fail "the flame graph of ${sleepy[0]} has no stall_in_lock"

curl -s --max-time 10 -o "$WORKDIR/got.pb.gz" "$base/profiles/${sleepy[1]}" || fail "GET /profiles/${sleepy[1]} failed"
cmp -s "$WORKDIR/got.pb.gz" "$dir/${sleepy[1]}" || fail "/profiles/${sleepy[1]} differs from the file"
c=$(http_code "$base/profiles/..%2Fserve.yaml")
[ "$c" = 404 ] || fail "/profiles/../serve.yaml: HTTP $c, expected 404"
curl -s --max-time 10 "$base/metrics" >"$WORKDIR/metrics.txt"
grep -q '^latprof_trigger_firings_total{rule="sleepy"} 3$' "$WORKDIR/metrics.txt" ||
	{ grep trigger "$WORKDIR/metrics.txt"; fail "latprof_trigger_firings_total of sleepy is not 3"; }
grep -q '^latprof_trigger_firings_total{rule="limited"} 1$' "$WORKDIR/metrics.txt" ||
	fail "latprof_trigger_firings_total of limited is not 1"
grep -q '^latprof_trigger_suppressed_total{rule="limited"} 2$' "$WORKDIR/metrics.txt" ||
	{ grep trigger "$WORKDIR/metrics.txt"; fail "latprof_trigger_suppressed_total of limited is not 2"; }
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "latprof serve log" "$WORKDIR/serve.log"; fail "serve exited $rc after SIGTERM"; }

# restarted on the same directory: the four files are listed (the earlier
# run's, by name) and served, nothing removed
ls "$dir" | sort >"$WORKDIR/files.before"
port=$(free_port)
start_serve "$WORKDIR/serve2.log" "$port" --comm spike -F 199 --config "$WORKDIR/serve.yaml"
wait_for_line "$WORKDIR/serve2.log" "history: windows" 15 ||
	{ diag_file "latprof serve log" "$WORKDIR/serve2.log"; fail "the restarted agent did not start"; }
grep -q "triggers: 4 files of an earlier run in $dir kept$" "$WORKDIR/serve2.log" ||
	{ diag_file "latprof serve log" "$WORKDIR/serve2.log"; fail "the restarted agent did not say it kept 4 files"; }
base=http://127.0.0.1:$port
curl -s --max-time 10 -o "$WORKDIR/list2.json" "$base/profiles" || fail "GET /profiles failed after the restart"
json_py "$WORKDIR/list2.json" 'print("\n".join(sorted(f["name"] for f in j if f["earlier_run"] and f["rule"] is None)))' \
	>"$WORKDIR/listed2" || { diag_file "/profiles" "$WORKDIR/list2.json"; fail "/profiles is not JSON after the restart"; }
ls "$dir" | sort | grep '\.pb\.gz$' | cmp -s - "$WORKDIR/listed2" ||
	{ diag_file "/profiles" "$WORKDIR/list2.json"; fail "after the restart, /profiles does not list the four files as the earlier run's"; }
cmp -s "$WORKDIR/files.before" <(ls "$dir" | sort) || fail "the restart changed the directory"
curl -s --max-time 10 -o "$WORKDIR/got2.pb.gz" "$base/profiles/${sleepy[2]}" || fail "GET /profiles/${sleepy[2]} failed after the restart"
cmp -s "$WORKDIR/got2.pb.gz" "$dir/${sleepy[2]}" || fail "after the restart, /profiles/${sleepy[2]} differs from the file"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "latprof serve log" "$WORKDIR/serve2.log"; fail "the restarted serve exited $rc after SIGTERM"; }

# bad rules: exit 2, one line
for rule in "name=x,p99_ms=10" "syscall=read,p99_ms=10" "name=x,syscall=nosuch,p99_ms=10" \
	    "name=x,cpu_pct=50,slow_calls=3" "name=a/b,cpu_pct=50" "name=x,cpu_pct=abc"; do
	"$LATPROF" serve --listen 127.0.0.1:0 --trigger-dir "$dir" --trigger "$rule" >"$WORKDIR/bad.out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "--trigger '$rule' exited $rc, expected 2"
	check_one_line_error "$WORKDIR/bad.out" "invalid --trigger" "--trigger '$rule'"
done
"$LATPROF" serve --listen 127.0.0.1:0 --trigger name=x,cpu_pct=50 >"$WORKDIR/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "--trigger without --trigger-dir exited $rc, expected 2"
pass "three spikes, three files of sleepy (stall_in_lock), one of limited and two suppressed"
