#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Sleeps are slow syscalls: nanosleep shows as syscall:clock_nanosleep below
# the function that sleeps.
#
# Ground truth (from the fixture, not latprof): sys_sleep's sleeper() (main
# -> sleeper -> nanosleep, which glibc 2.36 implements with
# clock_nanosleep) sleeps 30 x 10 ms = 0.30 s and times the sleeps itself
# (sleep_ns, a little more than 0.30 s: timer slack).
# Checks, `record -- sys_sleep` four ways (default, whose metadata must say
# syscall_hooks=tp_btf or raw_tp (tp_btf once the BTF cache has its ids,
# test_btf_cache.sh); LATPROF_DEBUG_RAW_TP=1, raw_tp; --unwind fp, any stack;
# LATPROF_DEBUG_OLD_KERNEL=refuse (raw_tp), where the kernel refuses the first load
# and latprof loads again without the 5.18 programs and the 6.1 stack map:
# -v must say so, and
# without -v the refused load prints nothing; on 6.1 and later the default
# loads at the first try), export --weight latency
# --format folded:
#   - sys_sleep's stacks containing main;sleeper and ending in
#     syscall:clock_nanosleep add up to the fixture's sleep_ns +-10%, and to
#     0.30 s +-10% (the upper bound stretches to sleep_ns + 10% when the
#     machine is so busy that the sleeps themselves overran: under two CPU
#     hogs on 2 vCPUs they take up to 0.33 s);
#   - export --weight syscalls counts exactly 30 of them (every sleep is
#     10 ms, far above the default 1 ms threshold).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_sleep

# the paths a slow syscall's stack can take: the DWARF copy (default), and
# the in-kernel frame-pointer map (--unwind fp: glibc has no frame pointers,
# so there only the leaf and the total are checked, not the caller chain);
# and the older kernels' programs (refused)
for variant in default raw fp refused; do
	case $variant in
	default)
		record_or_fail sleep-$variant -v -- "$FIXTURES/sys_sleep" 30 10
		# 6.1 has every feature the first try needs: it must load
		if kernel_at_least 6 1 && grep -q 'BPF load with' "$WORKDIR/sleep-$variant.err"; then
			diag_file "record stderr" "$WORKDIR/sleep-$variant.err"
			fail "default: the first load failed on $(uname -r), a kernel that has what it needs"
		fi ;;
	refused)
		LATPROF_DEBUG_OLD_KERNEL=refuse record_or_fail sleep-quiet -- "$FIXTURES/sys_sleep" 1 10
		! grep -q 'libbpf' "$WORKDIR/sleep-quiet.err" ||
			{ diag_file "record stderr" "$WORKDIR/sleep-quiet.err"; fail "refused: the refused first load printed libbpf's messages without -v"; }
		LATPROF_DEBUG_OLD_KERNEL=refuse record_or_fail sleep-$variant -v -- "$FIXTURES/sys_sleep" 30 10
		grep -q "BPF load with the newer kernels' features failed" "$WORKDIR/sleep-$variant.err" &&
			grep -q 'kernel without bpf_copy_from_user_task' "$WORKDIR/sleep-$variant.err" ||
			{ diag_file "record stderr" "$WORKDIR/sleep-$variant.err"; fail "refused: -v does not say that the first load failed and the fallbacks loaded"; } ;;
	raw) LATPROF_DEBUG_RAW_TP=1 record_or_fail sleep-$variant -- "$FIXTURES/sys_sleep" 30 10 ;;
	fp) record_or_fail sleep-$variant --unwind fp -- "$FIXTURES/sys_sleep" 30 10 ;;
	esac
	prof=$WORKDIR/sleep-$variant.pb.gz
	out=$WORKDIR/sleep-$variant.out
	sleep_ns=$(kv "$out" "sys_sleep " sleep_ns)
	[ -n "$sleep_ns" ] || { diag_file "command stdout" "$out"; fail "sys_sleep printed no sleep_ns"; }
	hooks=$(profile_meta "$prof" | awk -F= '$1 == "syscall_hooks" { print $2 }')
	case $variant:$hooks in
	default:tp_btf | default:raw_tp | fp:tp_btf | fp:raw_tp | raw:raw_tp | refused:raw_tp) ;;
	*) fail "$variant: metadata syscall_hooks='$hooks'" ;;
	esac
	info "$variant: syscall_hooks=$hooks"
	chain="main;sleeper"
	[ $variant = fp ] && chain=""

	folded=$WORKDIR/sleep-$variant.latency.folded
	export_or_fail "$prof" "$folded" --format folded --weight latency
	got=$(folded_sum_leaf "$folded" sys_sleep "$chain" syscall:clock_nanosleep)
	info "$variant: latency ${chain:-any};...;syscall:clock_nanosleep = $got ns (truth $sleep_ns)"
	hi=$(awk -v t="$sleep_ns" 'BEGIN { printf "%.0f", (t * 1.1 > 330000000 ? t * 1.1 : 330000000) }')
	if ! in_range "$got" 270000000 "$hi" || ! in_range "$(ratio "$got" "$sleep_ns")" 0.90 1.10; then
		folded_top "$folded" sys_sleep 15
		fail "$variant: latency under ${chain:-any};...;syscall:clock_nanosleep is $got ns, expected 0.30 s +-10% and the fixture's sleep_ns $sleep_ns +-10%"
	fi

	counts=$WORKDIR/sleep-$variant.syscalls.folded
	export_or_fail "$prof" "$counts" --format folded --weight syscalls
	n=$(folded_sum_leaf "$counts" sys_sleep "$chain" syscall:clock_nanosleep)
	info "$variant: syscalls ${chain:-any};...;syscall:clock_nanosleep = $n calls (truth 30)"
	if [ "$n" != 30 ]; then
		folded_top "$counts" sys_sleep 15
		fail "$variant: --weight syscalls counts $n slow clock_nanosleep calls below ${chain:-any}, expected 30"
	fi
done
pass "$got ns in 30 sleeps (truth $sleep_ns), with DWARF, fp and the older kernels' programs"
