#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding and symbolization in a library dlopen()ed after latprof
# attached: its unwind tables and symbols are found although the mapping did
# not exist when recording started.
#
# Ground truth (from the fixture, not latprof): the test builds a small
# library (gcc -shared -fPIC -O2 -fomit-frame-pointer, no debuginfo), whose
# exported dlib_spin burns SECONDS of CPU in its static frameless dlib_inner.
# `nofp_pie dlopen LIB 1` sleeps 0.3 s, dlopen()s it and runs main ->
# dl_caller -> dlib_spin -> dlib_inner, and prints the CPU time of that call
# (CLOCK_PROCESS_CPUTIME_ID around it) and its own (getrusage).
# Checks, --unwind dwarf -F 499:
#   - the process's sample count is within +-10% of cpu_time_s x freq;
#   - the samples containing dlib_spin (symbolized by name, not as
#     LIB+0xOFFSET or [unknown]) are within [0.80, 1.10] x the call's CPU
#     time x freq;
#   - >= 90% of the dlib_spin samples show main;dl_caller;dlib_spin
#     (consecutive, inline frames aside).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_pie
command -v "${CC:-cc}" >/dev/null 2>&1 || skip "no C compiler (${CC:-cc}) to build the test library"

lib=$WORKDIR/libdlspin.so
cat >"$WORKDIR/dlspin.c" <<'EOF'
#include <stdint.h>
#include <time.h>

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline, noipa)) static uint64_t dlib_inner(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	return x;
}

uint64_t dlib_spin(double seconds)
{
	uint64_t t0 = thread_cpu_ns(), x = 1;

	while (thread_cpu_ns() - t0 < (uint64_t)(seconds * 1e9))
		x = dlib_inner(200000, x);
	return x;
}
EOF
if ! "${CC:-cc}" -shared -fPIC -O2 -fomit-frame-pointer -o "$lib" "$WORKDIR/dlspin.c" \
	>"$WORKDIR/cc.err" 2>&1; then
	diag_file "cc output" "$WORKDIR/cc.err"
	fail "cannot build the test library $lib"
fi

freq=499
record_and_fold dl --unwind dwarf -F $freq -- "$FIXTURES/nofp_pie" dlopen "$lib" 1
folded=$WORKDIR/dl.folded
out=$WORKDIR/dl.out
cpu_ns=$(kv "$out" "nofp_pie mode=dlopen " cpu_ns)
lib_ns=$(kv "$out" "nofp_pie mode=dlopen " work_ns)
if [ -z "$cpu_ns" ] || [ -z "$lib_ns" ]; then
	diag_file "command stdout" "$out"
	fail "nofp_pie dlopen printed no cpu_ns/work_ns"
fi
total=$(folded_sum "$folded" nofp_pie)
spin=$(folded_sum "$folded" nofp_pie dlib_spin)
full=$(folded_sum_chain "$folded" nofp_pie "main;dl_caller;dlib_spin")
inner=$(folded_sum_chain "$folded" nofp_pie "dlib_spin;dlib_inner")
raw=$(folded_sum_chain "$folded" nofp_pie "~libdlspin|^[[]unknown[]]$")
expected=$(calc "$cpu_ns / 1e9 * $freq")
expected_lib=$(calc "$lib_ns / 1e9 * $freq")
info "cpu=${cpu_ns}ns library call=${lib_ns}ns expected=$expected (library $expected_lib) samples=$total"
info "dlib_spin=$spin ($(ratio "$spin" "$expected_lib") of expected) with main;dl_caller;dlib_spin=$full, dlib_spin;dlib_inner=$inner; unsymbolized library/[unknown] frames in $raw"
if [ "$total" = 0 ]; then
	diag_file "folded" "$folded"
	fail "no samples with comm nofp_pie (comms: $(folded_comms "$folded" | tr '\n' ' '))"
fi
if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
	diag_file "record stderr" "$WORKDIR/dl.err"
	fail "$total samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
fi
if ! in_range "$(ratio "$spin" "$expected_lib")" 0.80 1.10; then
	diag_file "folded" "$folded" 30
	fail "dlib_spin (the dlopen()ed library) in $spin samples, expected [0.80, 1.10] x $expected_lib: not symbolized by name?"
fi
if ! in_range "$(ratio "$full" "$spin")" 0.90 1; then
	folded_with "$folded" nofp_pie dlib_spin |
		folded_missing /dev/stdin nofp_pie "main;dl_caller;dlib_spin" 15
	fail "only $full of $spin dlib_spin samples show main;dl_caller;dlib_spin (expected >= 0.90)"
fi
pass "$(ratio "$full" "$spin") of the library's samples reach main"
