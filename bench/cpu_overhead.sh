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
. "$(dirname "$0")/lib.sh"

rounds_args "$@"

FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
PERF=${PERF:-perf}
WORK=$FIXTURES/bench_work

need_root "latprof and perf -a need CAP_BPF/CAP_PERFMON"
need_latprof
[ -x "$WORK" ] || die "fixture not found: $WORK (run make)"
need_time
VARIANTS="base lp99 lp999"
add_perf_variants

make_tmp
RUNS=$TMP/runs.tsv	# variant round wall_s cpu_s startup_ms elapsed_s tool_cpu_s rss_kb

# run VARIANT ROUND: one run of the workload under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2
	local -a cmd
	case $v in
	base) cmd=("$WORK" "$ITERS") ;;
	lp99) cmd=("$LATPROF" record -q -F 99 -o "$TMP/lp.pb.gz" -- "$WORK" "$ITERS") ;;
	lp999) cmd=("$LATPROF" record -q -F 999 -o "$TMP/lp.pb.gz" -- "$WORK" "$ITERS") ;;
	perf99) cmd=("$PERF" record -q -g -F 99 -o "$TMP/perf.data" -- "$WORK" "$ITERS") ;;
	perf999) cmd=("$PERF" record -q -g -F 999 -o "$TMP/perf.data" -- "$WORK" "$ITERS") ;;
	esac
	rm -f "$TMP/lp.pb.gz" "$TMP/perf.data"
	timed_run "$v" "${cmd[@]}"
	add_run "$v" "$r"
}

run_rounds "bench_work $ITERS M iterations"

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

report "raw runs: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb" "$RUNS"
