#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A Python program that only waits (issue 27): tests/fixtures/py_wait.py
# sleeps and asks a backend process over TCP (a blocking recv, and a recv
# with a socket timeout, which polls first), nothing long enough on a CPU to
# be sampled, then exits while the recording still runs. Every Python frame
# of its latency stacks must be named from the waits' stacks alone, and
# each function's waits charged to it (tests/e2e/py_wait_check.py).
#
# Ground truth (not from latprof): the fixture's own monotonic-clock time of
# each function, summed over its rounds. On Debian's python3.11 and every
# pyenv 3.8-3.13 (the test of stripped builds and of 3.13-3.15 in a
# container root run the same check on theirs). ~20 s.
TEST_BUDGET_S=${TEST_BUDGET_S:-60}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_wait.py
CHECK="/usr/bin/python3 $(dirname "$0")/py_wait_check.py"

machine_pythons

n=0
for py in "${pythons[@]}"; do
	n=$((n + 1))
	name=wait$n
	info "== $py"
	record_and_fold $name -- "$py" "$SCRIPT" 3 0.1
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lat.folded" --format folded \
		--weight latency
	if ! $CHECK "$WORKDIR/$name.lat.folded" "$WORKDIR/$name.out" >"$WORKDIR/$name.check"; then
		diag_file "check" "$WORKDIR/$name.check"
		diag_file "record stderr" "$WORKDIR/$name.err"
		folded_top "$WORKDIR/$name.lat.folded" "" 8 >&2
		fail "$py: the waits of a program that only waits are not named"
	fi
	sed "s/^/  /" "$WORKDIR/$name.check"
done

# Deeper than the 64 frames kept: the innermost 64 are deep() and bottom(),
# by construction (80 calls of deep below <module>), so no other name may
# appear (the 64th once carried the copy of a frame further out), each in
# deep.py: the script exits right after its one slow call, and when the
# interpreter is gone before the reader gets to the stack the names come
# from the copy taken at the sample, which carries the file name's tail
# since a CI run showed "deep (?)" x 63, "bottom (?)" (3.13).
cat >"$WORKDIR/deep.py" <<'PYEOF'
import time
def bottom():
    time.sleep(0.3)
def deep(n):
    if n:
        deep(n - 1)
    else:
        bottom()
deep(80)
PYEOF
py=${pythons[${#pythons[@]} - 1]}
record_and_fold deep -- "$py" "$WORKDIR/deep.py"
export_or_fail "$WORKDIR/deep.pb.gz" "$WORKDIR/deep.lat.folded" --format folded --weight latency
read -r kept others < <(awk "$FOLDED_AWK"'
	/deep \(deep\.py\)/ {
		c = folded_parse()
		n = split($0, f, ";")
		k = 0; o = 0
		for (i = 1; i <= n; i++) {
			if (f[i] !~ / \([^()]*\)( [0-9]+)?$/)
				continue
			if (f[i] ~ /^(deep|bottom) \(deep\.py\)/)
				k++
			else
				o++
		}
		print k, o
		exit
	}' "$WORKDIR/deep.lat.folded")
info "80 calls deep: ${kept:-0} Python frames kept, ${others:-0} other Python frames"
[ "${kept:-0}" = 64 ] && [ "${others:-1}" = 0 ] || {
	folded_top "$WORKDIR/deep.lat.folded" "" 3 >&2
	fail "a stack deeper than 64 Python frames: ${kept:-0} deep/bottom frames, ${others:-0} others (want 64 and 0)"
}

# A two-line script, as a user first tries: its one slow call is its last,
# the interpreter exits about 2 ms after it (before the reader, woken at
# once, got to the stack, in 2 of 4 runs of Debian's python3.11), and its
# module body must still be named with its file (was "<module> (?)").
printf 'import time\ntime.sleep(0.3)\n' >"$WORKDIR/short.py"
n=0
for py in "${pythons[@]}"; do
	n=$((n + 1))
	record_and_fold short$n -- "$py" "$WORKDIR/short.py"
	export_or_fail "$WORKDIR/short$n.pb.gz" "$WORKDIR/short$n.lat.folded" --format folded \
		--weight latency
	# clock_nanosleep, or pselect6 before 3.11: the nap is nearly all of it
	got=$(folded_sum_chain "$WORKDIR/short$n.lat.folded" "" "<module> (short.py)")
	if ! in_range "$(ratio "${got:-0}" 300000000)" 0.95 1.10; then
		folded_top "$WORKDIR/short$n.lat.folded" "" 5 >&2
		fail "$py: the nap of a two-line script is ${got:-0} ns under '<module> (short.py)', expected 0.3 s"
	fi
done
info "a two-line script's nap named '<module> (short.py)' on ${#pythons[@]} interpreters"
pass
