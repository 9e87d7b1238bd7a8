#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# latprof top without a screen (-b -n), how it ends, and bad input.
#
# Ground truth: top_work's own measures (test_top.sh), and the -o profile
# of the same run for "the snapshots agree with the profile". Checks:
#   - -b -n 5 prints exactly five snapshots and exits 0, the command ended;
#   - each snapshot's work_a share (TOTAL%, test_top.sh says why) is within
#     5 points of top_work's;
#   - the fifth snapshot's samples since the start, and work_a's own time
#     since the start, are at most the -o profile's and within 5% of them
#     (the profile also holds the stop after the fifth look: 50-100 ms here,
#     5% of a 5 s run is 250 ms for a busy machine's slower stop);
#   - stdout not a terminal and no -b: snapshots all the same;
#   - the pipe's reader gone (| head): exit 0, the command ended;
#   - SIGTERM under tmux: exit 0, the terminal restored, -o complete;
#   - the pty closed under it (the tmux server killed): latprof ends within
#     5 s, -o complete, no process left;
#   - the command exits by itself: exit 0 and "the targets exited";
#   - bad options, a bad -o, an unknown pid: exit 2 and one line.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture top_work
require_fixture spin

# bad input: exit 2 and one line naming it, before anything starts
for args in "--interval 0" "-n 0" "--rows x" "-o $WORKDIR/no/such/dir/x.pb.gz -- true" \
	    "-p 999999999" "--weight cpu -- true" "-o $WORKDIR/x.badext -- true" "--bogus"; do
	# shellcheck disable=SC2086
	timeout 10 "$LATPROF" top -b $args >"$WORKDIR/bad.out" 2>&1
	rc=$?
	[ $rc = 2 ] || { diag_file out "$WORKDIR/bad.out"; fail "top $args: exit $rc, expected 2"; }
	[ "$(wc -l <"$WORKDIR/bad.out")" = 1 ] || { diag_file out "$WORKDIR/bad.out"; fail "top $args: not one line"; }
done

status=$WORKDIR/status
timeout 30 "$LATPROF" top -b -n 5 -F 999 --rows 40 -o "$WORKDIR/b.pb.gz" -- \
	"$FIXTURES/top_work" "$status" >"$WORKDIR/snaps" 2>"$WORKDIR/err" ||
	{ diag_file stderr "$WORKDIR/err"; fail "top -b -n 5 exited $?"; }
n=$(grep -c '^latprof top - ' "$WORKDIR/snaps")
[ "$n" -eq 5 ] || { diag_file snapshots "$WORKDIR/snaps" 80; fail "$n snapshots, not 5"; }
pgrep -f "^$FIXTURES/top_work $status" >/dev/null && fail "the command still runs after -n 5"
truth=$(calc "100 * $(kv "$status" a_ns= a_ns) / $(kv "$status" a_ns= cpu_ns)")
shares=$(awk '$NF == "work_a" { printf "%s ", $2 }' "$WORKDIR/snaps")
info "work_a's share in each snapshot: $shares(fixture: $truth%)"
[ "$(echo $shares | wc -w)" -eq 5 ] || fail "work_a is not in every snapshot"
for s in $shares; do
	in_range "$s" "$(calc "$truth - 5")" "$(calc "$truth + 5")" ||
		fail "work_a's share $s% is not within 5 points of $truth%"
done
last=$(awk '/^latprof top - / { s = $0 } END { print s }' "$WORKDIR/snaps" |
	sed -n 's/.*samples [0-9.]*\/s (\([0-9]*\)).*/\1/p')
prof=$(profile_meta "$WORKDIR/b.pb.gz" | sed -n 's/^count\.samples=//p')
info "samples since the start: $last in the fifth snapshot, $prof in the -o profile"
in_range "$last" "$(calc "$prof * 0.95")" "$prof" || fail "the snapshot's $last samples and the profile's $prof disagree"
# work_a's own time since the start in the fifth snapshot against the
# report's self samples of it (1/999 s each; the snapshot rounds to 3 digits)
own_all=$(awk '/^latprof top - /{ s++ } s == 5 && $NF == "work_a" { print $6; exit }' "$WORKDIR/snaps")
rep=$("$LATPROF" report "$WORKDIR/b.pb.gz" | awk '/^Top functions/ { t = 1 } t && $NF == "work_a" { print $2; exit }')
[ -n "$rep" ] && [ -n "$own_all" ] || fail "work_a is not in the fifth snapshot or the report of -o"
own_s=$(awk -v d="$own_all" 'BEGIN { n = d + 0; if (d ~ /ms$/) n /= 1e3; printf "%.4f", n }')
rep_s=$(calc "$rep / 999")
info "work_a's own time since the start: $own_all in the fifth snapshot, ${rep_s}s in the profile"
in_range "$own_s" "$(calc "$rep_s * 0.95")" "$(calc "$rep_s * 1.001 + 0.006")" ||
	fail "work_a's own time: the snapshot's $own_all and the profile's ${rep_s}s disagree"

# stdout not a terminal: snapshots without -b
timeout 20 "$LATPROF" top -n 1 --interval 0.5 -- "$FIXTURES/spin" 5 >"$WORKDIR/pipe" 2>&1 ||
	fail "top -n 1 into a pipe exited $?"
grep -q '^latprof top - ' "$WORKDIR/pipe" || { diag_file out "$WORKDIR/pipe"; fail "no snapshot into a pipe"; }

# the reader goes away (| head): the end, exit 0, the command ended
timeout 20 "$LATPROF" top -b --interval 0.2 -- "$FIXTURES/top_work" "$status.4" 2>"$WORKDIR/pipe.err" |
	head -n 3 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { diag_file stderr "$WORKDIR/pipe.err"; fail "top -b | head: exit $rc"; }
sleep 0.2
pgrep -f "^$FIXTURES/top_work $status.4" >/dev/null && fail "top -b | head: the command still runs"

# a screen ended by SIGTERM
tmux_start 120 30 "$LATPROF top -o $WORKDIR/term.pb.gz -- $FIXTURES/top_work $status.2 \
2>$WORKDIR/term.err; echo EXIT=\$? >$WORKDIR/term.exit"
tmux_wait 'up 1\.[0-9]s' 6 || { diag_file screen "$WORKDIR/screen" 30; fail "no screen within 6 s"; }
pkill -TERM -f "^$LATPROF top -o $WORKDIR/term.pb.gz" || fail "no latprof to signal"
for ((i = 0; i < 100; i++)); do
	[ -s "$WORKDIR/term.exit" ] && break
	sleep 0.1
done
[ "$(cat "$WORKDIR/term.exit" 2>/dev/null)" = EXIT=0 ] || { diag_file stderr "$WORKDIR/term.err"; fail "SIGTERM: $(cat "$WORKDIR/term.exit" 2>/dev/null)"; }
[ "$(tmux -L "$TMUX_SOCK" display -p -t t '#{alternate_on}')" = 0 ] || fail "SIGTERM: the terminal is left in the alternate screen"
"$LATPROF" report "$WORKDIR/term.pb.gz" >/dev/null 2>&1 || fail "SIGTERM: -o is not a profile"
pgrep -f "^$FIXTURES/top_work $status.2" >/dev/null && fail "SIGTERM: the command still runs"

# a closed pty: the terminal goes away under latprof
tmux -L "$TMUX_SOCK" kill-server
tmux_start 120 30 "$LATPROF top -o $WORKDIR/hup.pb.gz -- $FIXTURES/top_work $status.3 2>$WORKDIR/hup.err"
tmux_wait 'up 1\.[0-9]s' 6 || { diag_file screen "$WORKDIR/screen" 30; fail "no screen within 6 s"; }
tmux -L "$TMUX_SOCK" kill-server
for ((i = 0; i < 50; i++)); do
	pgrep -f "^$LATPROF top -o $WORKDIR/hup.pb.gz" >/dev/null || break
	sleep 0.1
done
pgrep -f "^$LATPROF top -o $WORKDIR/hup.pb.gz" >/dev/null && fail "latprof still runs 5 s after its terminal closed"
"$LATPROF" report "$WORKDIR/hup.pb.gz" >/dev/null 2>&1 || { diag_file stderr "$WORKDIR/hup.err"; fail "closed pty: -o is not a profile"; }
pgrep -f "^$FIXTURES/top_work $status.3" >/dev/null && fail "closed pty: the command still runs"

# the command exits by itself
timeout 20 "$LATPROF" top -b -- "$FIXTURES/spin" 1.5 >"$WORKDIR/ends" 2>&1 ||
	{ diag_file out "$WORKDIR/ends"; fail "a command that exits: top exited $?"; }
grep -q 'the targets exited' "$WORKDIR/ends" || { diag_file out "$WORKDIR/ends"; fail "no 'the targets exited'"; }
left=$(ls -A "$WORKDIR" | grep -E '\.pb\.gz.' || true)
[ -z "$left" ] || fail "temporary files left beside -o: $left"
pass "5 snapshots agree with -o; SIGTERM, a closed pty and a command's exit end cleanly"
