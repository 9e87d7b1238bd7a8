#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The silent gaps are counted and reported (issue 17):
#   - a kernel or user stack id no longer in the stack map: lost.kstack_missing,
#     lost.ustack_missing (the samples keep their other frames);
#   - the kernel's counters unreadable: stats_unreadable lists them, and the
#     report calls them unknown instead of "none";
#   - an executable file libdwfl refuses: lost.modules_refused and
#     proc.PID.modules_refused, listed by the report.
#
# Neither of the first two can be provoked from outside: the hidden
# LATPROF_DEBUG_LOSE=stats,stacks (src/collect/load.c) makes the stats lookups fail
# and empties the stack map before the profile is built. The workload is a
# python3 that maps a truncated copy of libz (its ELF header and part of its
# program headers: libdwfl refuses it) executable, then runs `ls -R` 15
# times: kernel stacks from the ls children, and one refused file in python3.
# Ground truth: the same workload without the debug variable has kernel
# frames, no missing stacks and no stats_unreadable; the refused file is
# counted once in the python3 process (its forks map it too until they exec
# ls: some count it), and lost.modules_refused is the processes' sum.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools /usr/bin/python3

lib=/usr/lib/x86_64-linux-gnu/libz.so.1
[ -r "$lib" ] || skip "no $lib to truncate"
head -c 256 "$lib" >"$WORKDIR/libtrunc.so"
work='import mmap, subprocess, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)
for i in range(15):
    subprocess.run(["ls", "-R", "/usr/lib/x86_64-linux-gnu"], stdout=subprocess.DEVNULL)'

# meta PROFILE KEY: the value of metadata KEY, empty when absent.
meta()
{
	profile_meta "$1" | awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

# check_refused NAME: the truncated file is counted once in python3, listed by the report, and
# lost.modules_refused is the sum over the processes.
check_refused()
{
	local pb=$WORKDIR/$1.pb.gz pid n sum
	pid=$(profile_meta "$pb" | sed -n 's/^proc\.\([0-9]*\)\.comm=python3$/\1/p' | head -n 1)
	[ -n "$pid" ] || fail "$1: no python3 process in the profile"
	n=$(meta "$pb" "proc.$pid.modules_refused")
	[ "$n" = 1 ] || fail "$1: proc.$pid.modules_refused is '$n', expected 1 (python3 maps one truncated file)"
	# python3's forks map it too until they exec ls: any of them may count it
	sum=$(profile_meta "$pb" | awk -F= '$1 ~ /^proc\.[0-9]+\.modules_refused$/ { s += $2 } END { print s + 0 }')
	n=$(meta "$pb" lost.modules_refused)
	[ "$n" = "$sum" ] || fail "$1: lost.modules_refused is '$n', the processes' sum $sum"
	grep -Eq "^ +modules_refused, pid $pid +1$" "$WORKDIR/$1.report" ||
		{ diag_file "report" "$WORKDIR/$1.report"; fail "$1: the report does not list python3's refused file"; }
}

record_or_fail normal -F 499 -- /usr/bin/python3 -c "$work" "$WORKDIR/libtrunc.so"
LATPROF_DEBUG_LOSE=stats,stacks record_or_fail lossy -F 499 -- /usr/bin/python3 -c "$work" \
	"$WORKDIR/libtrunc.so"
for r in normal lossy; do
	lp_report "$WORKDIR/$r.pb.gz" "$WORKDIR/$r.report" ||
		{ diag_file "report stderr" "$WORKDIR/$r.report.err"; fail "report of $r failed"; }
	export_or_fail "$WORKDIR/$r.pb.gz" "$WORKDIR/$r.folded" --format folded
	sed -n '/^Lost and dropped/,/^$/p' "$WORKDIR/$r.report" >"$WORKDIR/$r.lost"
	info "$r: $(profile_meta "$WORKDIR/$r.pb.gz" | grep -E '^lost\.[ku]stack_missing|modules_refused|^stats_unreadable' | tr '\n' ' ')"
done

# the normal run: kernel frames, nothing missing, every counter read
kframes=$(grep -c '_\[k\]' "$WORKDIR/normal.folded")
[ "$kframes" -gt 0 ] || fail "the normal run has no kernel frames: the workload made none"
[ "$(meta "$WORKDIR/normal.pb.gz" lost.kstack_missing)" = 0 ] ||
	fail "the normal run has lost.kstack_missing '$(meta "$WORKDIR/normal.pb.gz" lost.kstack_missing)', expected 0"
[ -z "$(meta "$WORKDIR/normal.pb.gz" stats_unreadable)" ] || fail "the normal run has stats_unreadable"
grep -q "^ *unknown:" "$WORKDIR/normal.lost" && fail "the normal run's report calls counters unknown"
check_refused normal

# the lossy run: every kernel stack missing and counted, the counters unknown
n=$(meta "$WORKDIR/lossy.pb.gz" lost.kstack_missing)
[ "${n:-0}" -gt 0 ] || fail "lost.kstack_missing is '$n' with the stack map emptied"
grep -q '_\[k\]' "$WORKDIR/lossy.folded" && fail "kernel frames left with the stack map emptied"
grep -Eq "^ +kstack_missing +$n$" "$WORKDIR/lossy.lost" ||
	{ diag_file "Lost and dropped" "$WORKDIR/lossy.lost"; fail "the report does not list kstack_missing $n"; }
unread=$(meta "$WORKDIR/lossy.pb.gz" stats_unreadable)
for k in count.samples lost.kstack_map_full lost.samples_dropped_map_full; do
	case ",$unread," in *",$k,"*) ;; *) fail "stats_unreadable '$unread' does not list $k";; esac
done
grep -q "^ *unknown:" "$WORKDIR/lossy.lost" && grep -qF "$unread" "$WORKDIR/lossy.lost" ||
	{ diag_file "Lost and dropped" "$WORKDIR/lossy.lost"; fail "the report does not call the unread counters unknown"; }
grep -q "none: every sample" "$WORKDIR/lossy.lost" && fail "the lossy report says nothing was lost"
check_refused lossy
pass "kstack_missing $n, stats_unreadable, modules_refused counted and reported (normal run: $kframes stacks with kernel frames, none missing)"
