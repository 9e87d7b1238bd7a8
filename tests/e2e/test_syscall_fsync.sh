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
#   - export --weight syscalls: exactly 100 fsyncs there.
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
pass "$got ns in 100 fsyncs (truth $fsync_ns)"
