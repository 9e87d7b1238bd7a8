#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# latprof killed with SIGKILL in the middle of a recording: nothing of it
# stays in the kernel, its target runs on unharmed, and no partial profile
# is left under the output name.
#
# Ground truth comes from the kernel, not latprof: the BPF program, link and
# map ids latprof holds, read from its /proc/PID/fdinfo while it records
# (prog_id:, link_id:, map_id:), and its perf event descriptors
# (anon_inode:[perf_event]); after the kill, none of those ids may still be
# listed by `bpftool prog/link/map show` (other latprof instances, such as a
# soak test, may run at the same time: only the killed process's own ids are
# compared). A program attached to a perf event is held by that event, so
# its id disappearing also proves the events were closed. The target (spin)
# must keep running and advancing (its CPU time in /proc/PID/stat grows by
# >= 0.3 s in the second after the kill), in state R or S (not stopped),
# and still end normally on SIGTERM (it prints its cpu_ns line, exit 0).
# The output directory must be empty.
#
# Then the write itself: latprof is killed at 12 moments spread over the
# last 0.3 s of a recording (-d 1, timed once whole first) and its write. Whatever the moment, out.pb.gz is
# either absent or complete (gzip -t and export both accept it): the profile
# is written to a temporary name and renamed. A temporary out.pb.gz.tmp.*
# may remain when the kill lands inside the write (a SIGKILL cannot be
# caught to remove it); how often is reported, the name never matters.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
require_root_bpf
require_fixture spin
command -v bpftool >/dev/null || skip "bpftool not installed"

# fd_ids PID KEY: the ids after "KEY:" in PID's fdinfo, one a line.
fd_ids()
{
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v k="$2:" '$1 == k { print $2 }' | sort -u
}

# live_ids OBJ: the ids `bpftool OBJ show` lists now, one a line.
live_ids()
{
	bpftool -j "$1" show 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for o in json.load(sys.stdin): print(o["id"])' | sort -u
}

start_bg "$WORKDIR/spin.out" "$FIXTURES/spin" 0
spid=$BG_PID
wait_for_line "$WORKDIR/spin.out" "ready" || fail "spin fixture did not start"
mkdir -p "$WORKDIR/out"
"$LATPROF" record -p "$spid" --mode cpu,syscall,offcpu -F 999 -d 60 -o "$WORKDIR/out/out.pb.gz" \
	>"$WORKDIR/lp.out" 2>"$WORKDIR/lp.err" &
lp=$!
# attached: the programs are loaded and the perf events open
for ((i = 0; i < 100; i++)); do
	[ -n "$(fd_ids $lp prog_id)" ] && [ "$(ls -l /proc/$lp/fd 2>/dev/null | grep -c perf_event)" -ge 1 ] && break
	sleep 0.05
done
sleep 1
progs=$(fd_ids $lp prog_id)
links=$(fd_ids $lp link_id)
maps=$(fd_ids $lp map_id)
nperf=$(ls -l /proc/$lp/fd 2>/dev/null | grep -c perf_event)
[ -n "$progs" ] || { diag_file "record stderr" "$WORKDIR/lp.err"; fail "latprof (pid $lp) holds no BPF program after 6 s"; }
info "latprof $lp holds $(echo $progs | wc -w) programs, $(echo $links | wc -w) links, $(echo $maps | wc -w) maps, $nperf perf events"
[ -z "$(comm -23 <(echo "$progs") <(live_ids prog))" ] || fail "setup: bpftool does not list latprof's programs"
cpu0=$(proc_cpu_ns "$spid")
kill -KILL $lp
wait $lp 2>/dev/null
# the kernel frees programs after an RCU grace period: allow 5 s
for ((i = 0; i < 100; i++)); do
	lp_progs=$(comm -12 <(echo "$progs") <(live_ids prog))
	lp_links=$(comm -12 <(echo "$links") <(live_ids link))
	lp_maps=$(comm -12 <(echo "$maps") <(live_ids map))
	[ -z "$lp_progs$lp_links$lp_maps" ] && break
	sleep 0.05
done
[ -z "$lp_progs" ] || fail "programs of the killed latprof still loaded: $(echo $lp_progs)"
[ -z "$lp_links" ] || fail "links of the killed latprof still exist: $(echo $lp_links)"
[ -z "$lp_maps" ] || fail "maps of the killed latprof still exist: $(echo $lp_maps)"
info "all gone after $(calc "$i * 0.05") s"

sleep 1
cpu1=$(proc_cpu_ns "$spid")
kill -0 "$spid" 2>/dev/null || fail "the target died with latprof"
state=$(awk '{ sub(/^.*\) /, ""); print $1 }' /proc/$spid/stat)
case $state in
R | S) ;;
*) fail "the target is left in state $state" ;;
esac
info "target: $(calc "($cpu1 - $cpu0) / 1e9") s of CPU in the second after the kill, state $state"
in_range "$(calc "($cpu1 - $cpu0) / 1e9")" 0.3 2.1 || fail "the target did not advance after the kill"
kill -TERM "$spid"
wait "$spid"
rc=$?
[ $rc = 0 ] && grep -q "cpu_ns=" "$WORKDIR/spin.out" || fail "the target did not end normally on SIGTERM (exit $rc)"
[ -z "$(ls -A "$WORKDIR/out")" ] || fail "files left in the output dir: $(ls -A "$WORKDIR/out" | tr '\n' ' ')"

# killed during the write: never a partial out.pb.gz
start_bg "$WORKDIR/spin2.out" "$FIXTURES/spin" 0
spid=$BG_PID
wait_for_line "$WORKDIR/spin2.out" "ready" || fail "spin fixture did not start"
# how long a whole run takes here: the write is at its very end
t0=$(date +%s.%N)
lp_record /dev/null "$WORKDIR/whole.err" -p "$spid" -F 999 -d 1 -o "$WORKDIR/whole.pb.gz" ||
	{ diag_file "record stderr" "$WORKDIR/whole.err"; fail "record -d 1 failed"; }
t_whole=$(calc "$(date +%s.%N) - $t0")
complete=0 absent=0 tmp_left=0
for ((k = 0; k < 12; k++)); do
	d=$WORKDIR/w$k
	mkdir -p "$d"
	"$LATPROF" record -p "$spid" -F 999 -d 1 -o "$d/out.pb.gz" >/dev/null 2>"$d.err" &
	lp=$!
	sleep "$(calc "$t_whole - 0.3 + $k * 0.03")"
	kill -KILL $lp 2>/dev/null
	wait $lp 2>/dev/null
	if [ -e "$d/out.pb.gz" ]; then
		gzip -t "$d/out.pb.gz" 2>/dev/null && lp_folded "$d/out.pb.gz" "$d.folded" ||
			fail "kill $k: $d/out.pb.gz exists but is not a complete profile"
		complete=$((complete + 1))
	else
		absent=$((absent + 1))
	fi
	ls "$d" | grep -q '^out\.pb\.gz\.tmp\.' && tmp_left=$((tmp_left + 1))
done
info "kills from $(calc "$t_whole - 0.3") to $(calc "$t_whole + 0.03") s (a whole run: $t_whole s): $complete complete profiles, $absent absent, $tmp_left temporary files left"
pass "$(echo $progs | wc -w) programs, $(echo $links | wc -w) links, $(echo $maps | wc -w) maps released; target unharmed"
