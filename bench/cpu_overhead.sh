#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# CPU overhead of latprof record against no profiler and against perf record,
# on a CPU-bound workload (build/fixtures/bench_work). See bench/README.md.
#
# Every variant runs once per round, in an order rotated each round, so a
# drift of the machine (frequency, noisy neighbour) spreads over all variants
# instead of biasing one. Writes only to a temporary directory, and to FILE
# when given -o FILE.
#
# Usage: bench/cpu_overhead.sh [-r ROUNDS] [-n MILLION_ITERS] [-o FILE]
#        (LATPROF, FIXTURES and PERF may be set in the environment)

set -u

ROUNDS=5
ITERS=1000
OUT=
usage()
{
	echo "usage: $0 [-r ROUNDS] [-n MILLION_ITERS] [-o FILE]" >&2
	exit 2
}
while getopts "r:n:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	n) ITERS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LATPROF=${LATPROF:-$ROOT/latprof}
FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
PERF=${PERF:-perf}
WORK=$FIXTURES/bench_work
TIME=/usr/bin/time

die()
{
	echo "cpu_overhead: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "needs root (latprof and perf -a need CAP_BPF/CAP_PERFMON)"
[ -x "$LATPROF" ] || die "latprof not found: $LATPROF (run make)"
[ -x "$WORK" ] || die "fixture not found: $WORK (run make)"
[ -x "$TIME" ] || die "GNU time not found at $TIME: apt-get install -y time"
VARIANTS="base lp99 lp999"
if command -v "$PERF" >/dev/null 2>&1; then
	VARIANTS="$VARIANTS perf99 perf999"
else
	echo "cpu_overhead: $PERF not found, perf variants skipped" >&2
fi

TMP=$(mktemp -d /tmp/latprof-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
RUNS=$TMP/runs.tsv	# variant round wall_s cpu_s startup_ms elapsed_s tool_cpu_s rss_kb

# run VARIANT ROUND: one run of the workload under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2 launch
	local out=$TMP/work.out tfile=$TMP/time.out
	local -a cmd
	case $v in
	base) cmd=("$WORK" "$ITERS") ;;
	lp99) cmd=("$LATPROF" record -q -F 99 -o "$TMP/lp.pb.gz" -- "$WORK" "$ITERS") ;;
	lp999) cmd=("$LATPROF" record -q -F 999 -o "$TMP/lp.pb.gz" -- "$WORK" "$ITERS") ;;
	perf99) cmd=("$PERF" record -q -g -F 99 -o "$TMP/perf.data" -- "$WORK" "$ITERS") ;;
	perf999) cmd=("$PERF" record -q -g -F 999 -o "$TMP/perf.data" -- "$WORK" "$ITERS") ;;
	esac
	rm -f "$TMP/lp.pb.gz" "$TMP/perf.data"
	sync
	launch=$EPOCHREALTIME
	if ! "$TIME" -o "$tfile" -f "%e %U %S %M" "${cmd[@]}" >"$out" 2>"$TMP/err"; then
		cat "$TMP/err" >&2
		die "$v: ${cmd[*]} failed"
	fi
	awk -v v="$v" -v r="$r" -v launch="$launch" '
		FILENAME == ARGV[1] {
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				w[kv[1]] = kv[2]
			}
			next
		}
		{ elapsed = $1; cpu_all = $2 + $3; rss = $4 }
		END {
			if (w["wall_ns"] == "")
				exit 1
			# launch is seconds.microseconds: compare in ms, the
			# leading digits cancel well within a double
			startup_ms = w["start_realtime_ns"] / 1e6 - launch * 1e3
			tool = cpu_all - w["cpu_ns"] / 1e9
			printf "%s\t%d\t%.4f\t%.4f\t%.2f\t%.3f\t%.3f\t%d\n", v, r,
				w["wall_ns"] / 1e9, w["cpu_ns"] / 1e9, startup_ms,
				elapsed, tool, rss
		}' "$out" "$tfile" >>"$RUNS" || die "$v: the workload printed no result"
}

variants=($VARIANTS)
nv=${#variants[@]}
echo "cpu_overhead: $ROUNDS rounds x $nv variants, bench_work $ITERS M iterations" >&2
for ((r = 0; r < ROUNDS; r++)); do
	order=""
	for ((i = 0; i < nv; i++)); do
		v=${variants[$(((i + r) % nv))]}
		order="$order $v"
		run "$v" "$r"
	done
	echo "  round $((r + 1))/$ROUNDS:$order" >&2
done

# col_stat FILE COL min|med|max: a statistic of column COL of a TSV file
col_stat()
{
	cut -f"$2" "$1" | sort -g | awk -v s="$3" '
		{ a[NR] = $1 }
		END {
			if (s == "min") print a[1]
			else if (s == "max") print a[NR]
			else print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		}'
}

# summary: per variant min/median/max of the workload's wall time, its ratio
# to the baseline median, and medians of the other columns.
summary()
{
	echo "# workload: bench_work $ITERS M iterations, $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
	echo "# wall = the workload's own wall time (main() to exit); ratio = median / base median"
	echo "# startup = launch to the workload's main(); total = launch to the tool's exit"
	echo "# tool cpu = user+sys of the whole command minus the workload's own cpu"
	echo "# rss = peak RSS of the largest process of the command (GNU time %M)"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$v" \
			"$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(col_stat "$TMP/v.tsv" 4 med)" \
			"$(col_stat "$TMP/v.tsv" 5 med)" "$(col_stat "$TMP/v.tsv" 6 med)" \
			"$(col_stat "$TMP/v.tsv" 7 med)" \
			"$(awk -v k="$(col_stat "$TMP/v.tsv" 8 med)" 'BEGIN { print k / 1024 }')"
	done >"$TMP/sum.tsv"
	base=$(awk -F'\t' '$1 == "base" { print $3 }' "$TMP/sum.tsv")
	printf "%-8s %7s %7s %7s %6s %7s %9s %8s %9s %8s\n" variant "wall" "median" "max" \
		"ratio" "cpu_s" "startup" "total_s" "tool_cpu" "rss_MB"
	printf "%-8s %7s %7s %7s %6s %7s %9s %8s %9s %8s\n" "" "min_s" "_s" "_s" "" "" "_ms" "" "_s" ""
	awk -F'\t' -v base="$base" '{
		printf "%-8s %7.3f %7.3f %7.3f %6.3f %7.2f %9.1f %8.3f %9.3f %8.1f\n",
			$1, $2, $3, $4, $3 / base, $5, $6, $7, $8, $9
	}' "$TMP/sum.tsv"
	awk -F'\t' '
		{ rss[$1] = $9; st[$1] = $6; med[$1] = $3 }
		END {
			printf "\nratios:\n"
			for (f = 99; f <= 999; f += 900) {
				lp = "lp" f; pf = "perf" f
				if (!(lp in med))
					continue
				printf "  -F %-4d latprof/base wall %.3f", f, med[lp] / med["base"]
				if (pf in med)
					printf ", perf/base wall %.3f, latprof/perf wall %.3f, latprof/perf rss %.2f, latprof/perf startup %.2f",
						med[pf] / med["base"], med[lp] / med[pf], rss[lp] / rss[pf],
						st[lp] / (st[pf] > 0 ? st[pf] : 1)
				printf "\n"
			}
		}' "$TMP/sum.tsv"
}

summary | tee "$TMP/summary.txt"
if [ -n "$OUT" ]; then
	{
		cat "$TMP/summary.txt"
		echo
		echo "# raw runs: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb"
		cat "$RUNS"
	} >"$OUT" || die "cannot write $OUT"
fi
