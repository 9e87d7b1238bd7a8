#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# latprof top's full screen, under tmux, against a program with known CPU
# shares and a known wait.
#
# Ground truth (from the fixture, not latprof): top_work spins in work_a,
# work_b and work_c for 5, 3 and 2 ms of its thread's CPU time in turn and
# writes the CPU time it measured in each, and the process's (getrusage);
# its waiter thread blocks in read() in wait_for_data and measures the time
# inside read() against the wall clock. Checks:
#   - within 3 s the functions view shows work_a, work_b and work_c, each
#     with a share of the last interval (TOTAL%: the kernel's frames under
#     it too, where a busy machine's interrupts and preemptions put some of
#     its samples) within 5 points of the fixture's share of the process's
#     CPU (-F 999: ~1000 samples a second, a standard error of 1.6 points);
#   - the waits view shows the site "syscall:read waiter;wait_for_data"
#     with a time per second within 10% of the fixture's read time per
#     second of wall time, and a p99 between the fixture's shortest and
#     longest read (the mean of the log2 bucket that holds it);
#   - every key does what the help says: 1 2 3 Tab, < >, space (the header's
#     clock stops, then goes on), p and P, Enter and Escape (callers of
#     work_a: main), ? and any key, q;
#   - a resized window is drawn again at its new size;
#   - q: exit status 0, the terminal restored (tmux's alternate screen is
#     off and the screen has none of top's lines), -o written and readable,
#     the command ended.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture top_work

status=$WORKDIR/status
tmux_start 160 45 "$LATPROF top -F 999 -o $WORKDIR/top.pb.gz -- $FIXTURES/top_work $status \
2>$WORKDIR/top.err; echo EXIT=\$? >$WORKDIR/exit"

# seconds DURATION: "1.02s", "998ms", "20us", "120ns" in seconds
seconds()
{
	awk -v d="$1" 'BEGIN {
		n = d + 0; u = substr(d, length(n "") + 1)
		if (d ~ /ms$/) n /= 1e3; else if (d ~ /us$/) n /= 1e6; else if (d ~ /ns$/) n /= 1e9
		printf "%.6f", n }'
}

# the second look (2 s) has a whole last interval
tmux_wait 'up 2\.[0-9]s' 6 || { diag_file screen "$WORKDIR/screen" 50; diag_file stderr "$WORKDIR/top.err"; fail "no second look within 6 s"; }
cp "$WORKDIR/screen" "$WORKDIR/funcs.screen"
cp "$status" "$WORKDIR/funcs.status"
grep -q 'Functions by own CPU' "$WORKDIR/funcs.screen" || { diag_file screen "$WORKDIR/funcs.screen" 50; fail "not the functions view first"; }
cpu=$(kv "$WORKDIR/funcs.status" a_ns= cpu_ns)
for f in work_a:a_ns work_b:b_ns work_c:c_ns; do
	fn=${f%%:*}
	truth=$(calc "100 * $(kv "$WORKDIR/funcs.status" a_ns= "${f##*:}") / $cpu")
	total=$(awk -v f="$fn" '$NF == f { print $2; exit }' "$WORKDIR/funcs.screen")
	[ -n "$total" ] || { diag_file screen "$WORKDIR/funcs.screen" 50; fail "$fn not in the functions view"; }
	info "$fn: total $total% (fixture: $truth%)"
	in_range "$total" "$(calc "$truth - 5")" "$(calc "$truth + 5")" ||
		{ diag_file screen "$WORKDIR/funcs.screen" 50; fail "$fn's share $total% is not within 5 points of $truth%"; }
done

tmux_keys 2
tmux_wait 'Slow call sites' 3 || { diag_file screen "$WORKDIR/screen" 50; fail "2 did not show the waits view"; }
tmux_wait 'syscall:read +waiter;wait_for_data' 3 || { diag_file screen "$WORKDIR/screen" 50; fail "no waiter;wait_for_data site"; }
rate=$(awk '/syscall:read +waiter;wait_for_data/ { print $1; exit }' "$WORKDIR/screen")
truth=$(calc "$(kv "$status" a_ns= read_ns) / $(kv "$status" a_ns= wall_ns)")
info "wait_for_data: $rate per second (fixture: ${truth}s per second)"
rate=$(seconds "$rate")
in_range "$rate" "$(calc "$truth * 0.9")" "$(calc "$truth * 1.1")" ||
	{ diag_file screen "$WORKDIR/screen" 50; fail "wait_for_data's ${rate}s per second is not within 10% of $truth"; }
# the p99 is the mean of the log2 bucket that holds it: between the
# fixture's shortest and longest read (its display rounded to 3 digits)
p99=$(awk '/syscall:read +waiter;wait_for_data/ { print $4; exit }' "$WORKDIR/screen")
lo=$(calc "$(kv "$status" a_ns= read_min_ns) / 1e9")
hi=$(calc "$(kv "$status" a_ns= read_max_ns) / 1e9")
info "wait_for_data: p99 $p99 (fixture: reads of ${lo}s to ${hi}s)"
in_range "$(seconds "$p99")" "$(calc "$lo * 0.99")" "$(calc "$hi * 1.01 + 0.0005")" ||
	{ diag_file screen "$WORKDIR/screen" 50; fail "wait_for_data's p99 $p99 is outside its reads' ${lo}s..${hi}s"; }

# key ... pattern: each key, then what the screen must show
check_key()
{
	local what=$1 pattern=$2
	shift 2
	tmux_keys "$@"
	tmux_wait "$pattern" 3 || { diag_file screen "$WORKDIR/screen" 50; fail "$what: the screen does not show '$pattern'"; }
}
check_key "3" '^Syscalls \(per second' 3
tmux_wait ' read$' 3 || { diag_file screen "$WORKDIR/screen" 50; fail "no read row in the syscalls view"; }
check_key "Tab after syscalls" '^Functions by own CPU' Tab
check_key "w" '^Slow call sites' w
check_key "s" '^Syscalls' s
check_key "f" '^Functions by own CPU.*sorted by OWN$' f
check_key ">" 'sorted by TOTAL$' '>'
check_key "> again" 'sorted by TOTAL ALL$' '>'
check_key "<" 'sorted by TOTAL$' '<'
check_key "< again" 'sorted by OWN$' '<'
check_key "?" 'latprof top: keys' '?'
tmux_keys x
tmux_wait 'latprof top: keys' 1 && { sleep 0.3; tmux_wait 'latprof top: keys' 1; } &&
	fail "a key did not close the help"

# space: the header's clock stops
check_key "space" 'FROZEN' Space
up1=$(grep -o 'up [0-9.]*s' "$WORKDIR/screen")
sleep 1.5
tmux_wait 'FROZEN' 1 || fail "no longer frozen"
up2=$(grep -o 'up [0-9.]*s' "$WORKDIR/screen")
[ "$up1" = "$up2" ] || fail "frozen, the screen changed: $up1 then $up2"
tmux_keys Space
sleep 1.3
tmux_wait 'sorted by OWN$' 2 || fail "space did not thaw"
up3=$(grep -o 'up [0-9.]*s' "$WORKDIR/screen")
[ "$up3" != "$up1" ] || fail "thawed, the clock did not move: $up3"
info "frozen at $up1, thawed at $up3"

pid=$(pgrep -f "^$FIXTURES/top_work $status" | head -n 1)
check_key "p" "process $pid \(top_work\) only" p
check_key "P" '^CPU: targets .*, latprof [0-9.]+%$' P

# typed at once: each key acts on the view the keys before it left, drawn
# or not (Enter once zoomed into the syscalls view drawn last: nothing)
check_key "3" '^Syscalls \(per second' 3
check_key "1 Home Enter" '^Callers and callees of work_a' 1 Home Enter
grep -qE ' main$' "$WORKDIR/screen" || { diag_file screen "$WORKDIR/screen" 50; fail "main is not among work_a's callers"; }
check_key "Escape" '^Functions by own CPU' Escape

tmux -L "$TMUX_SOCK" resize-window -t t -x 60 -y 15
tmux_wait '^latprof top' 3 || fail "nothing drawn at 60x15"
sleep 1.2
tmux_wait '^latprof top' 2 || fail "nothing drawn at 60x15"
long=$(awk 'length($0) > 60' "$WORKDIR/screen" | wc -l)
[ "$long" -eq 0 ] || { diag_file screen "$WORKDIR/screen" 20; fail "lines wider than the 60-column window"; }
[ "$(grep -c . "$WORKDIR/screen")" -le 15 ] || fail "more rows than the window has"
tmux -L "$TMUX_SOCK" resize-window -t t -x 160 -y 45

tmux_keys q
for ((i = 0; i < 100; i++)); do
	[ -s "$WORKDIR/exit" ] && break
	sleep 0.1
done
[ "$(cat "$WORKDIR/exit" 2>/dev/null)" = EXIT=0 ] || { diag_file stderr "$WORKDIR/top.err"; fail "q: exit $(cat "$WORKDIR/exit" 2>/dev/null)"; }
[ "$(tmux -L "$TMUX_SOCK" display -p -t t '#{alternate_on}')" = 0 ] || fail "the terminal is still in the alternate screen"
tmux_screen >"$WORKDIR/after"
grep -q 'latprof top -' "$WORKDIR/after" && { diag_file after "$WORKDIR/after" 50; fail "top's screen is still shown after q"; }
pgrep -f "^$FIXTURES/top_work $status" >/dev/null && fail "the command still runs after q"
"$LATPROF" report "$WORKDIR/top.pb.gz" >"$WORKDIR/report" 2>&1 || { diag_file report "$WORKDIR/report"; fail "latprof report cannot read top's -o"; }
grep -q 'work_a' "$WORKDIR/report" || fail "work_a not in the -o profile's report"
left=$(ls -A "$WORKDIR" | grep '^top\.pb\.gz.' || true)
[ -z "$left" ] || fail "temporary files left beside -o: $left"
pass "shares within 5 points, the wait within 10%, every key, resize, q"
