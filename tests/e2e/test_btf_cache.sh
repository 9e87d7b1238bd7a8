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
#     with task_struct, with no object or temporary file left beside it but
#     its .ids, which gives the kernel's BTF ids of btf_trace_sys_enter and
#     btf_trace_sys_exit as `bpftool btf dump` does (src/syshooks.h);
#   - with the file: kernel_btf=cached, child_hot_work's samples within
#     [0.75, 1.15 / (1 - away)] of cpu_ns x freq (as test_fork_exec.sh), and
#     the latency of main;sleeper;...;syscall:clock_nanosleep within +-10% of
#     sys_sleep's sleep_ns (both read task fields through CO-RE), with
#     syscall_hooks=tp_btf from 6.10 (raw_tp before);
#   - ids the kernel refuses (1): the run loads raw_tp, the same latency,
#     and the .ids goes; swapped ids: the run fails with a message naming
#     the file, which goes (BTF and ids), exit 1;
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
		if [ -n "$f" ] && [ -s "$f.ids" ] &&
			[ "$(ls "$LATPROF_CACHE_DIR" | grep -cvx debug)" = 2 ] &&
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

# the ids against bpftool's dump of the kernel's whole BTF
for tp in sys_enter sys_exit; do
	want=$("$BPFTOOL" btf dump file /sys/kernel/btf/vmlinux |
		awk -v n="'btf_trace_$tp'" '$2 == "TYPEDEF" && $3 == n { gsub(/[][]/, "", $1); print $1 }')
	got=$(awk -v n="btf_trace_$tp" '$1 == n { print $2 }' "$file.ids")
	[ -n "$want" ] && [ "$got" = "$want" ] ||
		{ diag_file ids "$file.ids"; fail "ids: btf_trace_$tp is '$got', bpftool says '$want'"; }
done
cp "$file.ids" "$WORKDIR/ids"

# check_sleep NAME HOOKS [ENV...]: sys_sleep's latency, loaded with HOOKS
check_sleep()
{
	local name=$1 want=$2 hooks sleep_ns got
	shift 2
	env "$@" "$LATPROF" record -q -o "$WORKDIR/$name.pb.gz" -- "$FIXTURES/sys_sleep" 30 10 \
		>"$WORKDIR/$name.out" 2>"$WORKDIR/$name.err" ||
		{ diag_file "record stderr" "$WORKDIR/$name.err"; fail "$name: record failed"; }
	[ "$(meta_btf "$name")" = cached ] || fail "$name: kernel_btf='$(meta_btf "$name")', expected cached"
	hooks=$(profile_meta "$WORKDIR/$name.pb.gz" | awk -F= '$1 == "syscall_hooks" { print $2 }')
	[ "$hooks" = "$want" ] || fail "$name: syscall_hooks='$hooks', expected $want"
	sleep_ns=$(kv "$WORKDIR/$name.out" "sys_sleep " sleep_ns)
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.folded" --format folded --weight latency
	got=$(folded_sum_leaf "$WORKDIR/$name.folded" sys_sleep "main;sleeper" syscall:clock_nanosleep)
	info "$name ($hooks): latency main;sleeper;...;syscall:clock_nanosleep = $got ns (truth $sleep_ns)"
	in_range "$(ratio "$got" "$sleep_ns")" 0.90 1.10 ||
		{ folded_top "$WORKDIR/$name.folded" sys_sleep; fail "$name: latency $got ns, expected $sleep_ns +-10%"; }
}
typed=raw_tp
kernel_at_least 6 10 && typed=tp_btf
check_sleep sleep $typed
check_sleep sleep-raw raw_tp LATPROF_DEBUG_RAW_TP=1

# ids the kernel refuses: raw_tp, and they go (before 6.10 they are not
# tried, and stay)
printf 'btf_trace_sys_enter 1\nbtf_trace_sys_exit 1\n' >"$file.ids"
check_sleep refused raw_tp
if [ $typed = tp_btf ]; then
	[ ! -e "$file.ids" ] || fail "ids the kernel refused were kept"
else
	[ -e "$file.ids" ] || fail "ids removed on a kernel that does not try them"
fi
# swapped ids: sys_enter's program on sys_exit would count every call
# backwards; the run stops and the cache goes
if [ $typed = tp_btf ]; then
	awk '{ print $1, $1 ~ /enter/ ? "'"$(awk '/exit/ { print $2 }' "$WORKDIR/ids")"'" : "'"$(awk '/enter/ { print $2 }' "$WORKDIR/ids")"'" }' \
		"$WORKDIR/ids" >"$file.ids"
	"$LATPROF" record -q -o "$WORKDIR/swapped.pb.gz" -- "$FIXTURES/sys_sleep" 1 10 \
		>/dev/null 2>"$WORKDIR/swapped.err"
	rc=$?
	[ $rc = 1 ] && grep -q "on another tracepoint: .*$(basename "$file") removed" "$WORKDIR/swapped.err" ||
		{ diag_file "record stderr" "$WORKDIR/swapped.err"; fail "swapped ids: exit $rc, no message naming the file"; }
	[ ! -e "$file" ] && [ ! -e "$file.ids" ] || fail "swapped ids: the cache file was kept"
	[ ! -e "$WORKDIR/swapped.pb.gz" ] || fail "swapped ids: a profile was written"
	record_or_fail remade --mode cpu -F $freq -- "$FIXTURES/child_hot" 100
	[ "$(cache_ready)" = "$file" ] || fail "the cache was not made again after swapped ids"
fi

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
