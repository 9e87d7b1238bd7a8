#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# CPU overhead of latprof record against no profiler and against perf record,
# on a CPU-bound workload (build/fixtures/bench_work). See bench/README.md.
# Also measured per run: the start-up time (launch to the workload's main())
# and the tool's peak RSS while the workload runs (VmHWM) and over the whole
# command (GNU time %M).
#
# Every variant runs once per round, in an order rotated each round, so a
# drift of the machine (frequency, noisy neighbour) spreads over all variants
# instead of biasing one. Writes only to a temporary directory, and to FILE
# when given -o FILE.
#
# Usage: bench/cpu_overhead.sh [-r ROUNDS] [-n MILLION_ITERS] [-o FILE]
#        (LATPROF, FIXTURES, PERF and BPFTRACE may be set in the environment;
#        BENCH_VARIANTS="base lpfp999 ..." runs only the variants named, among
#        them those not run by default: see run())

set -u
. "$(dirname "$0")/lib.sh"

rounds_args "$@"

FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
PERF=${PERF:-perf}
BPFTRACE=${BPFTRACE:-bpftrace}
WORK=$FIXTURES/bench_work

need_root "latprof and perf -a need CAP_BPF/CAP_PERFMON"
need_latprof
[ -x "$WORK" ] || die "fixture not found: $WORK (run make)"
need_time
VARIANTS="base lp99 lp999"
add_perf_variants
VARIANTS=${BENCH_VARIANTS:-$VARIANTS}
for v in $VARIANTS; do
	case $v in
	base | lp99 | lp999 | perf99 | perf999) ;;
	lpfp[0-9]* | lpdw[0-9]* | perfdw[0-9]* | bpft[0-9]*)
		[[ ${v##*[a-z]} =~ ^[1-9][0-9]*$ ]] || die "bad variant: $v" ;;
	*) die "unknown variant: $v" ;;
	esac
	case $v in
	perf*) command -v "$PERF" >/dev/null 2>&1 || die "$v: $PERF not found" ;;
	bpft*) command -v "$BPFTRACE" >/dev/null 2>&1 || die "$v: $BPFTRACE not found" ;;
	esac
done

make_tmp
# variant round wall_s cpu_s startup_ms elapsed_s tool_cpu_s rss_kb rec_rss_kb
RUNS=$TMP/runs.tsv

# watch_hwm: in the background while timed_run runs the command, follows the
# command's top process (the tool, or the workload for base) and writes to
# TMP/hwm.out its VmHWM (peak RSS, kB) as last read while the workload ran:
# the tool's peak RSS during the recording, without what it does after the
# workload exits (symbolization, writing files). Reads /proc with shell
# builtins only, every 20 ms, so it costs the measurement next to nothing.
watch_hwm()
{
	local tick timepid= tool= k v rest kids f seen=0 hwm=0 i
	exec {tick}<> <(:)
	for ((i = 0; i < 500; i++)); do
		[ -n "$tool" ] && break
		read -r -t 0.02 -u "$tick"
		if [ -z "$timepid" ]; then
			read -r kids 2>/dev/null <"/proc/$$/task/$$/children"
			for k in $kids; do
				read -r v 2>/dev/null <"/proc/$k/comm"
				[ "$v" = time ] && timepid=$k
			done
		else
			read -r tool 2>/dev/null <"/proc/$timepid/task/$timepid/children"
			tool=${tool%% *}
		fi
	done
	while [ -n "$tool" ] && [ -r "/proc/$tool/status" ]; do
		kids=
		for f in /proc/"$tool"/task/*/children; do
			# no newline ends the list: read fails at EOF but fills rest
			rest=
			read -r rest 2>/dev/null <"$f"
			kids="$kids$rest"
		done
		[ -n "$kids" ] && seen=1
		# the workload has exited: the recording is over
		[ "$seen" = 1 ] && [ -z "$kids" ] && break
		while read -r k v rest; do
			[ "$k" = VmHWM: ] && { hwm=$v; break; }
		done 2>/dev/null <"/proc/$tool/status"
		read -r -t 0.02 -u "$tick"
	done
	echo "$hwm" >"$TMP/hwm.out"
}

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
	# not run by default (BENCH_VARIANTS): CPU sampling alone at any
	# frequency, latprof with each unwinder, perf with DWARF stacks, bpftrace
	lpfp*) cmd=("$LATPROF" record -q --mode cpu --unwind fp -F "${v#lpfp}" -o "$TMP/lp.pb.gz" --
		    "$WORK" "$ITERS") ;;
	lpdw*) cmd=("$LATPROF" record -q --mode cpu --unwind dwarf -F "${v#lpdw}" -o "$TMP/lp.pb.gz" --
		    "$WORK" "$ITERS") ;;
	perfdw*) cmd=("$PERF" record -q --call-graph dwarf -F "${v#perfdw}" -o "$TMP/perf.data" --
		      "$WORK" "$ITERS") ;;
	bpft*) cmd=("$BPFTRACE" -q -o "$TMP/bpftrace.out" -c "$WORK $ITERS"
		    -e "profile:hz:${v#bpft} /pid == cpid/ { @[ustack] = count(); }") ;;
	esac
	rm -f "$TMP/lp.pb.gz" "$TMP/perf.data" "$TMP/bpftrace.out" "$TMP/hwm.out"
	watch_hwm &
	timed_run "$v" "${cmd[@]}"
	wait $! 2>/dev/null
	add_run "$v" "$r"
	# the last column: peak RSS while the workload ran
	sed -i "\$ s/\$/\t$(cat "$TMP/hwm.out" 2>/dev/null || echo 0)/" "$RUNS"
}

# latprof's first run on a kernel makes its BTF cache (docs/troubleshooting.md):
# made here, so that every timed run starts as a user's second run does
warm_latprof
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
	echo "# rec_rss = the tool's VmHWM (peak RSS) while the workload ran (base: the workload's)"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$v" \
			"$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(col_stat "$TMP/v.tsv" 4 med)" \
			"$(col_stat "$TMP/v.tsv" 5 med)" "$(col_stat "$TMP/v.tsv" 6 med)" \
			"$(col_stat "$TMP/v.tsv" 7 med)" \
			"$(awk -v k="$(col_stat "$TMP/v.tsv" 8 med)" 'BEGIN { print k / 1024 }')" \
			"$(awk -v k="$(col_stat "$TMP/v.tsv" 9 med)" 'BEGIN { print k / 1024 }')"
	done >"$TMP/sum.tsv"
	base=$(awk -F'\t' '$1 == "base" { print $3 }' "$TMP/sum.tsv")
	printf "%-9s %7s %7s %7s %6s %7s %9s %8s %9s %8s %8s\n" variant "wall" "median" "max" \
		"ratio" "cpu_s" "startup" "total_s" "tool_cpu" "rss_MB" "rec_rss"
	printf "%-9s %7s %7s %7s %6s %7s %9s %8s %9s %8s %8s\n" "" "min_s" "_s" "_s" "" "" "_ms" "" \
		"_s" "" "_MB"
	awk -F'\t' -v base="$base" '{
		printf "%-9s %7.3f %7.3f %7.3f %6s %7.2f %9.1f %8.3f %9.3f %8.1f %8.1f\n",
			$1, $2, $3, $4, (base > 0 ? sprintf("%6.3f", $3 / base) : "-"), $5, $6, $7,
			$8, $9, $10
	}' "$TMP/sum.tsv"
	awk -F'\t' '
		{ rss[$1] = $9; st[$1] = $6; med[$1] = $3 }
		END {
			n = 0
			for (f = 99; f <= 999; f += 900) {
				lp = "lp" f; pf = "perf" f
				if (!(lp in med) || !("base" in med))
					continue
				if (!n++)
					printf "\nratios:\n"
				printf "  -F %-4d latprof/base wall %.3f", f, med[lp] / med["base"]
				if (pf in med)
					printf ", perf/base wall %.3f, latprof/perf wall %.3f, latprof/perf rss %.2f, latprof/perf startup %.2f",
						med[pf] / med["base"], med[lp] / med[pf], rss[lp] / rss[pf],
						st[lp] / (st[pf] > 0 ? st[pf] : 1)
				printf "\n"
			}
		}' "$TMP/sum.tsv"
}

report "raw runs: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb rec_rss_kb" "$RUNS"
