#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Cost and completeness of user stack unwinding: latprof --unwind fp,
# latprof --unwind dwarf and perf record --call-graph dwarf, against no
# profiler, on a CPU-bound workload built without frame pointers
# (tests/fixtures/nofp_bench.c, compiled here with -fomit-frame-pointer).
# See bench/README.md.
#
# Same method as cpu_overhead.sh: every variant runs once per round, in an
# order rotated each round. After each profiled run the stacks are turned
# into text (latprof export --format folded / perf script), timed, and the
# share of samples whose stack contains main is counted: how complete the
# stacks are. Writes only to a temporary directory, and to FILE with -o.
#
# Usage: bench/unwind_overhead.sh [-r ROUNDS] [-n MILLION_ITERS] [-o FILE]
#        (LATPROF, PERF and CC may be set in the environment)

set -u
. "$(dirname "$0")/lib.sh"

rounds_args "$@"

PERF=${PERF:-perf}
CC=${CC:-cc}
SRC=$ROOT/tests/fixtures/nofp_bench.c

need_root "latprof and perf need CAP_BPF/CAP_PERFMON"
need_latprof
[ -r "$SRC" ] || die "workload source not found: $SRC"
need_time
need_unwind
VARIANTS="base fp99 fp999 dwarf99 dwarf999"
add_perf_variants

make_tmp
WORK=$TMP/nofp_bench
"$CC" -O2 -g -fomit-frame-pointer -o "$WORK" "$SRC" 2>"$TMP/cc.err" ||
	{ cat "$TMP/cc.err" >&2; die "cannot compile $SRC"; }
# variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb post_ms post_cpu_s
# post_rss_kb out_kb samples with_main
RUNS=$TMP/runs.tsv

# stacks VARIANT: after a profiled run, turn its output into text stacks
# (timed: post_ms, post_cpu_s, post_rss_kb) and count the workload's samples
# and those containing main. Prints
# "post_ms post_cpu_s post_rss_kb out_kb samples with_main".
stacks()
{
	local v=$1 file t0 t1
	local -a cmd
	case $v in
	fp* | dwarf*)
		file=$TMP/lp.pb.gz
		cmd=("$LATPROF" export "$file" --format folded -o "$TMP/stacks.txt") ;;
	perf*)
		file=$TMP/perf.data
		cmd=(sh -c '"$0" script -i "$1" -F comm,ip,sym >"$2" 2>/dev/null' \
			"$PERF" "$file" "$TMP/stacks.txt") ;;
	esac
	t0=$EPOCHREALTIME
	"$TIME" -o "$TMP/post.time" -f "%U %S %M" "${cmd[@]}" || die "$v: ${cmd[*]} failed"
	t1=$EPOCHREALTIME
	awk -v kb="$(stat -c %s "$file")" -v t0="$t0" -v t1="$t1" \
		'END { printf "%.1f %.2f %d %.1f ", (t1 - t0) * 1e3, $1 + $2, $3, kb / 1024 }' \
		"$TMP/post.time"
	case $v in
	fp* | dwarf*)
		# folded: "comm;root;...;leaf COUNT"
		awk '
			{
				i = length($0)
				while (i > 0 && substr($0, i, 1) != " ")
					i--
				n = split(substr($0, 1, i - 1), f, ";")
				if (f[1] != "nofp_bench")
					next
				cnt = substr($0, i + 1)
				total += cnt
				for (j = 2; j <= n; j++)
					if (f[j] == "main") { hit += cnt; break }
			}
			END { print total + 0, hit + 0 }' "$TMP/stacks.txt" ;;
	perf*)
		# perf script: a "comm" line, then one "addr sym" line per
		# frame, leaf first; a blank line ends each sample
		awk '
			BEGIN { RS = "" }
			{
				n = split($0, l, "\n")
				split(l[1], h, " ")
				if (h[1] != "nofp_bench")
					next
				total++
				for (j = 2; j <= n; j++) {
					split(l[j], w, " ")
					if (w[2] == "main") { hit++; break }
				}
			}
			END { print total + 0, hit + 0 }' "$TMP/stacks.txt" ;;
	esac
}

# run VARIANT ROUND: one run of the workload under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2 post="0 0 0 0 0 0"
	local -a cmd
	case $v in
	base) cmd=("$WORK" "$ITERS") ;;
	fp*) cmd=("$LATPROF" record -q --unwind fp -F "${v#fp}" -o "$TMP/lp.pb.gz" -- "$WORK" "$ITERS") ;;
	dwarf*) cmd=("$LATPROF" record -q --unwind dwarf -F "${v#dwarf}" -o "$TMP/lp.pb.gz" --
		     "$WORK" "$ITERS") ;;
	perf*) cmd=("$PERF" record -q --call-graph dwarf -F "${v#perf}" -o "$TMP/perf.data" --
		    "$WORK" "$ITERS") ;;
	esac
	rm -f "$TMP/lp.pb.gz" "$TMP/perf.data" "$TMP/stacks.txt"
	timed_run "$v" "${cmd[@]}"
	[ "$v" != base ] && post=$(stacks "$v")
	add_run "$v" "$r" "$post"
}

run_rounds "nofp_bench $ITERS M iterations"

# summary: per variant min/median/max of the workload's wall time, its ratio
# to the baseline median, medians of the other columns, and the share of
# samples with main over all rounds.
summary()
{
	echo "# workload: nofp_bench (-O2 -fomit-frame-pointer, 26 frames deep) $ITERS M iterations,"
	echo "# $ROUNDS rounds, $(nproc) CPUs, $(uname -r), $("$PERF" --version 2>/dev/null || echo no perf)"
	echo "# wall = the workload's own wall time (main() to exit); ratio = median / base median"
	echo "# tool_cpu = user+sys of the whole record command minus the workload's own cpu"
	echo "# rss = peak RSS of the largest process of the record command (GNU time %M)"
	echo "# post = latprof export --format folded / perf script -F comm,ip,sym: wall, cpu, peak RSS"
	echo "# out = size of the recorded file (latprof.pb.gz / perf.data); samples = median per run"
	echo "# main% = samples whose stack contains main / samples of the workload, all rounds"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		printf "%s" "$v"
		printf "\t%s" "$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(col_stat "$TMP/v.tsv" 5 med)" \
			"$(col_stat "$TMP/v.tsv" 7 med)" "$(col_stat "$TMP/v.tsv" 8 med)" \
			"$(col_stat "$TMP/v.tsv" 9 med)" "$(col_stat "$TMP/v.tsv" 10 med)" \
			"$(col_stat "$TMP/v.tsv" 11 med)" "$(col_stat "$TMP/v.tsv" 12 med)" \
			"$(col_stat "$TMP/v.tsv" 13 med)"
		awk -F'\t' '{ s += $13; m += $14 } END { printf "\t%s\n", s ? m / s : "-" }' "$TMP/v.tsv"
	done >"$TMP/sum.tsv"
	base=$(awk -F'\t' '$1 == "base" { print $3 }' "$TMP/sum.tsv")
	printf "%-9s %6s %6s %6s %6s %7s %8s %6s %6s %6s %6s %7s %6s %6s\n" variant wall median \
		max ratio startup tool_cpu rss post post post_rss out samples main
	printf "%-9s %6s %6s %6s %6s %7s %8s %6s %6s %6s %6s %7s %6s %6s\n" "" min_s _s _s "" _ms _s \
		_MB _ms cpu_s _MB _KB "" "%"
	awk -F'\t' -v base="$base" '{
		if ($1 == "base") {
			printf "%-9s %6.3f %6.3f %6.3f %6.3f %7.1f %8.3f %6.1f %6s %6s %6s %7s %6s %6s\n",
				$1, $2, $3, $4, 1, $5, $6, $7 / 1024, "-", "-", "-", "-", "-", "-"
			next
		}
		printf "%-9s %6.3f %6.3f %6.3f %6.3f %7.1f %8.3f %6.1f %6.0f %6.2f %6.1f %7.1f %6d %6.1f\n",
			$1, $2, $3, $4, $3 / base, $5, $6, $7 / 1024, $8, $9, $10 / 1024,
			$11, $12, $13 * 100
	}' "$TMP/sum.tsv"
	awk -F'\t' '
		{
			med[$1] = $3; cpu[$1] = $6; rss[$1] = $7; postcpu[$1] = $9
			out[$1] = $11; main[$1] = $13
		}
		END {
			printf "\nratios:\n"
			for (f = 99; f <= 999; f += 900) {
				fp = "fp" f; dw = "dwarf" f; pf = "perf" f
				if (!(dw in med))
					continue
				printf "  -F %-4d wall/base: fp %.3f, dwarf %.3f", f,
					med[fp] / med["base"], med[dw] / med["base"]
				if (pf in med)
					printf ", perf-dwarf %.3f", med[pf] / med["base"]
				printf "; main%%: fp %.1f, dwarf %.1f", main[fp] * 100, main[dw] * 100
				if (pf in med)
					printf ", perf-dwarf %.1f", main[pf] * 100
				printf "\n"
				if (!(pf in med))
					continue
				printf "           latprof-dwarf/perf-dwarf: wall %.3f, tool cpu %.2f, tool+post cpu %.2f, rss %.2f, output size %.3f\n",
					med[dw] / med[pf], cpu[dw] / (cpu[pf] > 0 ? cpu[pf] : 0.001),
					(cpu[dw] + postcpu[dw]) / (cpu[pf] + postcpu[pf] > 0 ? cpu[pf] + postcpu[pf] : 0.001),
					rss[dw] / rss[pf], out[dw] / (out[pf] > 0 ? out[pf] : 1)
			}
		}' "$TMP/sum.tsv"
}

report "raw runs: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb post_ms post_cpu_s post_rss_kb out_kb samples with_main" "$RUNS"
