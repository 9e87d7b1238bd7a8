#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding through CPython 3.12's perf trampolines (-X perf): code
# without CFI in anonymous memory, one per Python call, which keeps no frame
# pointer (sub $8,%rsp; call *%rcx; add $8,%rsp; ret). Before the unwinder
# stepped over them itself, every stack stopped at the innermost one.
#
# Ground truth (not from latprof): pyenv's python 3.12 runs py_perf.py with
# -X perf for 2 s of CPU: <module> -> main -> outer -> burn_a -> burn_b, all
# pure-Python integer arithmetic. The script prints what the interpreter
# itself knows: its CPU time, the CPU time spent inside outer() (that is in
# burn_a), and the Python call chain at burn_a read from its own frames
# (sys._getframe): <module>,main,outer,burn_a. Each Python frame runs under
# its trampoline, named py::FUNC:FILE in /tmp/perf-PID.map, so that chain is
# the order of the py:: frames. Below py::<module> sit the native frames of
# the interpreter's start-up, which `perf record --call-graph dwarf` of the
# same command unwinds to _start in its start-up samples:
# _start -> __libc_start_main -> __libc_start_call_main -> Py_BytesMain (the
# executable's main is a tail call to Py_BytesMain, so it is not on the
# stack). perf (and gdb's backtrace) stop at the first trampoline like
# latprof did, so neither can give the whole chain.
# Checks, --unwind dwarf -F 499:
#   - the python process's sample count is within +-10% of cpu_ns x freq;
#   - the samples with a py::burn_a frame are at least the share of CPU time
#     the script spent in burn_a, less 10 points (a stack cut between the
#     leaf and burn_a's trampoline loses its py::burn_a frame);
#   - >= 90% of the samples with a py::burn_a frame start at _start, have
#     Py_BytesMain above the first py:: frame, and have exactly the py::
#     frames py::<module>, py::main, py::outer, py::burn_a in that order up to
#     burn_a's. These read the full native stack (export --native): the
#     default Python view folds the trampolines and the start-up frames
#     away, so there
#   - >= 90% of the samples with a burn_a (py_perf.py) frame start
#     COMM;<module>;main;outer;burn_a (the chain the script reads from its
#     own frames, nothing between), and none has a py:: frame.
. "$(dirname "$0")/lib.sh"
require_root_bpf
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_perf.py
[ -r "$SCRIPT" ] || fail "fixture not found: $SCRIPT"
pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
PY=$(ls -d "$pyenv_root"/versions/3.12*/bin/python3 2>/dev/null | sort -V | tail -n 1)
[ -n "$PY" ] && [ -x "$PY" ] || skip "no pyenv python 3.12 under $pyenv_root/versions"

freq=499
record_and_fold py --unwind dwarf -F $freq -- "$PY" -X perf "$SCRIPT" 2
view=$WORKDIR/py.folded
folded=$WORKDIR/py.native.folded
export_or_fail "$WORKDIR/py.pb.gz" "$folded" --format folded --native
out=$WORKDIR/py.out
pid=$(kv "$out" "py_perf " pid)
if [ -z "$pid" ]; then
	diag_file "command stdout" "$out"
	fail "py_perf.py printed no pid"
fi
at_exit rm -f "/tmp/perf-$pid.map"
[ "$(kv "$out" "py_perf " trampoline)" = 1 ] ||
	skip "$PY -X perf did not activate the perf trampolines"
cpu_ns=$(kv "$out" "py_perf " cpu_ns)
burn_ns=$(kv "$out" "py_perf " burn_ns)
chain=$(kv "$out" "py_perf " chain)
[ "$chain" = "<module>,main,outer,burn_a" ] || fail "py_perf.py reports the call chain '$chain'"
[ -s "/tmp/perf-$pid.map" ] || fail "$PY -X perf wrote no /tmp/perf-$pid.map"
# the py:: frames expected up to burn_a's, as the folded output names them
want=$(echo "$chain" | awk -F, -v s="$SCRIPT" '{
	for (i = 1; i <= NF; i++)
		printf "%spy::%s:%s_[j]", (i > 1 ? "," : ""), $i, s
}')
comm=python3	# exec's basename

# py_stats FILE: "with_burn_a good" over comm's stacks (see the header).
py_stats()
{
	awk -v comm="$comm" -v want="$want" -v burn="py::burn_a:${SCRIPT}_[j]" \
		"$FOLDED_AWK"'
		{
			cnt = folded_parse()
			if (!folded_is(comm))
				next
			for (j = 2; j <= n && f[j] != burn; j++)
				;
			if (j > n)
				next
			with += cnt
			seen = ""
			native = 0
			for (k = 2; k <= j; k++) {
				if (f[k] == "Py_BytesMain" && seen == "")
					native = 1
				if (substr(f[k], 1, 4) == "py::")
					seen = seen (seen == "" ? "" : ",") f[k]
			}
			if (f[2] == "_start" && native && seen == want)
				good += cnt
			else if (show)
				print cnt "\t" substr(stack, 1, 400)
		}
		END { if (!show) print with + 0, good + 0 }' show="${2:-0}" "$1"
}

total=$(folded_sum "$folded" "$comm")
if [ "$total" = 0 ]; then
	diag_file "folded" "$folded"
	fail "no samples of the python process (comms: $(folded_comms "$folded" | tr '\n' ' '))"
fi
read -r with good < <(py_stats "$folded")
expected=$(calc "$cpu_ns / 1e9 * $freq")
share=$(calc "$burn_ns / $cpu_ns")
info "cpu=${cpu_ns}ns expected=$expected samples=$total; burn_a: ${burn_ns}ns ($share of cpu)"
info "samples with py::burn_a: $with ($(ratio "$with" "$total"));" \
	"complete chain: $good ($(ratio "$good" "$with"))"
if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
	diag_file "record stderr" "$WORKDIR/py.err"
	fail "$total python samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
fi
if ! in_range "$(ratio "$with" "$total")" "$(calc "$share - 0.10")" 1; then
	folded_top "$folded" "$comm" 5 | cut -c1-400
	fail "only $with of $total samples have a py::burn_a frame; burn_a took $share of the CPU time"
fi
if [ "$with" -le 0 ] || ! in_range "$(ratio "$good" "$with")" 0.90 1; then
	echo "  --- heaviest py::burn_a stacks without the chain ---"
	py_stats "$folded" 1 | sort -t"$(printf '\t')" -k1,1nr | head -n 5 | sed 's/^/  | /'
	fail "only $good of $with samples with py::burn_a reach _start through py::<module>, py::main, py::outer (expected >= 0.90)"
fi
# the Python view: the program's chain alone
read -r vwith vgood vtramp < <(awk -v comm="$comm" "$FOLDED_AWK"'
	{
		cnt = folded_parse()
		if (!folded_is(comm))
			next
		burn = chain = tramp = 0
		for (j = 2; j <= n; j++) {
			if (f[j] == "burn_a (py_perf.py)")
				burn = 1
			if (substr(f[j], 1, 4) == "py::")
				tramp = 1
		}
		if (!burn)
			next
		with += cnt
		if (f[2] == "<module> (py_perf.py)" && f[3] == "main (py_perf.py)" &&
		    f[4] == "outer (py_perf.py)" && f[5] == "burn_a (py_perf.py)")
			good += cnt
		if (tramp)
			bad += cnt
	}
	END { print with + 0, good + 0, bad + 0 }' "$view")
info "Python view: $vgood of $vwith samples with burn_a (py_perf.py) read <module>;main;outer;burn_a; $vtramp keep a py:: frame"
if [ "$vwith" -le 0 ] || [ "$vtramp" != 0 ] || ! in_range "$(ratio "$vgood" "$vwith")" 0.90 1; then
	folded_top "$view" "$comm" 5 | cut -c1-400
	fail "the Python view: $vgood of $vwith burn_a samples with the chain alone, $vtramp with py:: frames"
fi
pass "$good of $with py::burn_a samples reach _start through the trampolines of <module>, main, outer; the Python view reads the chain alone"
