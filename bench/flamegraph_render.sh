#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# How fast `latprof flamegraph --folded` renders, and how big the SVG gets,
# on synthetic folded stacks: 10,000 and 100,000 unique stacks from a
# deterministic generator (a tree 8 wide at 6 levels under a few fixed
# frames, then 0-12 more frames, C++-like names, weights 1..1000). Each size
# is rendered ROUNDS times; prints min/median/max wall time, the SVG size
# and its number of frames (default --minwidth 0.1 px; 0.5 px; and
# --minwidth 0, every frame, as a worst case). Needs no root. See bench/README.md.
#
# Usage: bench/flamegraph_render.sh [-r ROUNDS] [-o FILE]

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-r ROUNDS] [-o FILE]"
ROUNDS=5
OUT=
while getopts "r:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage
need_latprof
make_tmp

# gen N: N unique folded stacks on stdout, the same every time.
gen()
{
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			s = "service;_start;__libc_start_main;main;server::run()"
			x = i
			for (k = 0; k < 6; k++) {
				d = x % 8
				x = int(x / 8)
				s = s ";ns" k "::Handler" d "<std::string>::step" k "(int const&)"
			}
			extra = (i * 7) % 13
			for (k = 0; k < extra; k++)
				s = s ";helper_" ((i + k * 31) % 97) "_[i]"
			s = s ";leaf_" i
			print s, 1 + (i * 7919) % 1000
		}
	}'
}

# render ARGS...: time `latprof flamegraph ARGS` ROUNDS times; sets TIMES
# (seconds, sorted) and leaves the SVG in TMP/out.svg.
render()
{
	local r t0 t1
	TIMES=()
	for ((r = 0; r < ROUNDS; r++)); do
		t0=$EPOCHREALTIME
		"$LATPROF" flamegraph "$@" -o "$TMP/out.svg" || die "latprof flamegraph $* failed"
		t1=$EPOCHREALTIME
		TIMES+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
	done
	mapfile -t TIMES < <(printf '%s\n' "${TIMES[@]}" | sort -n)
}

report_line()
{
	local frames size
	frames=$(grep -c '<g class="f"' "$TMP/out.svg")
	size=$(stat -c %s "$TMP/out.svg")
	printf '%-8s %-12s %8s %8s %8s %10s KB %8s\n' "$1" "$2" "${TIMES[0]}" \
		"${TIMES[$((ROUNDS / 2))]}" "${TIMES[$((ROUNDS - 1))]}" "$((size / 1024))" "$frames"
}

{
	printf '%-8s %-12s %8s %8s %8s %13s %8s\n' stacks minwidth min_s median_s max_s svg frames
	for n in 10000 100000; do
		gen "$n" >"$TMP/in.folded"
		[ "$(wc -l <"$TMP/in.folded")" = "$n" ] || die "generator wrote the wrong number of stacks"
		render --folded "$TMP/in.folded"
		report_line "$n" "0.1px"
		render --folded "$TMP/in.folded" --minwidth 0.5
		report_line "$n" "0.5px"
		render --folded "$TMP/in.folded" --minwidth 0
		report_line "$n" "0(all)"
	done
} | if [ -n "$OUT" ]; then tee "$OUT"; else cat; fi
