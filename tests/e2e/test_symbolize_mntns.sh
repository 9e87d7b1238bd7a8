#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A process in its own mount namespace, running a binary that exists only
# there, still symbolizes.
#
# Ground truth: hot_ab spends 75% of its CPU in hot_a (by construction).
# The test runs it as `unshare -m` + a private tmpfs mounted on a directory
# that is empty on the host, into which the binary is copied under a new
# name: the host path in /proc/PID/maps names no file on the host (checked),
# so latprof must read it through the process (/proc/PID/map_files or
# /proc/PID/root). Checks: hot_a and main appear by name in >= 60% of the
# process's samples, and hot_a's share is in [0.68, 0.82].
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

mnt=$WORKDIR/private
mkdir -p "$mnt"
cat >"$WORKDIR/run.sh" <<EOS
set -e
mount -t tmpfs latprof-test "$mnt"
cp "$FIXTURES/hot_ab" "$mnt/hot_private"
exec "$mnt/hot_private" 1.5
EOS
record_or_fail ns -F 499 -- unshare -m --propagation private sh "$WORKDIR/run.sh"
[ ! -e "$mnt/hot_private" ] || fail "$mnt/hot_private exists on the host: the test proves nothing"
folded=$WORKDIR/ns.folded
export_or_fail "$WORKDIR/ns.pb.gz" "$folded" --format folded
total=$(folded_sum "$folded" hot_private)
a=$(folded_sum "$folded" hot_private hot_a)
named=$(folded_sum_chain "$folded" hot_private "main;hot_a")
info "hot_private: $total samples, $a in hot_a, $named with main;hot_a"
[ "$total" -gt 0 ] || { folded_top "$folded" "" 5; fail "no samples of hot_private"; }
in_range "$(ratio "$a" "$total")" 0.68 0.82 ||
	{ folded_top "$folded" hot_private 8; fail "hot_a has $a of $total samples, expected 68-82%"; }
in_range "$(ratio "$named" "$a")" 0.6 1 ||
	{ folded_top "$folded" hot_private 8; fail "only $named of $a hot_a samples have main;hot_a"; }
pass "$a of $total samples in hot_a, symbolized through the process's own mount namespace"
