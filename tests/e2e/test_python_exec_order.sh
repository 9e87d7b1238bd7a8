#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A Python started by `latprof record -- COMMAND` is walked from its first
# samples to its end, whatever order its exec's event and its first samples
# are handled in. They come through different ring buffers: when a sample of
# the new image came first and found the interpreter, the exec's event then
# deleted it from the walk for good, and the whole recording was "taken
# before it was found" (one run in four to one in two with pyenv's 3.8,
# whose executable loads libpython). Ten short runs of pyenv's oldest
# interpreter, each must walk >= 80% of its samples; the old code passed
# all ten about one time in twenty. About 15 s.
TEST_BUDGET_S=${TEST_BUDGET_S:-60}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools

root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
pythons=()
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	for p in "$root"/versions/$v.*/bin/python$v; do
		[ -x "$p" ] && pythons+=("$p")
	done
done
[ ${#pythons[@]} -gt 0 ] || skip "no pyenv CPython 3.8-3.13 on this machine"
py=${pythons[0]}	# the oldest: 3.8 showed it most often

for ((i = 0; i < 10; i++)); do
	record_and_fold run$i -F 499 --mode cpu,syscall -- "$py" -c '
import time
t = time.time()
while time.time() - t < 0.4: pass'
	lp_report "$WORKDIR/run$i.pb.gz" "$WORKDIR/run$i.report" || fail "report failed"
	walked=$(sed -n 's/.*stacks walked \([0-9]*\),.*/\1/p' "$WORKDIR/run$i.report")
	before=$(sed -n 's/.*taken before it was found \([0-9]*\),.*/\1/p' "$WORKDIR/run$i.report")
	in_range "$(ratio "${walked:-0}" "$((${walked:-0} + ${before:-0}))")" 0.8 1 || {
		grep -A3 "^Python" "$WORKDIR/run$i.report" >&2
		fail "run $i ($py): ${walked:-0} stacks walked, ${before:-0} taken before it was found"
	}
done
info "ten short runs of $py: each walked >= 80% of its stacks"
