#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `record -a -d 3` on a busy machine with process churn: the deadline holds,
# a process's syscalls are all counted, and no syscall statistic is dropped.
#
# Ground truth (the workload's own, never latprof's): 10 shell loops, each in
# its own process group, run /bin/sleep 0.01 back to back (up to ~100 fork +
# exec a second each) from before the recording until after it; the pids the
# kernel handed out meanwhile (/proc/sys/kernel/ns_last_pid) say how much
# churn there was. While latprof runs, sys_count is run again and again, one
# at a time: each calls getppid exactly 100,000 times through syscall(2) and
# prints that count and its pid, and the shell notes when it started and
# ended (wall clock). Only a run that started after the window opened and
# ended before it closed (the profile's time_nanos and duration_nanos) has an
# exactly known count; at least one must (latprof's attach comes when it
# comes: on a churning machine its start-up has taken 5 s). The shell times
# the record command.
# Checks, `record -a -d 3`:
#   - it exits 0 within 5 s of its 3 s deadline (wall < 8 s), and the
#     profile's duration is 3 s +-1 s;
#   - export --format json: for every sys_count run inside the window, the
#     "syscalls" entry (its pid, getppid) has count exactly 100,000;
#   - `latprof report`'s "Lost and dropped" section has no (or a 0)
#     syscall_stats_unattributed_map_full: the statistics map never filled
#     (calls that found it full would be counted under no process); other
#     losses are printed, not judged (syscall_stats_unattributed_no_memory
#     is the kernel's allocator having no free entry on a CPU for a moment).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_count

calls=100000
loops=10
dur=3

# the churn: each loop in its own process group (set -m), killed as a group
# however the test ends; $end caps them should every kill miss. A group's
# leader is only reaped by stop_churn's wait, so its pgid is never reused
# before the kill.
CHURN_PGIDS=""
COUNT_PID=""
stop_churn()
{
	local g
	for g in $CHURN_PGIDS; do
		kill -KILL -- "-$g" 2>/dev/null
	done
	for g in $CHURN_PGIDS; do
		wait "$g" 2>/dev/null
	done
	CHURN_PGIDS=""
	# a sys_count run cut short by the watchdog (never a reaped pid: the
	# churn recycles pids within seconds)
	[ -n "$COUNT_PID" ] && kill -KILL "$COUNT_PID" 2>/dev/null
}
at_exit stop_churn
end=$((SECONDS + 30))
set -m
for ((i = 0; i < loops; i++)); do
	( while [ $SECONDS -lt $end ]; do /bin/sleep 0.01; done ) >/dev/null 2>&1 </dev/null &
	CHURN_PGIDS="$CHURN_PGIDS $!"
done
set +m
sleep 0.5
for g in $CHURN_PGIDS; do
	kill -0 "$g" 2>/dev/null || fail "churn loop $g is not running"
done

# record -a beside them, timed by the shell
prof=$WORKDIR/churn.pb.gz
pid0=$(cat /proc/sys/kernel/ns_last_pid)
pid_max=$(cat /proc/sys/kernel/pid_max)
t0=$(date +%s%N)
timeout -k 5 30 "$LATPROF" record -a -d $dur -o "$prof" >"$WORKDIR/churn.out" 2>"$WORKDIR/churn.err" &
lp=$!

# sys_count, one run after another (0.3 s apart) until latprof exits: one
# "PID START_NS END_NS STATUS" line per run in WORKDIR/runs
: >"$WORKDIR/runs"
for ((n = 1; n <= 200; n++)); do
	kill -0 "$lp" 2>/dev/null || break
	s0=$(date +%s%N)
	"$FIXTURES/sys_count" $calls >"$WORKDIR/count.$n.out" 2>&1 &
	COUNT_PID=$!
	wait "$COUNT_PID"
	crc=$?
	s1=$(date +%s%N)
	echo "$COUNT_PID $s0 $s1 $crc" >>"$WORKDIR/runs"
	COUNT_PID=""
	sleep 0.3
done

wait "$lp"
rc=$?
t1=$(date +%s%N)
pid1=$(cat /proc/sys/kernel/ns_last_pid)
stop_churn
wall=$(calc "($t1 - $t0) / 1e9")
info "record -a -d $dur: exit $rc, wall ${wall} s (shell-timed); $(((pid1 - pid0 + pid_max) % pid_max)) pids handed out meanwhile ($loops churn loops), $((n - 1)) sys_count runs"
if [ $rc != 0 ]; then
	diag_file "latprof record stderr" "$WORKDIR/churn.err"
	[ $rc = 124 ] && fail "latprof record -a -d $dur did not exit within 30 s (killed by timeout)"
	fail "latprof record -a -d $dur exited $rc (expected 0)"
fi
[ -s "$prof" ] || fail "latprof record -a -d $dur exited 0 but wrote no $prof"
info "record stderr: $(tr '\n' ' ' <"$WORKDIR/churn.err")"

json=$WORKDIR/churn.json
export_or_fail "$prof" "$json" --format json --weight syscalls
json_check "$json"
read -r tns dns <<<"$(json_py "$json" 'print(j["time_ns"], j["duration_ns"])')"
prof_s=$(calc "$dns / 1e9")
startup=$(profile_meta "$prof" | sed -n 's/^startup_ns=//p')
info "profile: window opened $(calc "($tns - $t0) / 1e9") s after the command started (metadata startup_ns ${startup:-?}), lasted ${prof_s} s, latprof exited $(calc "($t1 - $tns - $dns) / 1e9") s after it closed"

# each run: made (its own output) against the profile's count, for the runs
# inside the window; the others are shown, not judged
inside=0 wrong=()
while read -r cpid s0 s1 crc; do
	k=$(grep -l "^sys_count pid=$cpid " "$WORKDIR"/count.*.out | head -n 1)
	made=$([ -n "$k" ] && kv "$k" "sys_count " getppid)
	if [ "$crc" != 0 ] || [ "$made" != $calls ]; then
		[ -n "$k" ] && diag_file "sys_count stdout" "$k"
		fail "sys_count (pid $cpid) exited $crc, getppid '$made' (expected $calls)"
	fi
	got=$(json_syscall "$json" "$cpid" getppid count)
	where="$(calc "($s0 - $tns) / 1e9") s to $(calc "($s1 - $tns) / 1e9") s"
	if [ "$s0" -ge "$tns" ] && [ "$s1" -le $((tns + dns)) ]; then
		inside=$((inside + 1))
		info "sys_count pid $cpid, $where into the window: getppid ${got:-none} in the profile, $made made"
		[ "$got" = "$made" ] || wrong+=("pid $cpid (${where}): ${got:-none}")
	else
		info "sys_count pid $cpid, $where into the window (not inside, not judged): getppid ${got:-none} in the profile"
	fi
done <"$WORKDIR/runs"
if [ "$inside" = 0 ]; then
	fail "inconclusive: no sys_count run lay inside the ${prof_s} s window (runs in $WORKDIR/runs)"
fi

report=$WORKDIR/churn.report
lp_report "$prof" "$report" || { diag_file "report stderr" "$report.err"; fail "latprof report exited non-zero"; }
sed -n '/^Lost and dropped/,/^$/p' "$report" >"$WORKDIR/churn.lost"
grep -q '^Lost and dropped' "$WORKDIR/churn.lost" || { diag_file "report" "$report" 40; fail "the report has no 'Lost and dropped' section"; }
sed 's/^/  | /' "$WORKDIR/churn.lost"
rep_s=$(sed -n 's/^ *recorded .*, \([0-9.]*\) s.*/\1/p' "$report" | head -n 1)
dropped=$(awk '$1 == "syscall_stats_unattributed_map_full" { print $2 }' "$WORKDIR/churn.lost")
meta_dropped=$(profile_meta "$prof" | sed -n 's/^lost\.syscall_stats_unattributed_map_full=//p')
info "report: recorded ${rep_s:-?} s; syscall_stats_unattributed_map_full ${dropped:-0} (metadata: ${meta_dropped:-absent})"

# every check, then one line naming each that failed
bad=()
if ! in_range "$wall" 0 $((dur + 5)); then
	bad+=("-d $dur not honoured: record ran ${wall} s wall, expected < $((dur + 5)) s")
fi
if ! in_range "$prof_s" $((dur - 1)) $((dur + 1)); then
	bad+=("the profile's duration is ${prof_s} s (report: ${rep_s:-?} s), expected ${dur} s +-1 s")
fi
if [ ${#wrong[@]} -gt 0 ]; then
	msg=$(printf '%s, ' "${wrong[@]}")
	bad+=("${#wrong[@]} of $inside sys_count runs inside the window miscounted, getppid expected exactly $calls each: ${msg%, }")
fi
if [ "${dropped:-0}" != 0 ] || [ "${meta_dropped:-0}" != 0 ]; then
	bad+=("the syscall statistics map filled: syscall_stats_unattributed_map_full ${dropped:-0} in the report (metadata ${meta_dropped:-0}), expected none")
fi
if [ ${#bad[@]} -gt 0 ]; then
	msg=$(printf '%s; ' "${bad[@]}")
	fail "${msg%; }"
fi
pass "-d $dur: ${wall} s wall, ${prof_s} s recorded; $inside sys_count runs inside the window, getppid exactly $calls each; the syscall statistics map never full"
