#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Wall-clock weight: on-CPU and off-CPU time of a stack together.
#
# Ground truth (from the fixture, not latprof): sys_wall's one thread spins
# in spin_phase() for 1 s of wall time, then sleeps 1 s in sleep_phase()
# (nanosleep), and times both itself (spin_ns, sleep_ns). Its wall time is
# about spin_ns + sleep_ns, spin_phase's share of it spin_ns / (spin_ns +
# sleep_ns), about 0.5 (CPU or not: a spin preempted on a busy machine is
# still the spin's wall time).
# Checks, `record --mode cpu,offcpu -F 499 -- sys_wall 1000 1000`, export
# --weight wall --format folded:
#   - spin_phase's share of sys_wall's wall total is the truth +-0.10, and
#     so is sleep_phase's;
#   - sys_wall's wall total is spin_ns + sleep_ns +-15%.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_wall

record_or_fail wall --mode cpu,offcpu -F 499 -- "$FIXTURES/sys_wall" 1000 1000
prof=$WORKDIR/wall.pb.gz
out=$WORKDIR/wall.out
spin_ns=$(kv "$out" "sys_wall " spin_ns)
sleep_ns=$(kv "$out" "sys_wall " sleep_ns)
if [ -z "$spin_ns" ] || [ -z "$sleep_ns" ]; then
	diag_file "command stdout" "$out"
	fail "sys_wall printed no spin_ns/sleep_ns"
fi
info "fixture: $(head -n 1 "$out")"

folded=$WORKDIR/wall.wall.folded
export_or_fail "$prof" "$folded" --format folded --weight wall
total=$(folded_sum "$folded" sys_wall)
spin=$(folded_sum "$folded" sys_wall spin_phase)
slp=$(folded_sum "$folded" sys_wall sleep_phase)
truth=$(ratio "$spin_ns" "$((spin_ns + sleep_ns))")
s_share=$(ratio "$spin" "$total")
z_share=$(ratio "$slp" "$total")
info "wall: total $total ns (truth $((spin_ns + sleep_ns))), spin_phase $spin ($s_share), sleep_phase $slp ($z_share), truth spin share $truth"
if [ "$total" = 0 ]; then
	folded_top "$folded" "" 10
	fail "no wall time for sys_wall (comms: $(folded_comms "$folded" | tr '\n' ' '))"
fi
if ! in_range "$(calc "$s_share - $truth")" -0.10 0.10 ||
   ! in_range "$(calc "$z_share - (1 - $truth)")" -0.10 0.10; then
	folded_top "$folded" sys_wall 15
	fail "wall shares: spin_phase $s_share, sleep_phase $z_share; expected $truth and $(calc "1 - $truth") +-0.10"
fi
if ! in_range "$(ratio "$total" "$((spin_ns + sleep_ns))")" 0.85 1.15; then
	folded_top "$folded" sys_wall 15
	fail "sys_wall's wall total is $total ns, expected spin_ns + sleep_ns = $((spin_ns + sleep_ns)) +-15%"
fi
pass "spin_phase share $s_share of $total ns (truth $truth)"
