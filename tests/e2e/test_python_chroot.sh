#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Python frames of Debian testing's stripped python3.13, python3.14 and
# python3.15 run in a container-like root (tests/pyroot/mkroot.sh: debootstrap
# minbase, no -dbg, no -dev): their files are reachable only through
# /proc/PID/root, they have no DWARF and no table entry, so the offsets come
# from the process's own _Py_DebugOffsets, whose layout differs per minor
# version (docs/python.md).
#
# Ground truth (not from latprof): tests/fixtures/py_names.py, copied into the
# root, measures its main thread's CPU time in burn_a and burn_b, the time its
# reader thread spends in os.read, and its functions' line ranges. Per
# interpreter, `latprof record -- chroot ROOT python3.X py_names.py mix 2`
# (tests/e2e/py_frames_check.py mix):
#   - >= 95% of the main thread's samples end in burn_a, burn_b or run_main,
#     under <module>;main;mix;run_main; burn_a's share within 5 points of the
#     truth; with --py-lines, >= 95% of burn_a's frames on a line of its body;
#   - >= 95% of the reader's syscall:read latency under wait_on_pipe;
#   - >= 95% of the main thread's samples have <module> right above
#     PyEval_EvalCode: the Python frames stand in place of the eval loop's
#     (which runs from a .cold part these files do not name, pyeval.h);
#   - the report names the release the interpreter says it is (3.14.x), with
#     offsets from debug_offsets.
# Then -p on a python3.14 started in the root before latprof (as a process in
# a running container is), and a copy of python3.14 named python3.14t, which
# is refused as a free-threaded build: its C frames stay and the report says
# why, as is a copy that says it is 3.16. And tests/fixtures/py_wait.py on the
# three (see test_python_waits.sh). The root is made once and cached (/var/cache/latprof/pyroot, or
# PYROOT_DIR): about a minute the first time; the test itself about 25 s.
TEST_BUDGET_S=${TEST_BUDGET_S:-115}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
CHECK="/usr/bin/python3 $(dirname "$0")/py_frames_check.py"

# The fixtures inside the root, where only the chrooted interpreter sees them.
pyroot "$(dirname "$0")/../fixtures/py_names.py" "$(dirname "$0")/../fixtures/py_wait.py" ||
	skip "no debootstrap to make the Debian testing root"
root=$PYROOT
script=$PYROOT_TMP/py_names.py

for v in 3.13 3.14 3.15; do
	name=py${v/./}
	info "== chroot $root python$v"
	record_and_fold $name -F 499 --mode cpu,syscall -- chroot "$root" python$v "$script" mix 2
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lat.folded" --format folded \
		--weight latency
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lines.folded" --format folded \
		--py-lines
	if ! $CHECK mix "$WORKDIR/$name.folded" "$WORKDIR/$name.lat.folded" \
		"$WORKDIR/$name.lines.folded" "$WORKDIR/$name.out" >"$WORKDIR/$name.check"; then
		diag_file "check" "$WORKDIR/$name.check"
		diag_file "record stderr" "$WORKDIR/$name.err"
		lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report"
		grep -A3 "^Python" "$WORKDIR/$name.report" >&2
		folded_top "$WORKDIR/$name.folded" "" 8 >&2
		fail "python$v in a chroot: Python frames wrong"
	fi
	sed "s/^/  /" "$WORKDIR/$name.check"
	# in place of the eval loop's frame, not at the root: the loop runs from
	# a _PyEval_EvalFrameDefault.cold that these stripped files do not name
	# (the native frames: the default Python view folds the interpreter's away)
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.native.folded" --format folded \
		--native
	main_all=$(folded_sum "$WORKDIR/$name.native.folded" pymain)
	placed=$(folded_sum_chain "$WORKDIR/$name.native.folded" pymain \
		"PyEval_EvalCode;<module> (py_names.py)")
	info "python$v: $placed of $main_all main thread samples have <module> right above PyEval_EvalCode"
	in_range "$(ratio "$placed" "$main_all")" 0.95 1 || {
		folded_top "$WORKDIR/$name.native.folded" pymain 5 >&2
		fail "python$v: Python frames not in place of the eval loop's frames"
	}
	ver=$(chroot "$root" python$v -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report" || fail "python$v: report failed"
	grep -q " Python $ver /.* (offsets: debug_offsets)" "$WORKDIR/$name.report" || {
		diag_file "report" "$WORKDIR/$name.report" 200
		fail "python$v: the report does not name Python $ver with offsets from debug_offsets"
	}
	info "$(grep " Python $ver " "$WORKDIR/$name.report" | tr -s ' ')"
done

# A program that only waits (tests/e2e/test_python_waits.sh, the same check):
# every Python frame of its latency stacks named, each function's waits
# under it, against the fixture's own clock.
for v in 3.13 3.14 3.15; do
	name=wait${v/./}
	record_and_fold $name -- chroot "$root" python$v "$PYROOT_TMP/py_wait.py" 3 0.1
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lat.folded" --format folded \
		--weight latency
	if ! /usr/bin/python3 "$(dirname "$0")/py_wait_check.py" "$WORKDIR/$name.lat.folded" \
		"$WORKDIR/$name.out" >"$WORKDIR/$name.check"; then
		diag_file "check" "$WORKDIR/$name.check"
		folded_top "$WORKDIR/$name.lat.folded" "" 8 >&2
		fail "python$v in a chroot: the waits of a program that only waits are not named"
	fi
	sed "s/^/  /" "$WORKDIR/$name.check"
done

# -p on an interpreter that was running in the root before latprof started:
# its main thread is in run_main (burn_a 70%, burn_b 30%) until killed.
start_bg "$WORKDIR/p.out" chroot "$root" python3.14 "$script" sleep 60
pypid=$BG_PID	# chroot(8) execs the interpreter: the same process
sleep 2
record_and_fold late -F 499 --mode cpu -d 2 -p "$pypid"
late_all=$(folded_sum "$WORKDIR/late.folded")
late_named=$(awk "$FOLDED_AWK"'{ c = folded_parse(); if ($0 ~ /;run_main \(py_names\.py\);burn_[ab] \(py_names\.py\)/) s += c }
	END { print s + 0 }' "$WORKDIR/late.folded")
info "-p on python3.14 in the root: $late_named of $late_all samples under run_main;burn_a|burn_b"
in_range "$(ratio "$late_named" "$late_all")" 0.95 1 ||
	fail "-p: only $late_named of $late_all samples name run_main;burn_a|burn_b"
kill "$pypid" 2>/dev/null

# A free-threaded build is not walked (its structs differ from the default
# build's): named python3.14t, this copy of python3.14 is taken for one.
cp "$root/usr/bin/python3.14" "$root$PYROOT_TMP/python3.14t"
record_and_fold ft -F 499 --mode cpu -- chroot "$root" "$PYROOT_TMP/python3.14t" -c '
import time
t = time.time()
while time.time() - t < 1: pass'
lp_report "$WORKDIR/ft.pb.gz" "$WORKDIR/ft.report" || fail "report of python3.14t failed"
grep -q "unsupported: free-threaded build (3.14t): not walked" "$WORKDIR/ft.report" || {
	diag_file "report" "$WORKDIR/ft.report" 200
	fail "the report does not say that python3.14t is not walked"
}
kept=$(grep -A1 "free-threaded build" "$WORKDIR/ft.report" | sed -n 's/.*C frames kept: \([0-9]*\).*/\1/p')
named=$(grep -c " (<string>)" "$WORKDIR/ft.folded")
info "python3.14t: $(grep -o 'free-threaded build.*' "$WORKDIR/ft.report"), C frames kept in ${kept:-0} stacks"
[ "${kept:-0}" -gt 100 ] && [ "$named" = 0 ] ||
	fail "python3.14t: C frames kept in ${kept:-0} stacks, $named stacks with Python frames"

# A version newer than the layouts latprof knows is refused, not read with
# 3.15's: this copy of python3.14 says it is 3.16.0 (its Py_Version).
py316=$root$PYROOT_TMP/python3.16
cp "$root/usr/bin/python3.14" "$py316"
vaddr=$(readelf -W --dyn-syms "$py316" | awk '$8 == "Py_Version" { print $2; exit }')
off=
while read -r type o v _ fs _; do	# its file offset, through its PT_LOAD
	[ "$type" = LOAD ] && [ -n "$vaddr" ] && ((16#$vaddr >= v && 16#$vaddr < v + fs)) &&
		off=$((16#$vaddr - v + o))
done < <(readelf -W -l "$py316")
[ -n "$vaddr" ] && [ -n "$off" ] || fail "no Py_Version in python3.14"
printf '\xf0\x00\x10\x03' | dd of="$py316" bs=1 seek="$off" conv=notrunc status=none
record_and_fold v316 -F 499 --mode cpu -- chroot "$root" "$PYROOT_TMP/python3.16" -c '
import time
t = time.time()
while time.time() - t < 0.5: pass'
lp_report "$WORKDIR/v316.pb.gz" "$WORKDIR/v316.report" || fail "report of python3.16 failed"
grep -q "unsupported: Python 3.16: frames are walked for 3.8 to 3.15 only" "$WORKDIR/v316.report" || {
	diag_file "report" "$WORKDIR/v316.report" 200
	fail "the report does not say that 3.16 is not walked"
}
info "python3.16: $(grep -o 'unsupported: Python 3.16.*' "$WORKDIR/v316.report")"
exit 0
