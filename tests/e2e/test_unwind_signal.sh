#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DWARF unwinding out of a signal handler: through the signal frame
# (glibc's __restore_rt) and the interrupted frameless code, back to main.
#
# Ground truth (from the fixture, not latprof): `nofp_pie signal 1` (and the
# same source built -no-pie, nofp_nopie), without frame pointers, spins in
# main -> sig_spin; setitimer(ITIMER_PROF) sends SIGPROF every 4 ms of CPU
# and the handler on_sigprof burns 2 ms in sig_burn. Every handler run is
# below main: main -> sig_spin (or main's own clock reads) -> [signal frame,
# __restore_rt] -> on_sigprof -> sig_burn. The fixture prints its CPU time
# (getrusage), the handler's CPU time and the number of signals. (perf
# record --call-graph dwarf shows main in 100% of the sig_burn samples.)
# Checks, --unwind dwarf -F 499, for each executable:
#   - the sample count is within +-10% of cpu_time_s x freq;
#   - >= 95% of the samples contain main;
#   - sig_burn has at least 25 samples, and >= 95% of them show main, then
#     (anything: the interrupted code and the signal frame) on_sigprof;sig_burn.
# Not asserted, printed: the handler's share of samples against its share of
# CPU time (the 4 ms timer ticks and the 2.004 ms sampling period beat, so the
# share can be off for a 1 s run) and how many have sig_spin as the
# interrupted frame. Asserted: >= 95% of the handler stacks name
# __restore_rt (perf names that frame [unknown]: its pc-1 is the nop before
# the symbol; latprof looks frames a signal interrupted up at their exact pc).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture nofp_pie nofp_nopie

freq=499
summary=""
for exe in nofp_pie nofp_nopie; do
	name=${exe}_signal
	record_and_fold "$name" --unwind dwarf -F $freq -- "$FIXTURES/$exe" signal 1
	folded=$WORKDIR/$name.folded
	out=$WORKDIR/$name.out
	cpu_ns=$(kv "$out" "$exe mode=signal " cpu_ns)
	handler_ns=$(kv "$out" "$exe mode=signal " work_ns)
	signals=$(kv "$out" "$exe mode=signal " calls)
	if [ -z "$cpu_ns" ] || [ -z "$handler_ns" ]; then
		diag_file "command stdout" "$out"
		fail "$exe signal: the fixture printed no cpu_ns/work_ns"
	fi
	[ "${signals:-0}" -gt 50 ] || fail "$exe signal: only ${signals:-0} SIGPROF handled (expected ~250)"
	total=$(folded_sum "$folded" "$exe")
	with_main=$(folded_sum "$folded" "$exe" main)
	burn=$(folded_sum "$folded" "$exe" sig_burn)
	full=$(folded_sum_chain "$folded" "$exe" "main;*;on_sigprof;sig_burn")
	named=$(folded_sum_chain "$folded" "$exe" "main;*;__restore_rt;on_sigprof;sig_burn")
	via_spin=$(folded_sum_chain "$folded" "$exe" "main;sig_spin;*;on_sigprof;sig_burn")
	expected=$(calc "$cpu_ns / 1e9 * $freq")
	info "$exe: cpu=${cpu_ns}ns handler=${handler_ns}ns signals=$signals expected=$expected samples=$total with main=$with_main"
	info "$exe: sig_burn=$burn (share $(ratio "$burn" "$total"), handler cpu share $(ratio "$handler_ns" "$cpu_ns")); main...on_sigprof;sig_burn=$full, naming __restore_rt=$named, through sig_spin=$via_spin"
	if [ "$total" = 0 ]; then
		diag_file "folded" "$folded"
		fail "$exe: no samples with comm $exe (comms: $(folded_comms "$folded" | tr '\n' ' '))"
	fi
	if ! in_range "$(ratio "$total" "$expected")" 0.90 1.10; then
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "$exe: $total samples, expected $expected (cpu ${cpu_ns}ns x $freq Hz) +-10%"
	fi
	if ! in_range "$(ratio "$with_main" "$total")" 0.95 1; then
		folded_missing "$folded" "$exe" main 15
		fail "$exe: only $with_main of $total samples contain main (expected >= 0.95)"
	fi
	if [ "$burn" -lt 25 ]; then
		diag_file "folded" "$folded" 30
		fail "$exe: only $burn samples in the signal handler's sig_burn (expected >= 25)"
	fi
	if ! in_range "$(ratio "$full" "$burn")" 0.95 1; then
		folded_with "$folded" "$exe" sig_burn |
			folded_missing /dev/stdin "$exe" "main;*;on_sigprof;sig_burn" 15
		fail "$exe: only $full of $burn sig_burn samples continue through the signal frame to main (expected >= 0.95)"
	fi
	# the signal frame is named: its pc is exact, not a return address
	if ! in_range "$(ratio "$named" "$full")" 0.95 1; then
		folded_with "$folded" "$exe" sig_burn | head -n 5 | sed 's/^/  | /'
		fail "$exe: only $named of $full handler stacks name __restore_rt (expected >= 0.95)"
	fi
	summary="$summary $exe=$(ratio "$full" "$burn")"
done
pass "handler samples reaching main:$summary"
