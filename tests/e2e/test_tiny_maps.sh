#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Maps too small for the workload: drops are counted and reported, the
# report says the result is partial, nothing crashes, record exits 0.
#
# The hidden LATPROF_DEBUG_MAX_ENTRIES=4 caps the stack, sample, syscall
# statistics and process maps at 4 entries (src/collect/load.c). The workload is a
# shell running `ls -R` a hundred times: many distinct kernel stacks and
# (process, syscall) pairs, far more than 4.
# Ground truth: the same workload recorded with the normal map sizes, whose
# map-full lost.* counters are near 0. With
# tiny maps their sum must be > 10 x that + 10, the recording still exits 0
# with a complete profile (export and go tool pprof read it), record's
# summary line mentions the losses, and `latprof report`'s "Lost and
# dropped" section lists the non-zero counters and says the result is
# partial (and says nothing of the kind for a profile without losses).
# A full syscall statistics map loses only which process made a call: a
# shell running sys_count 20 times (1,000 getppid each, after the calls
# of its start-up have filled the map) with 4-entry maps must still show
# every getppid call, the ones that found the map full under
# "[unattributed]" (a pseudo pid from 2^30).
# Ground truth: strace -f -c counting the getppid calls of the same command
# (the shell makes some of its own).
# With --requests and LATPROF_DEBUG_LOSE=proc_times (a per-process times
# map of one entry), a shell running ls: lost.process_times_dropped_map_full
# > 0; with every map of 4 entries, the shell running 8 ls and 8 sleeps one
# after another (the sleeps let the exits be read): 0, an exited process's
# entry is deleted (before, the fourth process found the map full for good).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_count
require_cmd go golang-go "go tool pprof reading the tiny-map profile"
require_cmd strace strace "the getppid calls' ground truth"

work='for i in $(seq 100); do ls -R /usr/lib/x86_64-linux-gnu >/dev/null; done'
MAPFULL='kstack_map_full|ustack_map_full|samples_dropped_map_full|procs_dropped_map_full|syscall_stats_unattributed_map_full|timed_dropped_map_full'

# lost_sum PROFILE: the sum of the map-full lost.* counters.
lost_sum()
{
	profile_meta "$1" | awk -F= -v re="^lost\\.($MAPFULL)\$" '$1 ~ re { s += $2 } END { print s + 0 }'
}

record_or_fail normal -F 499 -- sh -c "$work"
LATPROF_DEBUG_MAX_ENTRIES=4 record_or_fail tiny -F 499 -- sh -c "$work"
n_normal=$(lost_sum "$WORKDIR/normal.pb.gz")
n_tiny=$(lost_sum "$WORKDIR/tiny.pb.gz")
info "map-full drops: $n_normal with normal maps, $n_tiny with 4-entry maps"
info "tiny: $(profile_meta "$WORKDIR/tiny.pb.gz" | grep '^lost\.' | grep -v '=0$' | tr '\n' ' ')"
info "tiny: $(grep wrote "$WORKDIR/tiny.err")"
[ "$n_tiny" -gt $((10 * n_normal + 10)) ] ||
	fail "4-entry maps dropped $n_tiny, normal maps $n_normal: the debug cap did not apply"
grep -q "lost (see 'latprof report')" "$WORKDIR/tiny.err" ||
	{ diag_file "record stderr" "$WORKDIR/tiny.err"; fail "record's summary does not mention the losses"; }

export_or_fail "$WORKDIR/tiny.pb.gz" "$WORKDIR/tiny.folded" --format folded
[ "$(folded_sum "$WORKDIR/tiny.folded")" -gt 0 ] || fail "the tiny-map profile has no samples"
lp_report "$WORKDIR/tiny.pb.gz" "$WORKDIR/tiny.report" || { diag_file "report stderr" "$WORKDIR/tiny.report.err"; fail "report of the tiny-map profile failed"; }
sed -n '/^Lost and dropped/,/^$/p' "$WORKDIR/tiny.report" >"$WORKDIR/lost.txt"
grep -q "the result is partial" "$WORKDIR/lost.txt" ||
	{ diag_file "Lost and dropped" "$WORKDIR/lost.txt"; fail "the report does not say the result is partial"; }
grep -Eq "^ +($MAPFULL) +[1-9]" "$WORKDIR/lost.txt" ||
	{ diag_file "Lost and dropped" "$WORKDIR/lost.txt"; fail "the report lists no map-full counter"; }
go_pprof_top "$WORKDIR/tiny.pb.gz" "$WORKDIR/tiny.top" ||
	{ diag_file "go tool pprof" "$WORKDIR/tiny.top"; fail "go tool pprof cannot read the tiny-map profile"; }
# A profile without losses is not called partial. The normal maps' run can
# lose something else than a full map: a CI run's counted 2 calls under
# syscall_stats_unattributed_no_memory (the kernel's per-CPU element cache
# of the statistics hash empty for a moment as 100 ls processes started);
# then the report lists each counter it has, and calls the result partial.
lp_report "$WORKDIR/normal.pb.gz" "$WORKDIR/normal.report" || fail "report of the normal profile failed"
lost_normal=$(profile_meta "$WORKDIR/normal.pb.gz" | awk -F= '/^lost\./ && $2 != 0 { sub(/^lost\./, ""); print $1 }')
if [ -z "$lost_normal" ]; then
	! grep -q "the result is partial" "$WORKDIR/normal.report" ||
		fail "a profile without losses is called partial"
else
	info "normal maps: lost $(echo $lost_normal)"
	sed -n '/^Lost and dropped/,/^$/p' "$WORKDIR/normal.report" >"$WORKDIR/lost_normal.txt"
	for k in $lost_normal; do
		grep -Eq "^ +$k +[1-9]" "$WORKDIR/lost_normal.txt" ||
			{ diag_file "Lost and dropped" "$WORKDIR/lost_normal.txt"; fail "the report does not list $k"; }
	done
	grep -q "the result is partial" "$WORKDIR/lost_normal.txt" ||
		fail "a profile with losses ($(echo $lost_normal)) is not called partial"
fi

# calls that found the statistics map full are counted under no process
spill='for i in $(seq 20); do "$0" 1000 >/dev/null; done'
strace -f -qq -c -e trace=getppid -o "$WORKDIR/spill.strace" sh -c "$spill" "$FIXTURES/sys_count" ||
	fail "the workload failed under strace"
made=$(awk '$NF == "getppid" { print $4 }' "$WORKDIR/spill.strace")
LATPROF_DEBUG_MAX_ENTRIES=4 record_or_fail spill -- sh -c "$spill" "$FIXTURES/sys_count"
export_or_fail "$WORKDIR/spill.pb.gz" "$WORKDIR/spill.json" --format json --weight syscalls
read -r got unattr <<<"$(json_py "$WORKDIR/spill.json" '
s = [e for e in j.get("syscalls", []) if e.get("name") == "getppid"]
print(sum(e["count"] for e in s), sum(e["count"] for e in s if e["pid"] >= 1 << 30))')"
# a full map refuses with -E2BIG (map_full); 6.1's allocator for maps that
# are not preallocated often refuses first, with -ENOMEM (no_memory): 65,176
# of those and no map_full in a 6.1 guest (make check-kernels)
full=$(profile_meta "$WORKDIR/spill.pb.gz" | sed -n 's/^lost\.syscall_stats_unattributed_map_full=//p')
nomem=$(profile_meta "$WORKDIR/spill.pb.gz" | sed -n 's/^lost\.syscall_stats_unattributed_no_memory=//p')
info "getppid: strace counted ${made:-?}, the 4-entry profile ${got:-?} (${unattr:-?} unattributed; syscall_stats_unattributed_map_full ${full:-0}, _no_memory ${nomem:-0})"
[ $((${full:-0} + ${nomem:-0})) -gt 0 ] && [ "${unattr:-0}" -gt 0 ] ||
	fail "inconclusive: the 4-entry statistics map never filled (unattributed ${unattr:-0}, map_full ${full:-0}, no_memory ${nomem:-0})"
[ -n "$made" ] && [ "$got" = "$made" ] ||
	fail "the getppid calls are not all counted with a full statistics map: ${got:-none} in the profile, ${made:-?} made (strace)"
# --requests keeps each live process's times in proc_times: with one
# entry, the shell's ls finds it full, and that is counted; processes that
# come and go one at a time give their entry back at exit
LATPROF_DEBUG_LOSE=proc_times record_or_fail times --requests -- sh -c 'ls / >/dev/null; ls / >/dev/null'
ptimes=$(profile_meta "$WORKDIR/times.pb.gz" | sed -n 's/^lost\.process_times_dropped_map_full=//p')
[ "${ptimes:-0}" -gt 0 ] ||
	fail "--requests with a 1-entry proc_times and 3 processes: lost.process_times_dropped_map_full is '${ptimes:-absent}'"
LATPROF_DEBUG_MAX_ENTRIES=4 record_or_fail seq --requests -- sh -c 'for i in 1 2 3 4 5 6 7 8; do ls / >/dev/null; sleep 0.3; done'
seq=$(profile_meta "$WORKDIR/seq.pb.gz" | sed -n 's/^lost\.process_times_dropped_map_full=//p')
seq_procs=$(profile_meta "$WORKDIR/seq.pb.gz" | sed -n 's/^count\.processes=//p')
seq_dropped=$(profile_meta "$WORKDIR/seq.pb.gz" | sed -n 's/^lost\.procs_dropped_map_full=//p')
# all of them traced (a process the 4-entry procs map refused charges nothing)
[ "${seq_procs:-0}" -ge 17 ] && [ "${seq_dropped:-0}" = 0 ] ||
	fail "the 17 processes one after another were not all traced: count.processes ${seq_procs:-?}, lost.procs_dropped_map_full ${seq_dropped:-?}"
[ "${seq:-0}" = 0 ] ||
	fail "--requests with a 4-entry proc_times and 17 processes one after another: lost.process_times_dropped_map_full is $seq (exited processes' entries not deleted)"
pass "$n_tiny map-full drops counted and reported (normal maps: $n_normal); with the statistics map full, all $made getppid calls counted ($unattr unattributed); $ptimes process times dropped with a 1-entry proc_times, 0 with 17 processes one after another in 4 entries"
