#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Bad usage and bad input: exit 2 (bad usage/input) with exactly one line on
# stderr, starting with "latprof: " and naming the problem, and nothing left
# behind (no output, no temporary file) in the output or working directory.
# Cases: dead/garbage PIDs, missing commands, -F/-d out of range or missing,
# two targets, unknown options and verbs; an -o that cannot be written (no
# such dir, a directory, /proc, an immutable dir), which must be found before
# the command is started; report/export of a missing file, a directory, random
# bytes, a truncated real profile, gzipped garbage, an empty file; an unknown
# export format. Every case runs; the failures are listed at the end.
#
# Ground truth is the input itself: a PID taken from a process that has been
# reaped, paths that do not exist, random bytes, a real profile cut in half.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab

# bad CASE RC PATTERN ARGS...: run `latprof ARGS` in the empty dir
# WORKDIR/CASE (also where -o points) and check status, stderr and leftovers.
# A failing case is counted and reported, and the next case still runs.
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
	local name=$1 want=$2 pat=$3 rc
	shift 3
	local d=$WORKDIR/$name
	mkdir -p "$d"
	(cd "$d" && exec timeout -k 5 20 "$LATPROF" "$@") \
		>"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.stderr"
	rc=$?
	# passing cases stay quiet: the runner shows only the last 40 lines
	echo "$name: latprof $* -> $rc: $(head -c 200 "$WORKDIR/$name.stderr" | tr '\n' ' ')" \
		>>"$WORKDIR/cases.log"
	if [ "$rc" != "$want" ]; then
		diag_file "stderr" "$WORKDIR/$name.stderr"
		[ -e "$d/ran" ] && info "$name: the command ran before latprof failed"
		fail "$name: latprof $* exited $rc, expected $want"
	fi
	[ -e "$d/ran" ] && fail "$name: latprof $*: the command ran although the arguments are bad"
	check_one_line_error "$WORKDIR/$name.stderr" "$pat" "$name: latprof $*"
	check_dir_empty "$d" "$name: latprof $*"
}

# A PID that surely does not exist: one just reaped (pid_max is far away).
sleep 0 &
dead=$!
wait $dead
[ -e /proc/$dead ] && fail "setup: pid $dead still exists"

bad pid_dead 2 "\\<$dead\\>" record -p "$dead" -d 1 -o "$WORKDIR/pid_dead/out.pb.gz"
bad pid_list 2 "\\<$dead\\>" record -p "$$,$dead" -d 1 -o "$WORKDIR/pid_list/out.pb.gz"
bad pid_word 2 "abc|pid" record -p abc -d 1 -o "$WORKDIR/pid_word/out.pb.gz"
bad cmd_path 2 "/nonexistent/latprof-no-such-cmd" \
	record -o "$WORKDIR/cmd_path/out.pb.gz" -- /nonexistent/latprof-no-such-cmd
bad cmd_name 2 "latprof-no-such-cmd" \
	record -o "$WORKDIR/cmd_name/out.pb.gz" -- latprof-no-such-cmd arg
bad freq_0 2 "(-F|freq).*\\<0\\>|\\<0\\>.*(-F|freq)" \
	record -F 0 -o "$WORKDIR/freq_0/out.pb.gz" -- true
bad freq_big 2 "100000" record -F 100000 -o "$WORKDIR/freq_big/out.pb.gz" -- true
bad freq_word 2 "abc" record -F abc -o "$WORKDIR/freq_word/out.pb.gz" -- true
bad freq_missing 2 "-F|freq|argument" record -o "$WORKDIR/freq_missing/out.pb.gz" -F
bad dur_word 2 "abc" record -d abc -o "$WORKDIR/dur_word/out.pb.gz" -- true
bad two_targets 2 "target|-a|-p|--all|--pid" record -a -p $$ -d 1 -o "$WORKDIR/two_targets/out.pb.gz"
bad bad_option 2 "bogus-option" record --bogus-option -o "$WORKDIR/bad_option/out.pb.gz" -- true
bad bad_short_option 2 "-Z|'Z'|\\<Z\\>" record -Z -o "$WORKDIR/bad_short_option/out.pb.gz" -- true
bad bad_verb 2 "frobnicate" frobnicate

# Unwritable -o: checked before anything runs, so the command must not start.
bad out_nodir 2 "/nonexistent/dir" \
	record -o /nonexistent/dir/out.pb.gz -- touch "$WORKDIR/out_nodir/ran"
bad out_isdir 2 "out_isdir" record -o "$WORKDIR/out_isdir" -- touch "$WORKDIR/out_isdir/ran"
bad out_proc 2 "/proc" record -o /proc/latprof-e2e.pb.gz -- touch "$WORKDIR/out_proc/ran"
# A directory even root cannot write to: immutable (where the fs supports it).
mkdir -p "$WORKDIR/immutable"
if chattr +i "$WORKDIR/immutable" 2>/dev/null; then
	at_exit chattr -i "$WORKDIR/immutable"
	bad out_immutable 2 "immutable" \
		record -o "$WORKDIR/immutable/out.pb.gz" -- touch "$WORKDIR/out_immutable/ran"
	chattr -i "$WORKDIR/immutable"
else
	info "chattr +i not supported here: immutable -o dir case skipped"
fi

# Unreadable and corrupt profiles, for report and export.
real=$WORKDIR/real.pb.gz
lp_record "$WORKDIR/real.out" "$WORKDIR/real.err" -F 99 -o "$real" -- "$FIXTURES/hot_ab" 0.3
rc=$?
[ $rc = 0 ] && [ -s "$real" ] || { diag_file "record stderr" "$WORKDIR/real.err"; fail "setup: record of a real profile exited $rc"; }
gzip -t "$real" 2>/dev/null || fail "setup: $real is not gzip"
mkdir -p "$WORKDIR/in"
head -c 4096 /dev/urandom >"$WORKDIR/in/random.pb.gz"
size=$(stat -c %s "$real")
head -c $((size / 2)) "$real" >"$WORKDIR/in/truncated.pb.gz"
head -c 4096 /dev/urandom | gzip >"$WORKDIR/in/gzipped-random.pb.gz"
: >"$WORKDIR/in/empty.pb.gz"
mkdir "$WORKDIR/in/adir.pb.gz"

bad report_missing 2 "$WORKDIR/in/missing.pb.gz" report "$WORKDIR/in/missing.pb.gz"
bad report_default 2 "latprof.pb.gz" report
bad report_dir 2 "adir.pb.gz" report "$WORKDIR/in/adir.pb.gz"
corrupt="corrupt|invalid|truncat|malformed|not a|unexpected|bad"
for f in random truncated gzipped-random empty; do
	bad "report_$f" 2 "$f.pb.gz|$corrupt" report "$WORKDIR/in/$f.pb.gz"
	bad "export_$f" 2 "$f.pb.gz|$corrupt" \
		export "$WORKDIR/in/$f.pb.gz" --format folded -o "$WORKDIR/export_$f/out.folded"
done
bad export_out_nodir 2 "/nonexistent/dir" \
	export "$real" --format folded -o /nonexistent/dir/out.folded
bad export_format 2 "frobformat" export "$real" --format frobformat -o "$WORKDIR/export_format/out"

[ -z "$FAILED" ] || fail "$(echo $FAILED | wc -w) of $NCASES cases failed:$FAILED"
pass "$NCASES cases"
