#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Syscall latency attributed to the user stack that waited: slow pipe reads
# through code without frame pointers.
#
# Ground truth (from the fixture, not latprof): sys_pipe, built with
# -fomit-frame-pointer, reads 20 bytes that a forked child writes 50 ms
# apart, each read in main -> reader_loop -> wait_on_pipe -> glibc's read
# (no frame pointer either), so it spends about 20 x 50 ms = 1.0 s inside
# read(); it times every read itself and prints the total (read_ns) and the
# fastest and slowest read. bpftrace (sys_enter_read/sys_exit_read) agrees:
# 20 reads in [32 ms, 64 ms), 1.003 s in all.
# Checks, `record -- sys_pipe` (default modes cpu,syscall, dwarf stacks):
#   - export --weight latency --format folded: the stacks of sys_pipe that
#     contain main;reader_loop;wait_on_pipe and end in syscall:read add up to
#     the fixture's read_ns +-10%, and to 1.0 s +-10% (the upper bound
#     stretches to read_ns + 10% when the machine is so busy that the reads
#     themselves overran);
#   - >= 95% of sys_pipe's syscall:read latency has that full stack;
#   - export --weight syscalls: exactly 20 slow reads there (every read
#     blocks ~50 ms: the fixture's min_read_ns), and exactly 20 slow
#     syscall:clock_nanosleep below the child's writer_loop (its 50 ms
#     sleeps);
#   - export --weight latency --format json: well formed, its "syscalls"
#     entry for (sys_pipe's pid, read) counts >= 20 reads, and its p50_ns is
#     in [32 ms, 64 ms), the log2 bucket of the 50 ms reads;
#   - last, `latprof report`: sections "Time breakdown", "Syscalls" (with
#     rows named read and clock_nanosleep, in full) and "Slow call sites"
#     (naming wait_on_pipe), whose read site ends with wait_on_pipe: a site
#     names the program's innermost frames, glibc's read() wrapper left out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe

record_or_fail pipe -- "$FIXTURES/sys_pipe"
prof=$WORKDIR/pipe.pb.gz
out=$WORKDIR/pipe.out
pid=$(kv "$out" "sys_pipe " pid)
read_ns=$(kv "$out" "sys_pipe " read_ns)
reads=$(kv "$out" "sys_pipe " reads)
if [ -z "$pid" ] || [ -z "$read_ns" ] || [ "$reads" != 20 ]; then
	diag_file "command stdout" "$out"
	fail "sys_pipe printed no pid/read_ns, or did not complete its 20 reads"
fi
info "fixture: pid=$pid reads=$reads read_ns=$read_ns ($(kv "$out" "sys_pipe " min_read_ns)..$(kv "$out" "sys_pipe " max_read_ns) ns each)"

folded=$WORKDIR/pipe.latency.folded
export_or_fail "$prof" "$folded" --format folded --weight latency
chain="main;reader_loop;wait_on_pipe"
got=$(folded_sum_leaf "$folded" sys_pipe "$chain" syscall:read)
all=$(awk -v c=sys_pipe "$FOLDED_AWK"'{ v = folded_parse(); if (folded_is(c) && f[n] == "syscall:read") s += v } END { print s + 0 }' "$folded")
info "latency: $chain;...;syscall:read = $got ns of $all ns in syscall:read (truth $read_ns)"
hi=$(awk -v t="$read_ns" 'BEGIN { printf "%.0f", (t * 1.1 > 1100000000 ? t * 1.1 : 1100000000) }')
if ! in_range "$got" 900000000 "$hi" || ! in_range "$(ratio "$got" "$read_ns")" 0.90 1.10; then
	folded_top "$folded" sys_pipe 15
	fail "latency under $chain;...;syscall:read is $got ns, expected 1.0 s +-10% and the fixture's read_ns $read_ns +-10%"
fi
if ! in_range "$(ratio "$got" "$all")" 0.95 1; then
	folded_top "$folded" sys_pipe 15
	fail "only $got of $all ns of sys_pipe's syscall:read latency has the full stack $chain"
fi

counts=$WORKDIR/pipe.syscalls.folded
export_or_fail "$prof" "$counts" --format folded --weight syscalls
n_read=$(folded_sum_leaf "$counts" sys_pipe "$chain" syscall:read)
n_sleep=$(folded_sum_leaf "$counts" sys_pipe "main;writer_loop" syscall:clock_nanosleep)
info "syscalls: $n_read slow reads below wait_on_pipe, $n_sleep slow clock_nanosleep below writer_loop (truth 20 and 20)"
if [ "$n_read" != 20 ] || [ "$n_sleep" != 20 ]; then
	folded_top "$counts" sys_pipe 10
	fail "--weight syscalls: $n_read slow reads below wait_on_pipe and $n_sleep slow clock_nanosleep below writer_loop, expected 20 and 20"
fi

json=$WORKDIR/pipe.latency.json
export_or_fail "$prof" "$json" --format json --weight latency
json_check "$json"
count=$(json_syscall "$json" "$pid" read count)
p50=$(json_syscall "$json" "$pid" read p50_ns)
info "json: read count=$count p50_ns=$p50"
if [ -z "$count" ] || [ -z "$p50" ]; then
	json_syscalls_of "$json" "$pid"
	fail "json has no syscalls entry for pid $pid, read (with count and p50_ns)"
fi
[ "$count" -ge 20 ] || fail "json: $count reads for pid $pid, expected >= 20 (the fixture made 20 slow ones)"
in_range "$p50" 32000000 63999999 || fail "json: read p50_ns=$p50, expected in [32 ms, 64 ms) (20 reads of about 50 ms)"
report=$WORKDIR/pipe.report
lp_report "$prof" "$report" || { diag_file "report stderr" "$report.err"; fail "latprof report exited non-zero"; }
for sec in "Time breakdown" "Syscalls" "Slow call sites"; do
	grep -q "^$sec" "$report" || { diag_file "report" "$report" 60; fail "report has no '$sec' section"; }
done
for sc in read clock_nanosleep; do
	if [ -z "$(awk -v sc="$sc" '/^Syscalls/ { s = 1; next } s && /^[^ ]/ { s = 0 } s && $1 == sc' "$report")" ]; then
		awk '/^Syscalls/,0' "$report" | head -n 12 | sed 's/^/  | /'
		fail "report's Syscalls section has no row named '$sc'"
	fi
done
if ! awk '/^Slow call sites/ { s = 1; next } s && /^[^ ]/ { s = 0 } s && /wait_on_pipe/ { ok = 1 } END { exit !ok }' "$report"; then
	awk '/^Slow call sites/,0' "$report" | head -n 12 | sed 's/^/  | /'
	fail "report's Slow call sites do not name wait_on_pipe"
fi
site=$(awk '/^Slow call sites/ { s = 1; next } s && /^[^ ]/ { s = 0 }
	s && want { print $1; exit } s && $NF == "syscall:read" { want = 1 }' "$report")
if [ "${site##*;}" != wait_on_pipe ]; then
	awk '/^Slow call sites/,0' "$report" | head -n 12 | sed 's/^/  | /'
	fail "the read site is '$site': its innermost frame is not the program's wait_on_pipe"
fi
pass "latency $got ns under wait_on_pipe (truth $read_ns), p50 $p50 ns; read site $site"
