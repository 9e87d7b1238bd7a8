#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A fork storm: `record -- sh` whose loop runs /bin/true 10,000 times. No
# crash, every process seen, memory bounded, losses counted.
#
# Ground truth: the loop count (10,000 children + the shell = 10,001
# processes), and the CPU time of the shell and all its children, printed
# by the shell's own `times` builtin at the end (kernel accounting, not
# latprof).
# Checks, `record -F 99`:
#   - exit 0, the command's exit status 0 reported;
#   - the summary counts exactly 10,001 processes, with lost.events_lost =
#     0 and lost.procs_dropped_map_full = 0 (no fork, exec or exit missed);
#   - the samples taken (summary) are within +-15% of that CPU time x 99;
#   - the profile exports, and >= 1 sample names a frame of true's own
#     image or of the kernel's exec path (the short-lived children are
#     attributed, not all [unknown]);
#   - latprof's peak RSS (GNU time %M; the children are ~2 MB each) stays
#     under 400 MB;
#   - whatever the maps could not hold is counted (syscall statistics of
#     10,001 processes overflow the 16,384-entry map): report's "Lost and
#     dropped" says the result is partial when a counter is non-zero.
TEST_BUDGET_S=${TEST_BUDGET_S:-300}
. "$(dirname "$0")/../e2e/lib.sh"
require_root_bpf
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) not installed"

n=10000
freq=99
RSS_MAX_KB=$((400 * 1024))
t0=$(date +%s.%N)
/usr/bin/time -f %M -o "$WORKDIR/rss" timeout -k 5 280 "$LATPROF" record -F $freq -o "$WORKDIR/storm.pb.gz" \
	-- sh -c 'i=0; while [ $i -lt '$n' ]; do /bin/true; i=$((i + 1)); done; times' \
	>"$WORKDIR/storm.out" 2>"$WORKDIR/storm.err"
rc=$?
wall=$(calc "$(date +%s.%N) - $t0")
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/storm.err"; fail "record exited $rc"; }
grep -q "command exited with status 0" "$WORKDIR/storm.err" || fail "the command's exit status is not reported"
rss_kb=$(tail -n 1 "$WORKDIR/rss")
# `times`: "0m0.010s 0m0.020s" for the shell, then for its children
cpu_s=$(awk '{ for (i = 1; i <= NF; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } } END { printf "%.3f", s }' "$WORKDIR/storm.out")
procs=$(sed -n 's/.* \([0-9]*\) processes,.*/\1/p' "$WORKDIR/storm.err")
taken=$(sed -n 's/.*: \([0-9]*\) samples,.*/\1/p' "$WORKDIR/storm.err")
exp=$(calc "$cpu_s * $freq")
info "$(grep wrote "$WORKDIR/storm.err")"
info "wall $wall s; command cpu $cpu_s s x $freq Hz = $exp, samples taken $taken; peak RSS $((rss_kb / 1024)) MB"
info "lost: $(profile_meta "$WORKDIR/storm.pb.gz" | grep '^lost\.' | grep -v '=0$' | tr '\n' ' ')"
[ "$procs" = $((n + 1)) ] || fail "$procs processes counted, expected $((n + 1))"
for k in events_lost procs_dropped_map_full; do
	v=$(profile_meta "$WORKDIR/storm.pb.gz" | awk -F= -v k="lost.$k" '$1 == k { print $2 }')
	[ "${v:-0}" = 0 ] || fail "lost.$k = $v"
done
in_range "$(ratio "$taken" "$exp")" 0.85 1.15 || fail "$taken samples taken, expected $exp +-15%"
[ "$rss_kb" -le $RSS_MAX_KB ] || fail "peak RSS $rss_kb KB over $RSS_MAX_KB KB"
export_or_fail "$WORKDIR/storm.pb.gz" "$WORKDIR/storm.folded" --format folded
true_n=$(awk "$FOLDED_AWK"'{ c = folded_parse(); if (folded_is("true") && f[n] !~ /^\[unknown\]/) s += c } END { print s + 0 }' "$WORKDIR/storm.folded")
info "samples of comm true with a named leaf: $true_n of $(folded_sum "$WORKDIR/storm.folded" true)"
[ "$true_n" -gt 0 ] || { folded_top "$WORKDIR/storm.folded" true 5; fail "no sample of the children has a named leaf"; }
lp_report "$WORKDIR/storm.pb.gz" "$WORKDIR/storm.report" || fail "report failed"
if profile_meta "$WORKDIR/storm.pb.gz" | grep '^lost\.' | grep -qv '=0$'; then
	grep -q "the result is partial" "$WORKDIR/storm.report" || fail "losses, but the report does not say the result is partial"
fi
pass "$procs processes, peak RSS $((rss_kb / 1024)) MB, $taken samples of $exp expected, $wall s"
