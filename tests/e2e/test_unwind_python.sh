#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding through Debian's Python interpreter, which has no frame
# pointers: every sample of the eval loop reaches _start.
#
# Ground truth (not from latprof): Debian's /usr/bin/python3 (not a pyenv
# python first on PATH) runs py_loop.py for 3 s: nested pure-Python
# functions doing integer arithmetic, 85 ms at a time, between 15 ms sleeps.
# Everything but interpreter start-up and shutdown runs Python code, so under
# _start -> ... -> Py_BytesMain -> ... -> _PyEval_EvalFrameDefault (python3.11
# exports _start and Py_BytesMain in .dynsym, not main). The script prints
# the process's CPU time (time.process_time_ns). (perf record --call-graph
# dwarf finds both frames in 99.8% of its samples.)
# The native stack is what is tested, so Python frames are off (--no-python:
# with them, each _PyEval_EvalFrameDefault gives way to the Python functions
# it ran; test_python_frames.sh checks those).
# Checks, --unwind dwarf -F 499 --no-python:
#   - the python process's sample count is within +-10% of cpu_time_s x freq;
#   - >= 95% of its samples contain _start and, later (leafwards),
#     _PyEval_EvalFrameDefault; samples whose leaf is in the kernel (the
#     sleeps, clock reads) count too: their user stack must be complete.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
PY=/usr/bin/python3
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_loop.py
[ -x "$PY" ] || skip "no Debian python at $PY"
[ -r "$SCRIPT" ] || fail "fixture not found: $SCRIPT"
nm -D "$PY" 2>/dev/null | grep -qw _PyEval_EvalFrameDefault ||
	skip "$PY does not export _PyEval_EvalFrameDefault (not Debian's python3.11?)"

freq=499
record_and_fold py --unwind dwarf --no-python -F $freq -- "$PY" "$SCRIPT" 3
folded=$WORKDIR/py.folded
out=$WORKDIR/py.out
cpu_ns=$(kv "$out" "py_loop " cpu_ns)
if [ -z "$cpu_ns" ]; then
	diag_file "command stdout" "$out"
	fail "py_loop.py printed no cpu_ns"
fi
comm=python3	# exec's basename; the interpreter does not rename itself
total=$(folded_sum "$folded" "$comm")
if [ "$total" = 0 ]; then
	diag_file "folded" "$folded"
	fail "no samples of the python process (comms: $(folded_comms "$folded" | tr '\n' ' '))"
fi
good=$(folded_sum_chain "$folded" "$comm" "_start;*;_PyEval_EvalFrameDefault")
kleaf=$(awk -v comm="$comm" "$FOLDED_AWK"'
	{
		cnt = folded_parse()
		if (f[1] == comm && f[n] ~ /_\[k\]$/)
			sum += cnt
	}
	END { print sum + 0 }' "$folded")
kgood=$(awk '/_\[k\] [0-9]+$/' "$folded" |
	folded_sum_chain /dev/stdin "$comm" "_start;*;_PyEval_EvalFrameDefault")
expected=$(calc "$cpu_ns / 1e9 * $freq")
info "comm $comm: cpu=${cpu_ns}ns expected=$expected samples=$total"
info "_start...;_PyEval_EvalFrameDefault in $good ($(ratio "$good" "$total")); kernel-leaf samples $kleaf, complete $kgood"
if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
	diag_file "record stderr" "$WORKDIR/py.err"
	fail "$total python samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
fi
if ! in_range "$(ratio "$good" "$total")" 0.95 1; then
	folded_missing "$folded" "$comm" "_start;*;_PyEval_EvalFrameDefault" 15
	fail "only $good of $total python samples contain _start ... _PyEval_EvalFrameDefault (expected >= 0.95)"
fi
pass "$(ratio "$good" "$total") of the python samples reach _start"
