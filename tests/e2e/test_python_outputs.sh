#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Python frames everywhere the stacks go: speedscope, JSON, pprof (read by
# go tool pprof), the SVG flame graph, diff, and the profiles `latprof serve`
# records on request.
#
# Ground truth (not from latprof): tests/fixtures/py_names.py prints the
# source line ranges of burn_a, burn_b and wait_on_pipe (inspect), and its
# main thread spends ~70% of its CPU in burn_a (time.thread_time_ns, also
# printed). test_python_frames.sh checks the folded text and the report for
# every interpreter; this test takes Debian's python3.11 and checks:
#   - speedscope: a frame "burn_a (py_names.py)" whose file is the script's
#     path and whose line is burn_a's first (co_firstlineno, as pprof's
#     start_line); the samples under it are >= 50% of the process's (the
#     main thread's 70%, less start-up and the other threads' few samples);
#   - JSON: a stack under burn_a (py_names.py) ... and one ending in
#     syscall:read under wait_on_pipe (py_names.py) in the latency weight;
#   - pprof: go tool pprof -top lists burn_a (a Function named by its
#     qualified name) with >= 50% of the samples cumulatively;
#   - SVG: the frame text "burn_a (py_names.py)" and Python's legend entry;
#   - diff of the profile against itself names burn_a too;
#   - serve -p PID: /debug/pprof/profile?seconds=2 pulled while the script
#     runs, exported to folded by latprof, has >= 90% of the main thread's
#     samples under run_main (py_names.py) (the whole run is run_main);
#     it is the Python view: no Py_BytesMain frame, where >= 90% of the main
#     thread's samples of /debug/pprof/profile?native=1 have one (the
#     interpreter's start-up frames are above every one of its stacks).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
require_root_bpf
require_tools
PY=/usr/bin/python3.11
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_names.py
[ -x "$PY" ] || skip "no Debian python3.11"
command -v curl >/dev/null || fail "curl is needed (make setup installs it)"

record_and_fold py -F 499 --mode cpu,syscall -- "$PY" "$SCRIPT" mix 2
prof=$WORKDIR/py.pb.gz
out=$WORKDIR/py.out
range=$(sed -n 's/.*burn_a=\([0-9]*-[0-9]*\).*/\1/p' "$out")
[ -n "$range" ] || { diag_file "script output" "$out"; fail "py_names.py printed no line ranges"; }

# speedscope
export_or_fail "$prof" "$WORKDIR/py.speedscope.json" --format speedscope
read -r ok detail < <(/usr/bin/python3 - "$WORKDIR/py.speedscope.json" "$SCRIPT" "$range" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
lo, hi = map(int, sys.argv[3].split("-"))
frames = j["shared"]["frames"]
ids = [i for i, f in enumerate(frames) if f["name"] == "burn_a (py_names.py)"]
good = [i for i in ids if frames[i].get("file") == sys.argv[2] and lo <= frames[i].get("line", 0) <= hi]
main = under = 0
for p in j["profiles"]:
    for s, w in zip(p["samples"], p["weights"]):
        main += w
        if any(i in ids for i in s):
            under += w
print(int(bool(good) and main > 0 and under >= 0.5 * main),
      "burn_a frames %d (file and first line right: %d), %d of %d samples under it" %
      (len(ids), len(good), under, main))
EOF
)
info "speedscope: $detail"
[ "$ok" = 1 ] || fail "speedscope: $detail"

# JSON: CPU and latency weights
export_or_fail "$prof" "$WORKDIR/py.json" --format json
export_or_fail "$prof" "$WORKDIR/lat.json" --format json --weight latency
json_check "$WORKDIR/py.json"
cpu_hits=$(grep -c '"burn_a (py_names.py)"' "$WORKDIR/py.json")
lat_ok=$(json_py "$WORKDIR/lat.json" '
print(sum(1 for s in j["stacks"] if "wait_on_pipe (py_names.py)" in s["frames"]
          and s["frames"][-1] == "syscall:read"))')
info "json: burn_a in $cpu_hits lines; $lat_ok latency stacks wait_on_pipe ... syscall:read"
[ "$cpu_hits" -gt 0 ] && [ "${lat_ok:-0}" -gt 0 ] || {
	head -c 2000 "$WORKDIR/lat.json" >&2
	fail "json: Python frames missing (burn_a: $cpu_hits, wait_on_pipe;...;syscall:read: $lat_ok)"
}

# pprof, as go tool pprof reads it
if command -v go >/dev/null; then
	go_pprof_top "$prof" "$WORKDIR/top.txt" || { diag_file "go tool pprof" "$WORKDIR/top.txt"; fail "go tool pprof -top failed"; }
	cum=$(awk '$NF == "burn_a" { sub("%", "", $5); print $5; exit }' "$WORKDIR/top.txt")
	info "pprof: burn_a cum ${cum:-none}%"
	awk -v c="${cum:-0}" 'BEGIN { exit !(c >= 50) }' || {
		diag_file "go tool pprof -top" "$WORKDIR/top.txt"
		fail "pprof: burn_a has ${cum:-no} cumulative share (want >= 50%)"
	}
elif [ "${CI:-}" = true ]; then
	fail "go (golang-go) is needed to read the pprof file; make setup installs it"
else
	info "skipped the go tool pprof check: go not installed"
fi

# SVG flame graph and diff
"$LATPROF" flamegraph "$prof" -o "$WORKDIR/py.svg" 2>"$WORKDIR/svg.err" ||
	{ diag_file "flamegraph stderr" "$WORKDIR/svg.err"; fail "flamegraph failed"; }
grep -q '>burn_a (py_names.py)' "$WORKDIR/py.svg" || grep -q 'burn_a (py_names.py) (' "$WORKDIR/py.svg" ||
	fail "the SVG has no frame burn_a (py_names.py)"
grep -q 'Python "f (file.py)" blue' "$WORKDIR/py.svg" || fail "the SVG legend has no Python entry"
"$LATPROF" diff "$prof" "$prof" -o "$WORKDIR/diff.svg" 2>"$WORKDIR/diff.err" ||
	{ diag_file "diff stderr" "$WORKDIR/diff.err"; fail "diff failed"; }
grep -q 'burn_a (py_names.py)' "$WORKDIR/diff.svg" || fail "the diff has no frame burn_a (py_names.py)"

# serve: a profile pulled over HTTP
start_bg "$WORKDIR/long.out" "$PY" "$SCRIPT" mix 8
pypid=$BG_PID
sleep 1
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" -p "$pypid"
curl -s --max-time 30 -o "$WORKDIR/served.pb.gz" \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=2&hz=499" ||
	{ diag_file "serve log" "$WORKDIR/serve.log"; fail "pulling /debug/pprof/profile failed"; }
export_or_fail "$WORKDIR/served.pb.gz" "$WORKDIR/served.folded" --format folded
s_all=$(folded_sum "$WORKDIR/served.folded" pymain)
s_run=$(folded_sum "$WORKDIR/served.folded" pymain "run_main (py_names.py)")
info "serve: $s_run of $s_all main-thread samples under run_main (py_names.py)"
[ "${s_all:-0}" -gt 100 ] && in_range "$(ratio "$s_run" "$s_all")" 0.90 1 || {
	folded_top "$WORKDIR/served.folded" "" 5 >&2
	fail "serve's profile: $s_run of $s_all main-thread samples under run_main (py_names.py)"
}
# the served profile is the Python view (no Py_BytesMain above <module>, even
# read back with --native); native=1 serves the full native stacks
export_or_fail "$WORKDIR/served.pb.gz" "$WORKDIR/served.native.folded" --format folded --native
curl -s --max-time 30 -o "$WORKDIR/native.pb.gz" \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=1&hz=499&native=1" ||
	{ diag_file "serve log" "$WORKDIR/serve.log"; fail "pulling native=1 failed"; }
export_or_fail "$WORKDIR/native.pb.gz" "$WORKDIR/native.folded" --format folded --native
v_main=$(folded_sum "$WORKDIR/served.native.folded" pymain Py_BytesMain)
n_main=$(folded_sum "$WORKDIR/native.folded" pymain Py_BytesMain)
n_all=$(folded_sum "$WORKDIR/native.folded" pymain)
info "serve: Py_BytesMain in $v_main samples of the view, $n_main of $n_all with native=1"
[ "${v_main:-0}" = 0 ] && [ "${n_all:-0}" -gt 0 ] && in_range "$(ratio "$n_main" "$n_all")" 0.90 1 ||
	fail "serve: Py_BytesMain in $v_main samples of the view, $n_main of $n_all with native=1"
kill "$SERVE_PID" "$pypid" 2>/dev/null
pass "Python frames in speedscope, JSON, pprof, SVG, diff and serve's profiles"
