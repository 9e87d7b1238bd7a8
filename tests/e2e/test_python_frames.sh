#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Python frames for every CPython on the machine: Debian's static, stripped
# python3.11 (offsets from python3.11-dbg's DWARF) and each pyenv 3.8-3.13
# (shared libpython with DWARF).
#
# Ground truth (not from latprof): tests/fixtures/py_names.py measures its
# main thread's CPU time in burn_a and burn_b (time.thread_time_ns), the wall
# time its reader thread spends in os.read, and prints its functions' line
# ranges (inspect). Checks per interpreter, -F 499 --mode cpu,syscall
# (tests/e2e/py_frames_check.py):
#   - >= 95% of the main thread's samples end in a Python frame burn_a,
#     burn_b or run_main, and have the chain <module>;main;mix;run_main;
#   - burn_a's share of burn_a + burn_b within 5 points of the truth;
#   - >= 95% of the reader's syscall:read latency is under wait_on_pipe;
#   - with --py-lines, >= 95% of burn_a's frames carry a line of its body;
#   - four threads (mode threads): each thread's samples name its own worker.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_names.py
CHECK="/usr/bin/python3 $(dirname "$0")/py_frames_check.py"

pythons=()
[ -x /usr/bin/python3.11 ] && pythons+=(/usr/bin/python3.11)
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	for p in "$root"/versions/$v.*/bin/python$v; do
		[ -x "$p" ] && pythons+=("$p")
	done
done
[ ${#pythons[@]} -gt 0 ] || skip "no CPython 3.8-3.13 on this machine"
if [ "${CI:-}" = true ] && [ ${#pythons[@]} -lt 7 ]; then
	fail "CI expects Debian's python3.11 and pyenv 3.8-3.13, found: ${pythons[*]}"
fi

n=0
for py in "${pythons[@]}"; do
	n=$((n + 1))
	name=py$n
	info "== $py"
	record_and_fold $name -F 499 --mode cpu,syscall -- "$py" "$SCRIPT" mix 3
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lat.folded" --format folded \
		--weight latency
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lines.folded" --format folded \
		--py-lines
	if ! $CHECK mix "$WORKDIR/$name.folded" "$WORKDIR/$name.lat.folded" \
		"$WORKDIR/$name.lines.folded" "$WORKDIR/$name.out" >"$WORKDIR/$name.check"; then
		diag_file "check" "$WORKDIR/$name.check"
		diag_file "record stderr" "$WORKDIR/$name.err"
		folded_top "$WORKDIR/$name.folded" "" 8 >&2
		fail "$py: Python frames wrong"
	fi
	sed "s/^/  /" "$WORKDIR/$name.check"
	record_and_fold ${name}t -F 499 --mode cpu -- "$py" "$SCRIPT" threads 2
	if ! $CHECK threads "$WORKDIR/${name}t.folded" >"$WORKDIR/${name}t.check"; then
		diag_file "check" "$WORKDIR/${name}t.check"
		fail "$py: threads"
	fi
	sed "s/^/  /" "$WORKDIR/${name}t.check"
done
pass "Python frames right for ${#pythons[@]} interpreters"
