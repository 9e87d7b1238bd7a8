#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Java (the machine's OpenJDK 17) with a perf map: a hot Java method by name.
#
# Ground truth (from the workload, not latprof): tests/fixtures/JavaHot.java
# times its own CPU loop in hotLoop() (hot_ns: the thread's CPU time over
# 1.5 s of wall time).
# HotSpot writes /tmp/perf-PID.map when it exits
# (-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit), after the samples
# were taken: latprof names the JIT frames when it builds the profile, from
# the map of a process that has exited. Checks, `record -- java ...`:
#   - the CPU time of stacks with a named JIT frame of JavaHot.hotLoop
#     ("_[j]") is 80-110% of hot_ns, the main thread's CPU time over the
#     loop. The first calls run in the interpreter, which has no per-method
#     name; -Xbatch makes the thread wait for each compilation instead of
#     interpreting on until the compiler threads get a CPU, so that share
#     does not grow with the machine's load (without it: 0.75 while
#     check-kernels and e2e tests ran beside CI, hot_ns 457 ms of 1.5 s).
#     Samples in HotSpot's math stubs may not reach their caller;
#   - <= 10% of java's CPU samples carry an unnamed JIT frame ("[anon]+0x").
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_cmd javac default-jdk-headless "the Java test"
cp "$(dirname "$0")/../fixtures/JavaHot.java" "$WORKDIR/" &&
	javac -d "$WORKDIR" "$WORKDIR/JavaHot.java" 2>"$WORKDIR/javac.err" ||
	{ diag_file javac "$WORKDIR/javac.err"; fail "javac failed"; }
cd "$WORKDIR" || fail "cannot enter $WORKDIR"
record_or_fail java -- java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -Xbatch \
	-cp "$WORKDIR" JavaHot 1.5
out=$WORKDIR/java.out
pid=$(kv "$out" "java_hot " pid)
hot_ns=$(kv "$out" "java_hot " hot_ns)
[ -n "$pid" ] && at_exit rm -f "/tmp/perf-$pid.map"
[ -n "$hot_ns" ] || { diag_file "command stdout" "$out"; fail "JavaHot printed no hot_ns"; }

export_or_fail "$WORKDIR/java.pb.gz" "$WORKDIR/cpu.folded" --format folded --weight cpu-time
export_or_fail "$WORKDIR/java.pb.gz" "$WORKDIR/samples.folded" --format folded --weight samples
hot=$(awk '/JavaHot\.hotLoop\([^;]*_\[j\]/ { s += $NF } END { printf "%d", s }' "$WORKDIR/cpu.folded")
read -r unnamed total < <(awk '/^java;/ { t += $NF; if (/\[anon\]\+0x/) u += $NF }
	END { printf "%d %d\n", u, t }' "$WORKDIR/samples.folded")
info "hotLoop: $hot ns on CPU (truth $hot_ns); unnamed JIT: $unnamed of $total samples"
in_range "$(calc "$hot / $hot_ns")" 0.80 "$(away_hi 1.10)" ||
	{ sort -t' ' -k2 -rn "$WORKDIR/cpu.folded" | head -5 | cut -c1-300; fail "JavaHot.hotLoop's named JIT frames hold $hot ns, truth $hot_ns"; }
[ "$total" -gt 0 ] && in_range "$(calc "$unnamed / $total")" 0 0.10 ||
	fail "$unnamed of $total java samples have an unnamed JIT frame"
pass "JavaHot.hotLoop $hot / $hot_ns ns, unnamed JIT $unnamed / $total samples"
