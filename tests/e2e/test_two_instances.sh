#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Two latprof instances record the same target at the same time, at
# different frequencies: each gets the whole truth, neither disturbs the
# other.
#
# The target is a shell that, once both instances are attached (-p), runs
# sys_count 200000 (a child, followed by both) and then execs spin 2.5 (the
# same pid, a new image).
# Ground truth from the fixtures: sys_count makes exactly 200,000 getppid
# calls (it prints the number it made), and spin prints its own CPU time
# (getrusage). Checks for each instance (-F 199 and -F 299): exit 0; the
# getppid count of sys_count's pid is exactly 200000 (JSON export); spin's
# spin_work samples are within +-10% of spin's cpu time x that instance's
# frequency.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_count spin

mkfifo "$WORKDIR/go"
start_bg "$WORKDIR/target.out" sh -c 'read -r line <"$1"; "$2" 200000; exec "$3" 2.5' \
	sh "$WORKDIR/go" "$FIXTURES/sys_count" "$FIXTURES/spin"
tpid=$BG_PID
lp_record "$WORKDIR/a.out" "$WORKDIR/a.err" -p "$tpid" -F 199 -d 30 -o "$WORKDIR/a.pb.gz" &
lpa=$!
lp_record "$WORKDIR/b.out" "$WORKDIR/b.err" -p "$tpid" -F 299 -d 30 -o "$WORKDIR/b.pb.gz" &
lpb=$!
# the load once both say they are recording (a fixed sleep races a slow
# attach: test_fork_exec's -p run under qemu lost the whole child)
for x in a b; do
	wait_for_line "$WORKDIR/$x.err" "latprof: recording" 60 ||
		{ echo go >"$WORKDIR/go"; diag_file "record $x stderr" "$WORKDIR/$x.err"; fail "record $x did not say it was recording"; }
done
echo go >"$WORKDIR/go"
wait $lpa
rca=$?
wait $lpb
rcb=$?
calls=$(kv "$WORKDIR/target.out" "sys_count " getppid)
cpid=$(kv "$WORKDIR/target.out" "sys_count " pid)
cpu=$(kv "$WORKDIR/target.out" "spin " cpu_ns)
[ "$calls" = 200000 ] && [ -n "$cpid" ] && [ -n "$cpu" ] ||
	{ diag_file "target stdout" "$WORKDIR/target.out"; fail "the target did not run sys_count 200000 then spin"; }

# check NAME RC FREQ: instance NAME's profile against the fixtures' numbers
check()
{
	local name=$1 rc=$2 freq=$3 n exp cnt
	[ "$rc" = 0 ] || { diag_file "record stderr" "$WORKDIR/$name.err"; fail "$name: record exited $rc"; }
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.json" --format json --weight latency
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.folded" --format folded
	cnt=$(json_syscall "$WORKDIR/$name.json" "$cpid" getppid count)
	n=$(folded_sum "$WORKDIR/$name.folded" spin spin_work)
	exp=$(calc "$cpu / 1e9 * $freq")
	info "$name (-F $freq): getppid count $cnt of 200000; spin_work $n samples, cpu x freq $exp, ratio $(ratio "$n" "$exp")"
	[ "$cnt" = 200000 ] || { json_syscalls_of "$WORKDIR/$name.json" "$cpid"; fail "$name: getppid count $cnt, expected 200000"; }
	in_range "$(ratio "$n" "$exp")" 0.9 1.1 || fail "$name: $n spin_work samples, expected $exp +-10%"
}
check a $rca 199
check b $rcb 299
pass
