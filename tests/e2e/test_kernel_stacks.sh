#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Kernel stacks: samples taken in the kernel carry kernel frames (suffix
# "_[k]") below the user stack of the same sample, in the right proportion.
#
# Ground truth: sys_user alternates a user loop (user_work) with read() of
# /dev/zero (the kernel zero-fills 1 MiB per call) and prints its own user/sys
# CPU split (getrusage). Checks at -F 499:
#   - the process's sample count is within +-10% of (utime+stime) x freq;
#   - the share of samples whose leaf frame is a kernel frame is within 0.10
#     of stime / (utime + stime);
#   - >= 80% of the kernel-leaf samples have a kernel frame naming read
#     (ksys_read, vfs_read, read_zero, ...) and a user frame above it
#     (root first: a frame without "_[k]" before the first "_[k]" one);
#   - user_work appears in user-leaf samples with >= 80% of their count.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_user

freq=499
record_and_fold sys -F $freq -- "$FIXTURES/sys_user" 1.5
folded=$WORKDIR/sys.folded
out=$WORKDIR/sys.out
ut=$(kv "$out" "sys_user " utime_ns)
st=$(kv "$out" "sys_user " stime_ns)
[ -n "$ut" ] && [ -n "$st" ] || { diag_file "command stdout" "$out"; fail "sys_user printed no utime_ns/stime_ns"; }

read -r total kleaf kread uleaf uwork < <(awk -v comm=sys_user "$FOLDED_AWK"'
	{
		cnt = folded_parse()
		if (!folded_is(comm))
			next
		total += cnt
		if (f[n] ~ /_\[k\]$/) {
			kleaf += cnt
			user_above = (n > 2 && f[2] !~ /_\[k\]$/)
			hit = 0
			for (j = 2; j <= n; j++)
				if (f[j] ~ /read.*_\[k\]$/)
					hit = 1
			if (hit && user_above)
				kread += cnt
		} else {
			uleaf += cnt
			for (j = 2; j <= n; j++)
				if (f[j] == "user_work") { uwork += cnt; break }
		}
	}
	END { print total + 0, kleaf + 0, kread + 0, uleaf + 0, uwork + 0 }' "$folded")

expected=$(calc "($ut + $st) / 1e9 * $freq")
sys_share=$(calc "$st / ($ut + $st)")
info "utime=${ut}ns stime=${st}ns (sys share $sys_share); samples=$total expected=$expected"
info "kernel-leaf=$kleaf (with a read frame under a user stack: $kread); user-leaf=$uleaf (user_work: $uwork)"
if ! in_range "$(calc "$total / $expected")" 0.90 "$(away_hi 1.10)"; then
	diag_file "folded" "$folded"
	fail "$total samples, expected $expected ((utime+stime) x $freq Hz) +-10%"
fi
k_share=$(calc "$kleaf / $total")
if ! in_range "$(calc "$k_share - $sys_share")" -0.10 0.10; then
	diag_file "folded" "$folded"
	fail "kernel-leaf share $k_share, expected the sys share $sys_share +-0.10"
fi
if ! in_range "$(calc "$kread / ($kleaf + 0.0001)")" 0.80 1; then
	grep '_\[k\] [0-9]*$' "$folded" | sort -t' ' -k2 -nr | head -n 10 | sed 's/^/  | /'
	fail "only $kread of $kleaf kernel-leaf samples show a read kernel frame under a user stack"
fi
if ! in_range "$(calc "$uwork / ($uleaf + 0.0001)")" 0.80 1; then
	diag_file "folded" "$folded"
	fail "only $uwork of $uleaf user-leaf samples contain user_work"
fi
pass
