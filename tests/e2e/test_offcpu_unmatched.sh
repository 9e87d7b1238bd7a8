#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# An off-CPU interval whose switch-in is never seen is counted
# (lost.offcpu_unmatched), not silently dropped (issue 30). On a loaded
# machine the kernel sometimes fires no sched_switch for a switch back
# (docs/troubleshooting.md, "Off-CPU intervals lost"); the hidden LATPROF_DEBUG_LOSE=switch_in (src/collect/load.c) makes
# the switch-in hook ignore every interval, so each one is left open.
# Workload: a python3 that sleeps 20 x 30 ms (each sleep is one blocked
# interval, its clock_nanosleep exit finds it open).
# Ground truth: the sleeps themselves, 20 of 30 ms: the normal run charges
# >= 0.5 s off-CPU to the process; the lossy run charges none of it and
# counts >= 20 unmatched intervals, which the report lists; the normal
# run counts at most 2 (the kernel's own misses, 0-2 in a far busier run).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools /usr/bin/python3

work='import time
for i in range(20):
    time.sleep(0.03)'

# meta PROFILE KEY: the value of metadata KEY, 0 when absent.
meta()
{
	profile_meta "$1" | awk -v k="$2" 'index($0, k "=") == 1 { v = substr($0, length(k) + 2) } END { print v + 0 }'
}

# offcpu_ns NAME: the off-CPU nanoseconds of the python3 stacks of run NAME
offcpu_ns()
{
	export_or_fail "$WORKDIR/$1.pb.gz" "$WORKDIR/$1.folded" --format folded --weight offcpu
	awk '$1 ~ /^python3/ { s += $NF } END { print s + 0 }' "$WORKDIR/$1.folded"
}

record_or_fail normal --mode syscall,offcpu -- /usr/bin/python3 -c "$work"
LATPROF_DEBUG_LOSE=switch_in record_or_fail lossy --mode syscall,offcpu -- /usr/bin/python3 -c "$work"
normal=$(offcpu_ns normal)
lossy=$(offcpu_ns lossy)
n_normal=$(meta "$WORKDIR/normal.pb.gz" lost.offcpu_unmatched)
n=$(meta "$WORKDIR/lossy.pb.gz" lost.offcpu_unmatched)
info "off-CPU of python3: normal $normal ns ($n_normal unmatched), lossy $lossy ns ($n unmatched)"
[ "$normal" -ge 500000000 ] || fail "the normal run charges $normal ns off-CPU, expected >= 0.5 s of 20 x 30 ms sleeps"
[ "$lossy" -lt 50000000 ] || fail "the lossy run still charges $lossy ns off-CPU: the fault switch did not act"
[ "$n_normal" -le 2 ] || fail "the normal run counts $n_normal unmatched intervals, expected at most 2 (a hook that misses switch-ins)"
[ "$n" -ge 20 ] || fail "lost.offcpu_unmatched is $n with every switch-in ignored, expected >= 20 (one per sleep)"
lp_report "$WORKDIR/lossy.pb.gz" "$WORKDIR/lossy.report" ||
	{ diag_file "report stderr" "$WORKDIR/lossy.report.err"; fail "report of the lossy run failed"; }
grep -Eq "^ +offcpu_unmatched +$n$" "$WORKDIR/lossy.report" ||
	{ diag_file "report" "$WORKDIR/lossy.report" 60; fail "the report does not list offcpu_unmatched $n"; }
pass "$n unmatched intervals counted and reported (normal run: $normal ns off-CPU)"
