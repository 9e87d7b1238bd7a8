#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# latprof top on a Python service, under tmux: Debian testing's stripped
# python3.14 in its root (tests/pyroot), as distributions ship it.
#
# Ground truth (from the script, not latprof): py_top.py computes in parse()
# and score() for 6 and 4 ms of its thread's CPU time in turn and writes
# the time it measured in each (time.thread_time_ns) and the process's
# (time.process_time_ns); its waiter thread blocks in os.read() in
# wait_for_data and measures the time around the call (time.monotonic_ns).
# Checks:
#   - within 3 s the functions view names "parse (py_top.py)" and
#     "score (py_top.py)", each with a total share of the last interval
#     within 5 points of the script's share of the process's CPU;
#   - the waits view shows the site of wait_for_data, and its rows (the
#     read, and the futex of the GIL taken back after it: the script's clock
#     around os.read holds both) add up to a time per second within 10% of
#     the script's time in os.read per second of wall time.
. "$(dirname "$0")/lib.sh"
require_root_bpf
pyroot "$(dirname "$0")/../fixtures/py_top.py" || skip "no Debian testing root (debootstrap missing)"

status=$PYROOT/$PYROOT_TMP/status
tmux_start 200 60 "$LATPROF top -F 999 -- chroot $PYROOT python3.14 $PYROOT_TMP/py_top.py \
$PYROOT_TMP/status 2>$WORKDIR/top.err"

# sorted by total: the functions that compute through spin() come first
tmux_wait 'up 1\.[0-9]s' 8 || { diag_file screen "$WORKDIR/screen" 60; diag_file stderr "$WORKDIR/top.err"; fail "no first look within 8 s"; }
tmux_keys '>'
tmux_wait 'up 2\.[0-9]s.*' 3 && grep -q 'sorted by TOTAL$' "$WORKDIR/screen" ||
	{ diag_file screen "$WORKDIR/screen" 60; fail "no second look sorted by total within 3 s"; }
cp "$WORKDIR/screen" "$WORKDIR/funcs.screen"
cp "$status" "$WORKDIR/funcs.status" || fail "the script wrote no status"
cpu=$(kv "$WORKDIR/funcs.status" parse_ns= cpu_ns)
for fn in parse score; do
	truth=$(calc "100 * $(kv "$WORKDIR/funcs.status" parse_ns= ${fn}_ns) / $cpu")
	total=$(awk -v f="$fn" '$(NF - 1) == f && $NF == "(py_top.py)" { print $2; exit }' "$WORKDIR/funcs.screen")
	[ -n "$total" ] || { diag_file screen "$WORKDIR/funcs.screen" 60; fail "$fn (py_top.py) not in the functions view"; }
	info "$fn: total $total% (script: $truth%)"
	in_range "$total" "$(calc "$truth - 5")" "$(calc "$truth + 5")" ||
		{ diag_file screen "$WORKDIR/funcs.screen" 60; fail "$fn's share $total% is not within 5 points of $truth%"; }
done

tmux_keys 2
tmux_wait '^Slow call sites' 3 || { diag_file screen "$WORKDIR/screen" 60; fail "2 did not show the waits view"; }
tmux_wait 'syscall:[a-z_]+ .*wait_for_data \(py_top.py\)' 3 || { diag_file screen "$WORKDIR/screen" 60; fail "no wait_for_data site in the waits view"; }
rate=$(awk '/syscall:[a-z_]+ .*wait_for_data \(py_top.py\)/ {
		d = $1; n = d + 0
		if (d ~ /ms$/) n /= 1e3; else if (d ~ /us$/) n /= 1e6; else if (d ~ /ns$/) n /= 1e9
		s += n }
	END { printf "%.4f", s }' "$WORKDIR/screen")
truth=$(calc "$(kv "$status" parse_ns= read_ns) / $(kv "$status" parse_ns= wall_ns)")
grep -E 'syscall:[a-z_]+ .*wait_for_data \(py_top.py\)' "$WORKDIR/screen" | sed 's/^/  | /'
info "wait_for_data: ${rate}s per second (script: ${truth}s per second)"
in_range "$rate" "$(calc "$truth * 0.9")" "$(calc "$truth * 1.1")" ||
	{ diag_file screen "$WORKDIR/screen" 60; fail "wait_for_data's ${rate}s per second is not within 10% of $truth"; }
tmux_keys q
pass "Python shares within 5 points, the wait within 10% on a stripped 3.14"
