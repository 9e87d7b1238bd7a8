#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One traced process execs 50 times (the same binary, a new image each
# time, at a new address), then execs another binary: no crash, bounded memory, every image's
# stacks symbolized with its own functions.
#
# Ground truth: exec_chain 50 100 spin 1 burns 100 ms of CPU in
# exec_chain_work per image and prints its CPU time before each exec;
# spin, the last image (same pid), prints the CPU time at its end
# (getrusage counts across exec). Checks, `record -F 199`, with --unwind
# fp and with dwarf:
#   - exit 0, one process;
#   - exec_chain's samples within +-10% of the CPU time before the last
#     exec x 199, and spin_work's (comm spin) within +-20% of the CPU time
#     spin added x 199 (few samples);
#   - the share of each comm's samples that name its work function: >= 90%
#     with fp; with dwarf >= 90% for spin and >= 70% for exec_chain: the
#     user stack of a sample is unwound when it arrives, against the maps
#     read then, and an image that has already been replaced by the next
#     exec leaves its last samples unnamed (docs/design.md,
#     "Reliability tests");
#   - latprof's peak RSS (GNU time %M) under 300 MB.
TEST_BUDGET_S=${TEST_BUDGET_S:-300}
. "$(dirname "$0")/../e2e/lib.sh"
require_root_bpf
require_fixture exec_chain spin
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) not installed"

freq=199
RSS_MAX_KB=$((300 * 1024))

# run UNWIND MIN_CHAIN_SHARE: record the chain with --unwind UNWIND and check.
run()
{
	local u=$1 min=$2 rc rss_kb chain_ns spin_ns chain_n chain_all spin_n spin_all chain_exp spin_exp
	/usr/bin/time -f %M -o "$WORKDIR/$u.rss" timeout -k 5 200 "$LATPROF" record --unwind "$u" -F $freq \
		-o "$WORKDIR/$u.pb.gz" -- "$FIXTURES/exec_chain" 50 100 "$FIXTURES/spin" 1 \
		>"$WORKDIR/$u.out" 2>"$WORKDIR/$u.err"
	rc=$?
	[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/$u.err"; fail "$u: record exited $rc"; }
	rss_kb=$(tail -n 1 "$WORKDIR/$u.rss")
	grep -q "count=0 " "$WORKDIR/$u.out" || { diag_file "command stdout" "$WORKDIR/$u.out"; fail "$u: the chain did not reach its end"; }
	chain_ns=$(kv <(grep "count=0 " "$WORKDIR/$u.out") "exec_chain " cpu_ns)
	spin_ns=$(( $(kv "$WORKDIR/$u.out" "spin pid=" cpu_ns | tail -n 1) - chain_ns ))
	export_or_fail "$WORKDIR/$u.pb.gz" "$WORKDIR/$u.folded" --format folded
	chain_n=$(folded_sum "$WORKDIR/$u.folded" exec_chain exec_chain_work)
	chain_all=$(folded_sum "$WORKDIR/$u.folded" exec_chain)
	spin_n=$(folded_sum "$WORKDIR/$u.folded" spin spin_work)
	spin_all=$(folded_sum "$WORKDIR/$u.folded" spin)
	chain_exp=$(calc "$chain_ns / 1e9 * $freq")
	spin_exp=$(calc "$spin_ns / 1e9 * $freq")
	info "$u: $(grep wrote "$WORKDIR/$u.err")"
	info "$u: exec_chain_work in $chain_n of $chain_all samples (expected $chain_exp); spin_work in $spin_n of $spin_all (expected $spin_exp); peak RSS $((rss_kb / 1024)) MB"
	grep -q " 1 process," "$WORKDIR/$u.err" || fail "$u: expected 1 process in the summary"
	in_range "$(ratio "$chain_all" "$chain_exp")" 0.9 1.1 || fail "$u: exec_chain: $chain_all samples, expected $chain_exp +-10%"
	in_range "$(ratio "$spin_n" "$spin_exp")" 0.8 1.2 || fail "$u: spin_work: $spin_n samples, expected $spin_exp +-20%"
	in_range "$(ratio "$chain_n" "$chain_all")" "$min" 1 || { folded_top "$WORKDIR/$u.folded" exec_chain 5; fail "$u: exec_chain_work in $chain_n of $chain_all samples, expected >= $min"; }
	in_range "$(ratio "$spin_n" "$spin_all")" 0.9 1 || { folded_top "$WORKDIR/$u.folded" spin 5; fail "$u: spin_work in $spin_n of $spin_all samples"; }
	[ "$rss_kb" -le $RSS_MAX_KB ] || fail "$u: peak RSS $rss_kb KB over $RSS_MAX_KB KB"
	RESULT="$RESULT $u: $chain_n/$chain_all named, RSS $((rss_kb / 1024)) MB;"
}

RESULT=""
run fp 0.9
run dwarf 0.7
pass "51 images of one process:$RESULT"
