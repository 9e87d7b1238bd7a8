#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fsync on a real file system is attributed to the function that syncs.
#
# Ground truth (from the fixture, not latprof): sys_fsync's sync_writer()
# (main -> sync_writer) writes 4 KiB and fsyncs, 100 times, on a file in a
# directory on a disk file system (disk_workdir: WORKDIR, or /var/tmp or
# build/ when WORKDIR is on tmpfs, where fsync does no I/O; never a skip), so
# every fsync goes to the disk: a few hundred us each on the development VM,
# some over 1 ms; it times the fsyncs itself (fsync_ns).
# Checks, `record --min-duration 0` (every syscall is attributed, so the
# result does not depend on how fast the disk is):
#   - export --weight latency --format folded: the stacks containing
#     main;sync_writer and ending in syscall:fsync add up to the fixture's
#     fsync_ns within -20%..+5% (latprof times inside the kernel, the
#     fixture around the call, so latprof may only be a little lower);
#   - export --weight syscalls: exactly 100 fsyncs there, and every syscall
#     of the run, ld.so's included, under its _start (a stack cut short is
#     one the unwinder met before its maps snapshot had libc: a CI run cut
#     27 to 'fsync;syscall:fsync', re-read only 5 ms after ld.so's);
#   - the report's Stacks line for the fixture: truncated 0 (ld.so's _start
#     has no CFI: its entry-point code is the outermost frame, it used to
#     count 29 truncated stacks in every run).
# The fixture runs at SCHED_FIFO (see sys_fsync.c): a busy machine cannot
# delay its clock reads after the call.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_fsync

disk_workdir
fstype=$DISK_FS
record_or_fail fsync --min-duration 0 -- "$FIXTURES/sys_fsync" "$DISK_DIR" 100
prof=$WORKDIR/fsync.pb.gz
out=$WORKDIR/fsync.out
fsync_ns=$(kv "$out" "sys_fsync " fsync_ns)
[ -n "$fsync_ns" ] || { diag_file "command stdout" "$out"; fail "sys_fsync printed no fsync_ns"; }
info "fixture ($fstype, $DISK_DIR): $(head -n 1 "$out")"

folded=$WORKDIR/fsync.latency.folded
export_or_fail "$prof" "$folded" --format folded --weight latency
got=$(folded_sum_leaf "$folded" sys_fsync "main;sync_writer" syscall:fsync)
info "latency: main;sync_writer;...;syscall:fsync = $got ns (truth $fsync_ns, $(ratio "$got" "$fsync_ns"))"
if ! in_range "$(ratio "$got" "$fsync_ns")" 0.80 1.05; then
	folded_top "$folded" sys_fsync 15
	fail "latency under main;sync_writer;...;syscall:fsync is $got ns, expected the fixture's fsync_ns $fsync_ns -20%..+5%"
fi

counts=$WORKDIR/fsync.syscalls.folded
export_or_fail "$prof" "$counts" --format folded --weight syscalls
n=$(folded_sum_leaf "$counts" sys_fsync "main;sync_writer" syscall:fsync)
info "syscalls: main;sync_writer;...;syscall:fsync = $n calls (truth 100)"
if [ "$n" != 100 ]; then
	folded_top "$counts" sys_fsync 15
	fail "--weight syscalls counts $n fsyncs below sync_writer, expected 100 (--min-duration 0)"
fi
cut=$(awk -v p="sys_fsync;_start;" 'index($0, p) != 1 { n += $NF } END { print n + 0 }' "$counts")
if [ "$cut" != 0 ]; then
	grep -v '^sys_fsync;_start;' "$counts" >"$WORKDIR/cut.folded"
	diag_file "stacks not under _start" "$WORKDIR/cut.folded"
	fail "$cut syscalls' stacks do not begin at the fixture's _start (unwinding cut them short)"
fi

pid=$(kv "$out" "sys_fsync " pid)
lp_report "$prof" "$WORKDIR/fsync.report"
truncated=$(report_stacks "$WORKDIR/fsync.report" "$pid" truncated)
if [ "$truncated" != 0 ]; then
	diag_file "report" "$WORKDIR/fsync.report" 60
	fail "the report counts '$truncated' truncated stacks for the fixture (pid $pid), expected 0"
fi
pass "$got ns in 100 fsyncs (truth $fsync_ns), every stack complete"
