#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The cache of minimized kernel BTF (src/btfcache.h): CO-RE relocates against
# a 2 KB file that bpftool made for this kernel and BPF object instead of the
# kernel's whole BTF, and the results are the same.
#
# Ground truth: child_hot burns CPU and prints its CPU time (getrusage);
# sys_sleep times its own 30 x 10 ms sleeps (clock_nanosleep).
# Checks, with LATPROF_CACHE_DIR a new directory:
#   - first run: metadata kernel_btf=vmlinux, -v says the file is being
#     made, and it appears (bpftool runs in the background) as a BTF file
#     with task_struct, with no object or temporary file left beside it;
#   - with the file: kernel_btf=cached, child_hot_work's samples within
#     [0.75, 1.15 / (1 - away)] of cpu_ns x freq (as test_fork_exec.sh), and
#     the latency of main;sleeper;...;syscall:clock_nanosleep within +-10% of
#     sys_sleep's sleep_ns (both read task fields through CO-RE);
#   - a damaged file: the run succeeds without it (kernel_btf=vmlinux), prints
#     no libbpf message without -v, and the file is made again;
#   - LATPROF_CACHE_DIR set and empty: no cache, nothing written.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture child_hot sys_sleep
PATH=$PATH:/usr/sbin:/sbin command -v bpftool >/dev/null 2>&1 ||
	skip "no bpftool: latprof makes no cache without it"
BPFTOOL=$(PATH=$PATH:/usr/sbin:/sbin command -v bpftool)
export LATPROF_CACHE_DIR=$WORKDIR/cache
freq=199

meta_btf()
{
	profile_meta "$WORKDIR/$1.pb.gz" | awk -F= '$1 == "kernel_btf" { print $2 }'
}

# cache_ready: within 10 s, one BTF file that bpftool can read and nothing
# else in the cache directory (the object and the temporary output removed)
# but debug/, the inflated debuginfo (symbolize/debugcache.h)
cache_ready()
{
	local i f
	for ((i = 0; i < 100; i++)); do
		f=$(ls "$LATPROF_CACHE_DIR"/btf-*.btf 2>/dev/null)
		if [ -n "$f" ] && [ "$(ls "$LATPROF_CACHE_DIR" | grep -cvx debug)" = 1 ] &&
			"$BPFTOOL" btf dump file "$f" 2>/dev/null | grep -q "STRUCT 'task_struct'"; then
			echo "$f"
			return 0
		fi
		sleep 0.1
	done
	ls -la "$LATPROF_CACHE_DIR" >&2
	return 1
}

# check_cpu NAME: child_hot_work's samples against child_hot's CPU time
check_cpu()
{
	local cpu n exp r hi
	lp_folded "$WORKDIR/$1.pb.gz" "$WORKDIR/$1.folded" || fail "$1: export failed"
	cpu=$(kv "$WORKDIR/$1.out" "child_hot " cpu_ns)
	n=$(folded_sum "$WORKDIR/$1.folded" child_hot child_hot_work)
	exp=$(calc "$cpu / 1e9 * $freq")
	r=$(calc "$n / $exp")
	hi=$(away_hi 1.15)
	info "$1: child_hot_work samples=$n expected=$exp ratio=$r (upper bound $hi)"
	in_range "$r" 0.75 "$hi" ||
		{ folded_top "$WORKDIR/$1.folded" child_hot; fail "$1: $n samples of child_hot_work, expected [0.75, $hi] x $exp"; }
}

record_or_fail first -v --mode cpu -F $freq -- "$FIXTURES/child_hot" 300
[ "$(meta_btf first)" = vmlinux ] || fail "first run: kernel_btf='$(meta_btf first)', expected vmlinux"
grep -q "making .*btf-.*\.btf in the background" "$WORKDIR/first.err" ||
	{ diag_file "record stderr" "$WORKDIR/first.err"; fail "first run: -v does not say the cache file is being made"; }
file=$(cache_ready) || fail "no cache file within 10 s of the first run"
size=$(stat -c %s "$file")
info "cache: $file ($size bytes)"
check_cpu first

record_or_fail cached --mode cpu -F $freq -- "$FIXTURES/child_hot" 300
[ "$(meta_btf cached)" = cached ] || fail "with the file: kernel_btf='$(meta_btf cached)', expected cached"
check_cpu cached

record_or_fail sleep -- "$FIXTURES/sys_sleep" 30 10
[ "$(meta_btf sleep)" = cached ] || fail "sys_sleep: kernel_btf='$(meta_btf sleep)', expected cached"
sleep_ns=$(kv "$WORKDIR/sleep.out" "sys_sleep " sleep_ns)
export_or_fail "$WORKDIR/sleep.pb.gz" "$WORKDIR/sleep.folded" --format folded --weight latency
got=$(folded_sum_leaf "$WORKDIR/sleep.folded" sys_sleep "main;sleeper" syscall:clock_nanosleep)
info "sys_sleep: latency main;sleeper;...;syscall:clock_nanosleep = $got ns (truth $sleep_ns)"
in_range "$(ratio "$got" "$sleep_ns")" 0.90 1.10 ||
	{ folded_top "$WORKDIR/sleep.folded" sys_sleep; fail "sys_sleep: latency $got ns, expected $sleep_ns +-10%"; }

echo garbage >"$file"
record_or_fail damaged --mode cpu -F $freq -- "$FIXTURES/child_hot" 100
[ "$(meta_btf damaged)" = vmlinux ] || fail "damaged file: kernel_btf='$(meta_btf damaged)', expected vmlinux"
! grep -q libbpf "$WORKDIR/damaged.err" ||
	{ diag_file "record stderr" "$WORKDIR/damaged.err"; fail "damaged file: libbpf's messages printed without -v"; }
[ "$(cache_ready)" = "$file" ] || fail "the damaged cache file was not made again"

rm -rf "$LATPROF_CACHE_DIR"
LATPROF_CACHE_DIR= record_or_fail off --mode cpu -F $freq -- "$FIXTURES/child_hot" 100
[ "$(meta_btf off)" = vmlinux ] || fail "cache off: kernel_btf='$(meta_btf off)', expected vmlinux"
sleep 1
[ ! -e "$LATPROF_CACHE_DIR" ] || fail "cache off: $LATPROF_CACHE_DIR was made"
pass "CO-RE against a $size-byte cached BTF, same samples and latency; damaged file replaced; off when empty"
