#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The flame graph viewer in headless chromium (tests/browser/flamegraph.mjs).
#
# Ground truth: hot_ab spends 75% of its CPU in hot_a; the expected search
# share comes from the folded export of the same profile (stacks containing
# hot_a / all stacks), not from the SVG.
# Checks, on `latprof flamegraph` of `record -F 499 -- hot_ab 1`: hovering
# hot_a shows it in #details; clicking it makes it span >= 99% of the frames
# area; Reset Zoom restores it; searching "^hot_a$" (Search button, Ctrl-F,
# window.flameSearch, ?s= in the URL) highlights only hot_a frames and shows
# "Matched: P%" with P the folded share +-0.15. Screenshots go to
# build/artifacts (ARTIFACTS).
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -d "$top/tests/browser/node_modules/playwright-core" ]; then
	[ "${CI:-}" = true ] && fail "tests/browser/node_modules missing (make browser-deps)"
	skip "tests/browser/node_modules missing (make browser-deps)"
fi
command -v node >/dev/null || fail "node not installed (make setup)"
require_root_bpf
require_fixture hot_ab

record_and_fold ab -F 499 -- "$FIXTURES/hot_ab" 1
lp_flame_or_fail "$WORKDIR/cpu.svg" "$WORKDIR/ab.pb.gz"
total=$(folded_sum "$WORKDIR/ab.folded")
a=$(folded_sum "$WORKDIR/ab.folded" "" hot_a)
want=$(calc "100 * $a / $total")
info "hot_a: $a of $total samples ($want%)"
timeout -k 5 90 node "$top/tests/browser/flamegraph.mjs" "$WORKDIR/cpu.svg" hot_a '^hot_a$' "$want" \
	>"$WORKDIR/browser.log" 2>&1
rc=$?
sed 's/^/  | /' "$WORKDIR/browser.log"
[ $rc = 0 ] || fail "browser checks failed (exit $rc)"
pass "viewer: hover, zoom, reset, search ($want% hot_a)"
