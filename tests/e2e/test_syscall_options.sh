#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The syscall and off-CPU options: bad values are rejected up front, and
# --syscalls really limits what is traced.
#
# Ground truth is the input itself: syscall names and modes that do not
# exist, durations that are not numbers, weights a profile has no data for
# (a --mode cpu recording has no latency, one without offcpu no off-CPU or
# wall time). Each bad case must exit 2 with exactly one line on stderr,
# starting with "latprof: " and naming the problem, before the command runs,
# and leave nothing behind. Every case runs; the failures are listed at the
# end.
# Then `record --syscalls read -- sys_pipe`: sys_pipe reads 20 pipe bytes
# (plus the dynamic loader's reads) and also forks, writes, sleeps and
# waits; in the JSON "syscalls" only read may appear, with >= 20 calls for
# sys_pipe's pid, and in the latency output only syscall:read leaves.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe sys_sleep

# bad CASE PATTERN ARGS...: run `latprof ARGS` in the empty dir WORKDIR/CASE
# (also where -o points) and check status 2, stderr and leftovers.
FAILED=""
NCASES=0
bad()
{
	local name=$1
	NCASES=$((NCASES + 1))
	(bad_case "$@") || FAILED="$FAILED $name"
}

bad_case()
{
	local name=$1 pat=$2 rc
	shift 2
	local d=$WORKDIR/$name
	mkdir -p "$d"
	(cd "$d" && exec timeout -k 5 20 "$LATPROF" "$@") \
		>"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.stderr"
	rc=$?
	echo "$name: latprof $* -> $rc: $(head -c 200 "$WORKDIR/$name.stderr" | tr '\n' ' ')" \
		>>"$WORKDIR/cases.log"
	if [ "$rc" != 2 ]; then
		diag_file "stderr" "$WORKDIR/$name.stderr"
		fail "$name: latprof $* exited $rc, expected 2"
	fi
	[ -e "$d/ran" ] && fail "$name: latprof $*: the command ran although the arguments are bad"
	check_one_line_error "$WORKDIR/$name.stderr" "$pat" "$name: latprof $*"
	check_dir_empty "$d" "$name: latprof $*"
}

# rec_bad CASE PATTERN OPTIONS...: a record case, with -o and a command
# that leaves WORKDIR/CASE/ran behind if it runs.
rec_bad()
{
	local name=$1 pat=$2
	shift 2
	bad "$name" "$pat" record "$@" -o "$WORKDIR/$name/out.pb.gz" -- touch "$WORKDIR/$name/ran"
}

rec_bad syscalls_unknown "nosuchcall" --syscalls nosuchcall
rec_bad syscalls_one_unknown "nosuchcall2" --syscalls read,nosuchcall2
rec_bad mode_bogus "bogus" --mode bogus
rec_bad mode_one_bogus "bogus" --mode cpu,bogus
rec_bad mindur_negative "-1|min-duration" --min-duration -1
rec_bad mindur_word "abc" --min-duration abc
rec_bad minblock_word "abc" --min-block abc

# Weights a profile has no data for.
cpu_prof=$WORKDIR/cpu.pb.gz
def_prof=$WORKDIR/def.pb.gz
lp_record "$WORKDIR/cpu.out" "$WORKDIR/cpu.err" --mode cpu -o "$cpu_prof" -- "$FIXTURES/sys_sleep" 5 5
rc=$?
[ $rc = 0 ] && [ -s "$cpu_prof" ] || { diag_file "record stderr" "$WORKDIR/cpu.err"; fail "setup: record --mode cpu exited $rc"; }
lp_record "$WORKDIR/def.out" "$WORKDIR/def.err" -o "$def_prof" -- "$FIXTURES/sys_sleep" 5 5
rc=$?
[ $rc = 0 ] && [ -s "$def_prof" ] || { diag_file "record stderr" "$WORKDIR/def.err"; fail "setup: record (default modes) exited $rc"; }
for fmt in folded json; do
	bad "w_latency_cpu_$fmt" "latency" export "$cpu_prof" --format $fmt --weight latency \
		-o "$WORKDIR/w_latency_cpu_$fmt/out"
	bad "w_syscalls_cpu_$fmt" "syscall" export "$cpu_prof" --format $fmt --weight syscalls \
		-o "$WORKDIR/w_syscalls_cpu_$fmt/out"
	bad "w_offcpu_def_$fmt" "offcpu|off-cpu" export "$def_prof" --format $fmt --weight offcpu \
		-o "$WORKDIR/w_offcpu_def_$fmt/out"
	bad "w_wall_def_$fmt" "wall|offcpu|off-cpu" export "$def_prof" --format $fmt --weight wall \
		-o "$WORKDIR/w_wall_def_$fmt/out"
	bad "w_bogus_$fmt" "bogusweight" export "$def_prof" --format $fmt --weight bogusweight \
		-o "$WORKDIR/w_bogus_$fmt/out"
done

# --syscalls read records only read.
record_or_fail only --syscalls read -- "$FIXTURES/sys_pipe" 20 20
out=$WORKDIR/only.out
pid=$(kv "$out" "sys_pipe " pid)
[ -n "$pid" ] || { diag_file "command stdout" "$out"; fail "sys_pipe printed no pid"; }
json=$WORKDIR/only.json
export_or_fail "$WORKDIR/only.pb.gz" "$json" --format json --weight latency
json_check "$json"
names=$(json_py "$json" 'print(" ".join(sorted(set(s["name"] for s in j["syscalls"]))))')
reads=$(json_syscall "$json" "$pid" read count)
info "--syscalls read: syscalls in the JSON: '$names'; pid $pid read count=$reads"
if [ "$names" != read ]; then
	json_syscalls_of "$json" "$pid"
	FAILED="$FAILED syscalls_read_only"
	info "syscalls_read_only: the JSON lists syscalls '$names', expected read alone"
elif [ -z "$reads" ] || [ "$reads" -lt 20 ] || [ "$reads" -gt 40 ]; then
	FAILED="$FAILED syscalls_read_count"
	info "syscalls_read_count: pid $pid has '$reads' reads, expected 20 (the pipe) + a few (the loader)"
fi
folded=$WORKDIR/only.latency.folded
export_or_fail "$WORKDIR/only.pb.gz" "$folded" --format folded --weight latency
leaves=$(awk "$FOLDED_AWK"'{ folded_parse(); print f[n] }' "$folded" | sort -u | tr '\n' ' ')
info "--syscalls read: latency leaves: $leaves"
if [ "$leaves" != "syscall:read " ]; then
	FAILED="$FAILED syscalls_read_leaves"
	info "syscalls_read_leaves: latency output has leaves '$leaves', expected syscall:read alone"
fi
NCASES=$((NCASES + 3))

[ -z "$FAILED" ] || fail "$(echo $FAILED | wc -w) of $NCASES cases failed:$FAILED"
pass "$NCASES cases"
