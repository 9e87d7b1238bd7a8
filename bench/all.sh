#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The performance record in one command: runs every comparison of bench/ in
# one go and prints one table of ratios. Each section is one of the bench
# scripts, run with its own interleaved rounds (every variant once per
# round, the order rotated each round); this script reads their raw runs
# (-o FILE) and gives every number as min / median / max over the rounds,
# with its ratio to latprof or to the floor. See bench/README.md.
#
#   syscall     per-syscall overhead: floor, latprof, syscount -L, bpftrace,
#               perf trace, strace (syscall_overhead.sh)
#   sampling    CPU sampling overhead, start-up time to the first sample and
#               peak RSS while recording: latprof --unwind fp / dwarf, perf
#               record -g / --call-graph dwarf, bpftrace profile
#               (cpu_overhead.sh with BENCH_VARIANTS)
#   nginx       nginx + wrk throughput loss (nginx_throughput.sh)
#   symbolize   addresses per second against eu-addr2line, addr2line and
#               llvm-symbolizer (symbolize_speed.sh)
#   flamegraph  flame graph render time (flamegraph_render.sh)
#   python      what Python frames cost a Python program: latprof with them,
#               with --no-python and no profiler, on a CPU loop and a
#               syscall loop, python3.11, pyenv's 3.12 and Debian testing's
#               python3.15 run as chroot ROOT python3.15 in the root of
#               tests/pyroot/mkroot.sh, skipped (in the notes) when that root
#               is not there (python_overhead.sh)
#   churn       recording the whole system beside process churn (10 and 60
#               shell loops of /bin/sleep 0.01): wall time past the 3 s
#               deadline, peak RSS, CPU and events lost of latprof record
#               -a, perf record -a -g, syscount -L and a latprof serve pull
#               (churn.sh)
#   top         latprof top's own CPU as a share of one core and its RSS,
#               -b and on a terminal (tmux), beside record's, watching the
#               demo in a loop at 99 Hz (top_cost.sh)
#
# Usage: bench/all.sh [-q] [-r ROUNDS] [-s SECTIONS] [-o FILE]
#   -q  quick: fewer rounds and smaller runs (about 6 minutes instead of ~23)
#   -r  rounds of every section (default: the section's own, see below)
#   -s  comma-separated sections to run (default: all of them)
#   -o  also write the table, each section's full report and raw runs to FILE
# Needs root and the tools the sections compare against (make setup); it
# builds latprof, the fixtures and bench/floor first unless LATPROF is set.
# A missing tool leaves its rows out, a failed section is reported and the
# others still run; the exit status is then 1.

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-q] [-r ROUNDS] [-s SECTIONS] [-o FILE]"
QUICK=0
ROUNDS_ALL=
SECTIONS=syscall,sampling,nginx,symbolize,flamegraph,python,churn,top
OUT=
while getopts "qr:s:o:h" opt; do
	case $opt in
	q) QUICK=1 ;;
	r) ROUNDS_ALL=$OPTARG ;;
	s) SECTIONS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[ -z "$ROUNDS_ALL" ] || [[ $ROUNDS_ALL =~ ^[1-9][0-9]*$ ]] || usage
for s in ${SECTIONS//,/ }; do
	case $s in
	syscall | sampling | nginx | symbolize | flamegraph | python | churn | top) ;;
	*) die "unknown section: $s (syscall, sampling, nginx, symbolize, flamegraph, python, churn, top)" ;;
	esac
done

need_root "the tools attach BPF programs, perf events and ptrace"
# what the sections run, built when missing or stale (a fresh clone has none)
if [ -z "${LATPROF:-}" ] && [ -f "$ROOT/Makefile" ]; then
	make -s -C "$ROOT" latprof fixtures bench-floor >/dev/null ||
		die "cannot build latprof, its fixtures and bench/floor: run make in $ROOT"
fi
need_latprof
BENCHDIR=$ROOT/bench
PERF=${PERF:-perf}
BPFTRACE=${BPFTRACE:-bpftrace}

# The size of each section: rounds and the work per run.
if [ "$QUICK" = 1 ]; then
	SYS_R=9 SYS_N=300		# syscall: rounds, thousand calls
	SMP_R=3 SMP_N=500 SMP_F="999"	# sampling: rounds, million iterations, Hz
	NGX_R=3 NGX_D=2			# nginx: rounds, seconds per wrk run
	SYM_R=2				# symbolize
	FLG_R=3				# flamegraph
	PY_R=3 PY_N=200 PY_S=1		# python: rounds, thousands, bpf_stats rounds
	CHN_R=2 CHN_N=10,60 CHN_D=3	# churn: rounds, loops, seconds per run
	TOP_R=2 TOP_N=15		# top: rounds, seconds per run
else
	SYS_R=31 SYS_N=300
	SMP_R=7 SMP_N=1000 SMP_F="99 999"
	NGX_R=11 NGX_D=5
	SYM_R=3
	FLG_R=5
	PY_R=7 PY_N=400 PY_S=3
	CHN_R=5 CHN_N=10,60 CHN_D=3
	TOP_R=3 TOP_N=30
fi
if [ -n "$ROUNDS_ALL" ]; then
	SYS_R=$ROUNDS_ALL SMP_R=$ROUNDS_ALL NGX_R=$ROUNDS_ALL SYM_R=$ROUNDS_ALL FLG_R=$ROUNDS_ALL
	PY_R=$ROUNDS_ALL CHN_R=$ROUNDS_ALL TOP_R=$ROUNDS_ALL
fi

make_tmp
TABLE=$TMP/table.tsv	# section tool metric min median max ratio
: >"$TABLE"
: >"$TMP/notes.txt"

# stats: min, median and max of the numbers on stdin, one per line
stats()
{
	sort -g | awk '{ a[NR] = $1 }
		END {
			if (!NR) exit 1
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			print a[1], m, a[NR]
		}'
}

# raw FILE: the raw runs of a bench script's -o FILE (the lines after "# raw")
raw()
{
	awk '/^# raw/ { on = 1; next } on && NF' "$1"
}

# row SECTION TOOL METRIC FORMAT RATIO: reads "min median max" on stdin and
# adds a row to TABLE, the three numbers printed with FORMAT
row()
{
	local lo med hi
	read -r lo med hi || return 0
	printf "%s\t%s\t%s\t$4\t$4\t$4\t%s\n" "$1" "$2" "$3" "$lo" "$med" "$hi" "$5" >>"$TABLE"
}

# ratio A B UNIT: "A/B x UNIT" with two decimals (three below 10), "-" without B
ratio()
{
	awk -v a="$1" -v b="$2" -v u="$3" 'BEGIN {
		if (b == "" || a == "" || b + 0 == 0) { print "-"; exit }
		r = a / b
		printf (r < 10 ? "%.2fx %s" : r < 100 ? "%.1fx %s" : "%.0fx %s"), r, u
	}'
}

# median: the median of the numbers on stdin
median()
{
	stats | awk '{ print $2 }'
}

# section NAME CMD...: runs a bench script, its report to stdout and to
# TMP/NAME.out (with -o FILE: TMP/NAME.txt); says so when it fails
section()
{
	local name=$1 t0=$SECONDS rc
	shift
	echo "== $name: $*" >&2
	"$@" -o "$TMP/$name.txt" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	cat "$TMP/$name.out"
	grep -v '^  round\|rounds x' "$TMP/$name.err" >&2
	echo "== $name: $((SECONDS - t0)) s, exit $rc" >&2
	echo "$name: $((SECONDS - t0)) s" >>"$TMP/times.txt"
	if [ "$rc" != 0 ] || [ ! -s "$TMP/$name.txt" ]; then
		echo "$name: failed (exit $rc): $(tail -1 "$TMP/$name.err")" >>"$TMP/notes.txt"
		return 1
	fi
	# the scripts' own warnings (a disturbed run, a tool killed) go into the notes
	awk -v n="$name" '/^warning:/ { w = 1 } w && NF { print n ": " $0 } !NF { w = 0 }' \
		"$TMP/$name.out" >>"$TMP/notes.txt"
	grep 'warning:' "$TMP/$name.err" | sed "s/^/$name: /" >>"$TMP/notes.txt"
}

# syscall_rows: per variant, the added ns per call (mean of getppid and read)
# against the same round's base, min/median/max over rounds; ratio to floor
syscall_rows()
{
	local f=$TMP/syscall.txt v label fl
	raw "$f" | awk -F'\t' '
		$1 == "base" { b[$2] = ($4 + $5) / 2; next }
		{ v[NR] = $1; r[NR] = $2; x[NR] = ($4 + $5) / 2 }
		END { for (i in v) if (r[i] in b) printf "%s\t%.2f\n", v[i], x[i] - b[r[i]] }' \
		>"$TMP/sys.add"
	fl=$(awk -F'\t' '$1 == "floor" { print $2 }' "$TMP/sys.add" | median)
	raw "$f" | awk -F'\t' '$1 == "base" { print ($4 + $5) / 2 }' | stats |
		row syscall "no tool (base)" "ns/syscall" "%.1f" "-"
	for v in floor floor_clock lp lp_other syscount bpftrace perf_trace strace; do
		grep -q "^$v	" "$TMP/sys.add" || continue
		case $v in
		floor) label="floor (empty BPF progs)" ;;
		floor_clock) label="floor + a clock read each" ;;
		lp) label="latprof --mode syscall" ;;
		lp_other) label="latprof, untraced pid" ;;
		syscount) label="syscount -L" ;;
		bpftrace) label="bpftrace latency hist" ;;
		perf_trace) label="perf trace -s" ;;
		strace) label="strace -c" ;;
		esac
		awk -F'\t' -v v="$v" '$1 == v { print $2 }' "$TMP/sys.add" | stats |
			row syscall "$label" "added ns/syscall" "%.1f" \
			"$(ratio "$(awk -F'\t' -v v="$v" '$1 == v { print $2 }' "$TMP/sys.add" | median)" \
				"$fl" floor)"
	done
}

# sampling_rows: the workload's wall time over the same round's base
# (slowdown), start-up time and peak RSS while recording, per tool
sampling_rows()
{
	local f=$TMP/sampling.txt v hz label ref
	raw "$f" >"$TMP/smp.raw"
	# per run: variant wall/base-of-the-round
	awk -F'\t' '
		$1 == "base" { b[$2] = $3 }
		{ v[NR] = $1; r[NR] = $2; w[NR] = $3 }
		END { for (i in v) if (v[i] != "base" && r[i] in b) printf "%s\t%.4f\n", v[i], w[i] / b[r[i]] }' \
		"$TMP/smp.raw" >"$TMP/smp.slow"
	for hz in $SMP_F; do
		ref=$(awk -F'\t' -v v="lpdw$hz" '$1 == v { print $3 }' "$TMP/smp.raw" | median)
		for v in lpfp lpdw perf perfdw bpft; do
			grep -q "^$v$hz	" "$TMP/smp.slow" || continue
			awk -F'\t' -v v="$v$hz" '$1 == v { print $2 }' "$TMP/smp.slow" | stats |
				row sampling "$(tool_label $v)" "wall / no profiler, $hz Hz" "%.3f" \
				"$(ratio "$(awk -F'\t' -v v="$v$hz" '$1 == v { print $3 }' "$TMP/smp.raw" |
					median)" "$ref" latprof-dwarf)"
		done
	done
	# start-up: launch to the workload's main(), every frequency pooled
	strip_hz() { sed 's/^\([a-z]*\)[0-9]*\t/\1\t/'; }
	strip_hz <"$TMP/smp.raw" >"$TMP/smp.tools"
	ref=$(awk -F'\t' '$1 == "lpdw" { print $5 }' "$TMP/smp.tools" | median)
	for v in base lpfp lpdw perf perfdw bpft; do
		grep -q "^$v	" "$TMP/smp.tools" || continue
		awk -F'\t' -v v="$v" '$1 == v { print $5 }' "$TMP/smp.tools" | stats |
			row startup "$(tool_label $v)" "ms launch to main()" "%.1f" \
			"$([ "$v" = base ] && echo "-" || ratio "$(awk -F'\t' -v v="$v" '$1 == v { print $5 }' \
				"$TMP/smp.tools" | median)" "$ref" latprof-dwarf)"
	done
	# RSS: the tool's VmHWM while the workload ran, at the highest frequency
	hz=${SMP_F##* }
	ref=$(awk -F'\t' -v v="lpdw$hz" '$1 == v { print $9 / 1024 }' "$TMP/smp.raw" | median)
	for v in lpfp lpdw perf perfdw bpft; do
		grep -q "^$v$hz	" "$TMP/smp.raw" || continue
		awk -F'\t' -v v="$v$hz" '$1 == v { print $9 / 1024 }' "$TMP/smp.raw" | stats |
			row rss "$(tool_label $v)" "MB VmHWM recording, $hz Hz" "%.1f" \
			"$(ratio "$(awk -F'\t' -v v="$v$hz" '$1 == v { print $9 / 1024 }' "$TMP/smp.raw" |
				median)" "$ref" latprof-dwarf)"
	done
	# and over the whole run (what a container's memory limit kills on): the
	# command's largest process at its peak, the profile's writing included;
	# the ratio to perf record -g's, the yardstick of issue 30
	ref=$(awk -F'\t' -v v="perf$hz" '$1 == v { print $8 / 1024 }' "$TMP/smp.raw" | median)
	for v in lpfp lpdw perf perfdw bpft; do
		grep -q "^$v$hz	" "$TMP/smp.raw" || continue
		awk -F'\t' -v v="$v$hz" '$1 == v { print $8 / 1024 }' "$TMP/smp.raw" | stats |
			row rss "$(tool_label $v)" "MB peak RSS whole run, $hz Hz" "%.1f" \
			"$(ratio "$(awk -F'\t' -v v="$v$hz" '$1 == v { print $8 / 1024 }' "$TMP/smp.raw" |
				median)" "$ref" perf-g)"
	done
}

# tool_label VARIANT: the tool of a sampling variant, without its frequency
tool_label()
{
	case $1 in
	base) echo "no profiler (2 execs)" ;;
	lpfp) echo "latprof --unwind fp" ;;
	lpdw) echo "latprof --unwind dwarf" ;;
	perf) echo "perf record -g" ;;
	perfdw) echo "perf --call-graph dwarf" ;;
	bpft) echo "bpftrace profile ustack" ;;
	esac
}

# nginx_rows: requests/s loss against the same round's base and the worker
# time added per request; ratio = that time over the floor's
nginx_rows()
{
	local f=$TMP/nginx.txt v label fl
	raw "$f" | awk -F'\t' '
		$1 == "base" { b[$2] = $3; next }
		{ v[NR] = $1; r[NR] = $2; x[NR] = $3 }
		END {
			for (i in v)
				if (r[i] in b)
					printf "%s\t%.3f\t%.4f\n", v[i], (1 - x[i] / b[r[i]]) * 100,
						1e6 / x[i] - 1e6 / b[r[i]]
		}' >"$TMP/ngx.loss"
	fl=$(awk -F'\t' '$1 == "floor" { print $3 }' "$TMP/ngx.loss" | median)
	raw "$f" | awk -F'\t' '$1 == "base" { print $3 }' | stats |
		row nginx "no tool (base)" "requests/s" "%.0f" "-"
	for v in floor floor_clock lp serve_nohist serve serve_trig syscount bpftrace perf_trace; do
		grep -q "^$v	" "$TMP/ngx.loss" || continue
		case $v in
		floor) label="floor (empty BPF progs)" ;;
		floor_clock) label="floor + a clock read each" ;;
		lp) label="latprof --mode cpu,syscall" ;;
		serve) label="latprof serve (defaults)" ;;
		serve_nohist) label="latprof serve --history 0" ;;
		serve_trig) label="latprof serve, a trigger" ;;
		syscount) label="syscount -L" ;;
		bpftrace) label="bpftrace latency hist" ;;
		perf_trace) label="perf trace -s" ;;
		esac
		awk -F'\t' -v v="$v" '$1 == v { print $2 }' "$TMP/ngx.loss" | stats |
			row nginx "$label" "% requests/s lost" "%.1f" \
			"$(ratio "$(awk -F'\t' -v v="$v" '$1 == v { print $3 }' "$TMP/ngx.loss" | median)" \
				"$fl" "floor (us/req)")"
	done
	# latprof's own CPU beside the worker: process + BPF programs (the
	# section's "own_cpu V process MED (MIN-MAX) bpf B total MED (MIN-MAX)")
	for v in lp serve; do
		[ $v = lp ] && label="latprof --mode cpu,syscall" || label="latprof serve (defaults)"
		awk -v v="$v" '$1 == "own_cpu" && $2 == v {
			gsub(/[%()]/, " "); $0 = $0; split($10, m, "-"); print m[1], $9, m[2] }' "$f" |
			row nginx "$label" "% of a CPU: own, process+BPF" "%.2f" \
			"$(awk -v v="$v" '$1 == "own_cpu" && $2 == v { gsub(/[%()]/, " "); $0 = $0
				print "process " $4 "% + BPF " $7 "%" }' "$f")"
	done
}

# symbolize_rows: addresses per second per tool and set; ratio to latprof
symbolize_rows()
{
	local f=$TMP/symbolize.txt t set n ref
	raw "$f" >"$TMP/sym.raw"
	for set in distinct draws; do
		[ $set = distinct ] && n=5000 || n=100000
		ref=$(awk -F'\t' -v s=$set '$1 == "latprof" && $2 == s { print $3 }' "$TMP/sym.raw" | median)
		for t in latprof addr2line llvm-symbolizer eu-addr2line; do
			grep -q "^$t	$set	" "$TMP/sym.raw" || continue
			awk -F'\t' -v t=$t -v s=$set -v n=$n '$1 == t && $2 == s { print n / $3 }' \
				"$TMP/sym.raw" | stats |
				row symbolize "$t" "addr/s, $([ $set = distinct ] &&
					echo "5k distinct" || echo "100k Zipf draws")" "%.0f" \
				"$(ratio "$(awk -F'\t' -v t=$t -v s=$set '$1 == t && $2 == s { print $3 }' \
					"$TMP/sym.raw" | median)" "$ref" "latprof's time")"
		done
	done
}

# flamegraph_rows: render seconds per size and --minwidth (no other renderer
# in Debian 12 to compare with: no ratio)
flamegraph_rows()
{
	awk '$1 ~ /^[0-9]+$/ && NF >= 7 {
		printf "flamegraph\tlatprof flamegraph\ts, %dk stacks, minwidth %s\t%.3f\t%.3f\t%.3f\t-\n",
			$1 / 1000, $2, $3, $4, $5
	}' "$TMP/flamegraph.txt" >>"$TABLE"
}

# python_rows: per interpreter and workload, the loop's wall time without a
# profiler, then with latprof --no-python and with Python frames over the
# same round's run without a profiler; ratio = median wall with Python frames
# over --no-python's; then on / off within each round, of the wall time and
# of the loop's CPU time; then on_cpu_sample's cost (bpf_stats) per run and
# per sample of the workload, with and without Python frames
python_rows()
{
	local f=$TMP/python.txt w tag label metric off on
	raw "$f" | awk -F'\t' '$1 ~ /^(cpu|sys|aio)[0-9]+_(base|on|off)$/' >"$TMP/py.raw"
	# per run over the same round's base, and on over off: "variant ratio"
	awk -F'\t' '
		{
			split($1, p, "_")
			w[$1, $2] = $3; c[$1, $2] = $16; v[NR] = $1; r[NR] = $2; pre[NR] = p[1]
		}
		END {
			for (i in v) {
				b = w[pre[i] "_base", r[i]]
				o = w[pre[i] "_off", r[i]]
				co = c[pre[i] "_off", r[i]]
				if (v[i] !~ /_base$/ && b > 0)
					printf "%s\t%.4f\n", v[i], w[v[i], r[i]] / b
				if (v[i] ~ /_on$/ && o > 0)
					printf "%s/off\t%.4f\n", v[i], w[v[i], r[i]] / o
				if (v[i] ~ /_on$/ && co > 0)
					printf "%s/offcpu\t%.4f\n", v[i], c[v[i], r[i]] / co
			}
		}' "$TMP/py.raw" >"$TMP/py.slow"
	for tag in $(cut -f1 "$TMP/py.raw" | sed 's/^[a-z]*\([0-9]*\)_.*/\1/' | sort -u); do
		label="py${tag:0:1}.${tag:1}"
		for w in cpu sys aio; do
			grep -q "^$w${tag}_" "$TMP/py.raw" || continue
			case $w in
			cpu) metric="wall / no profiler, 999 Hz" off=--no-python on="Python frames" ;;
			sys) metric="wall / no profiler, syscalls" off=--no-python on="Python frames" ;;
			aio) metric="wall / no profiler, asyncio" off="--await-hz 0" on="await walk" ;;
			esac
			awk -F'\t' -v v="$w${tag}_base" '$1 == v { print $3 }' "$TMP/py.raw" | stats |
				row python "$label $w, no profiler" "s, the loop's wall" "%.3f" "-"
			awk -F'\t' -v v="$w${tag}_off" '$1 == v { print $2 }' "$TMP/py.slow" | stats |
				row python "$label $w, $off" "$metric" "%.3f" "-"
			awk -F'\t' -v v="$w${tag}_on" '$1 == v { print $2 }' "$TMP/py.slow" | stats |
				row python "$label $w, $on" "$metric" "%.3f" \
				"$(ratio "$(awk -F'\t' -v v="$w${tag}_on" '$1 == v { print $3 }' "$TMP/py.raw" |
					median)" "$(awk -F'\t' -v v="$w${tag}_off" '$1 == v { print $3 }' \
					"$TMP/py.raw" | median)" "$off")"
			awk -F'\t' -v v="$w${tag}_on/off" '$1 == v { print $2 }' "$TMP/py.slow" | stats |
				row python "$label $w, on / off" "wall ratio within a round" "%.3f" "-"
			awk -F'\t' -v v="$w${tag}_on/offcpu" '$1 == v { print $2 }' "$TMP/py.slow" | stats |
				row python "$label $w, on / off" "loop CPU ratio within a round" "%.3f" "-"
		done
		# bpf_stats: python round on|off run_time_ns run_cnt samples walked wall_s;
		# per round: ns/run on, off, ns per workload sample on, off, on - off
		awk '/^# bpf_stats/ { on = 1; next } on && NF' "$f" | awk -F'\t' -v t="$tag" '
			$1 == t && $3 == "on" { ton[$2] = $4; non[$2] = $5; son[$2] = $6 }
			$1 == t && $3 == "off" { toff[$2] = $4; noff[$2] = $5; soff[$2] = $6 }
			END {
				for (r in ton)
					if (r in toff && non[r] && noff[r] && son[r] && soff[r])
						printf "%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", ton[r] / non[r],
							toff[r] / noff[r], ton[r] / son[r], toff[r] / soff[r],
							ton[r] / son[r] - toff[r] / soff[r]
			}' >"$TMP/py.stats"
		for c in 2 1 4 3 5; do
			case $c in
			1) metric="ns/run, Python frames" ;;
			2) metric="ns/run, --no-python" ;;
			3) metric="ns/py sample, Python frames" ;;
			4) metric="ns/py sample, --no-python" ;;
			5) metric="ns/py sample, on - off" ;;
			esac
			cut -f$c "$TMP/py.stats" | stats |
				row python "$label on_cpu_sample" "$metric" "%.0f" "-"
		done
	done
}

# top_rows: per variant, latprof's CPU as a share of one core (ratio: over
# record's) and its RSS at the end of the run
top_rows()
{
	local v ref
	raw "$TMP/top.txt" >"$TMP/top.raw"
	ref=$(awk -F'\t' '$1 == "record" { print $3 }' "$TMP/top.raw" | median)
	for v in record batch screen; do
		grep -q "^$v	" "$TMP/top.raw" || continue
		awk -F'\t' -v v=$v '$1 == v { print $3 }' "$TMP/top.raw" | stats |
			row top "latprof $([ $v = record ] && echo record || echo "top ($v)")" \
			"CPU % of a core, demo, 99 Hz" "%.2f" \
			"$(ratio "$(awk -F'\t' -v v=$v '$1 == v { print $3 }' "$TMP/top.raw" | median)" \
				"$ref" record)"
		awk -F'\t' -v v=$v '$1 == v { print $5 / 1024 }' "$TMP/top.raw" | stats |
			row top "latprof $([ $v = record ] && echo record || echo "top ($v)")" \
			"RSS MB at the end" "%.1f" "-"
	done
}

# churn_rows: per number of churn loops, each tool's wall time (launch to
# exit; serve: the pull), peak RSS (serve: VmHWM after the pull), serve's
# RSS after the pull, the tool's CPU and the events it lost; ratio = the
# median over perf record -a -g's (none for the events lost, perf's often 0)
churn_rows()
{
	local f=$TMP/churn.txt n v c label metric fmt ref
	raw "$f" >"$TMP/chn.raw"
	for n in $(cut -f2 "$TMP/chn.raw" | awk '!seen[$1]++'); do
		for c in 4 5 6 9 7 8; do
			case $c in
			4) metric="s wall ($CHN_D s run), $n loops" fmt="%.3f" ;;
			5) metric="MB peak RSS, $n loops" fmt="%.1f" ;;
			6) metric="MB RSS after pull, $n loops" fmt="%.1f" ;;
			9) metric="s tool CPU, $n loops" fmt="%.2f" ;;
			7) metric="events lost, $n loops" fmt="%.0f" ;;
			8) metric="lost: stats map full, $n loops" fmt="%.0f" ;;
			esac
			ref=$(churn_col perf "$n" "$c" | median)
			for v in lp perf syscount serve; do
				case $v in
				lp) label="latprof record -a" ;;
				perf) label="perf record -a -g" ;;
				syscount) label="syscount -L" ;;
				serve) label="latprof serve, one pull" ;;
				esac
				churn_col "$v" "$n" "$c" | stats | row churn "$label" "$metric" "$fmt" \
					"$([ "$v" = perf ] || [ "$c" = 7 ] || [ "$c" = 8 ] && echo "-" ||
						ratio "$(churn_col "$v" "$n" "$c" | median)" "$ref" perf)"
			done
		done
	done
}

# churn_col VARIANT LOOPS COL: column COL of the churn runs of VARIANT with
# LOOPS loops, one a line, the runs without a value ("-") left out, kB in MB
churn_col()
{
	awk -F'\t' -v v="$1" -v n="$2" -v c="$3" '$1 == v && $2 == n && $c != "-" {
		print (c == 5 || c == 6) ? $c / 1024 : $c }' "$TMP/chn.raw"
}

START=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$SECONDS
for s in ${SECTIONS//,/ }; do
	case $s in
	syscall)
		section syscall "$BENCHDIR/syscall_overhead.sh" -r "$SYS_R" -n "$SYS_N" &&
			syscall_rows ;;
	sampling)
		v="base"
		for hz in $SMP_F; do
			v="$v lpfp$hz lpdw$hz"
			command -v "$PERF" >/dev/null 2>&1 && v="$v perf$hz perfdw$hz"
			command -v "$BPFTRACE" >/dev/null 2>&1 && v="$v bpft$hz"
		done
		BENCH_VARIANTS=$v section sampling "$BENCHDIR/cpu_overhead.sh" -r "$SMP_R" -n "$SMP_N" &&
			sampling_rows ;;
	nginx)
		section nginx "$BENCHDIR/nginx_throughput.sh" -r "$NGX_R" -d "$NGX_D" && nginx_rows ;;
	symbolize)
		section symbolize "$BENCHDIR/symbolize_speed.sh" -r "$SYM_R" && symbolize_rows ;;
	flamegraph)
		section flamegraph "$BENCHDIR/flamegraph_render.sh" -r "$FLG_R" && flamegraph_rows ;;
	python)
		STATS_ROUNDS=$PY_S section python "$BENCHDIR/python_overhead.sh" -r "$PY_R" -n "$PY_N" &&
			python_rows ;;
	churn)
		section churn "$BENCHDIR/churn.sh" -r "$CHN_R" -n "$CHN_N" -d "$CHN_D" && churn_rows ;;
	top)
		section top "$BENCHDIR/top_cost.sh" -r "$TOP_R" -n "$TOP_N" && top_rows ;;
	esac
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# summary: the table of every section's rows
summary()
{
	local commit
	commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)
	echo "# latprof performance record: bench/all.sh$([ "$QUICK" = 1 ] && echo " -q")$(
		[ -n "$ROUNDS_ALL" ] && echo " -r $ROUNDS_ALL"), $START, $((SECONDS - T0)) s"
	echo "# $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r),"
	echo "#   $(. /etc/os-release && echo "$PRETTY_NAME"); latprof $("$LATPROF" --version 2>/dev/null |
		awk '{ print $NF }')${commit:+ (commit $commit)}"
	echo "# tools: $("$PERF" version 2>/dev/null), bpftrace $("$BPFTRACE" --version 2>/dev/null |
		awk '{ print $2 }'), $(strace -V 2>/dev/null | head -1 | awk '{ print "strace " $4 }'),"
	echo "#   libbpf-tools $(dpkg-query -W -f='${Version}' libbpf-tools 2>/dev/null), $(
		/usr/sbin/nginx -v 2>&1 | sed 's/.*nginx\//nginx /'), $(addr2line --version 2>/dev/null |
		head -1 | awk '{ print "binutils " $NF }'), elfutils $(eu-addr2line --version 2>/dev/null |
		head -1 | awk '{ print $NF }')"
	[ -s "$TMP/python.txt" ] && echo "# pythons: $(sed -n 's/^#   python [0-9]*: //p' \
		"$TMP/python.txt" | paste -sd, | sed 's/,/, /g')"
	echo "# load average (1, 5, 15 min) at the start: $LOAD0, at the end: $LOAD1"
	echo "# rounds x size:$(for s in ${SECTIONS//,/ }; do
		case $s in
		syscall) printf " syscall %s x %s k calls," "$SYS_R" "$SYS_N" ;;
		sampling) printf " sampling %s x %s M iterations (%s Hz)," "$SMP_R" "$SMP_N" "$SMP_F" ;;
		nginx) printf " nginx %s x %s s," "$NGX_R" "$NGX_D" ;;
		symbolize) printf " symbolize %s," "$SYM_R" ;;
		flamegraph) printf " flamegraph %s," "$FLG_R" ;;
		python) printf " python %s x %s k calls," "$PY_R" "$PY_N" ;;
		churn) printf " churn %s x %s loops x %s s," "$CHN_R" "$CHN_N" "$CHN_D" ;;
		top) printf " top %s x %s s," "$TOP_R" "$TOP_N" ;;
		esac
	done | sed 's/,$//')"
	echo "# min / median / max over interleaved rounds (every variant once per round, order"
	echo "#   rotated); differences and ratios to base are taken within each round. The ratio"
	echo "#   column: the tool's median over the reference's median (latprof-dwarf, the floor's"
	echo "#   added cost, latprof's time for symbolization, latprof --no-python's wall time, or"
	echo "#   perf record -a -g's beside the same churn)."
	echo "#   Lower is better except requests/s and addr/s."
	printf "%-10s %-26s %-30s %9s %9s %9s  %s\n" section tool metric min median max ratio
	awk -F'\t' '{ printf "%-10s %-26s %-30s %9s %9s %9s  %s\n", $1, $2, $3, $4, $5, $6, $7 }' \
		"$TABLE"
	if [ -s "$TMP/syscall.txt" ] && grep -q '^per program' "$TMP/syscall.txt"; then
		echo
		echo "syscall section, per BPF program (kernel.bpf_stats_enabled; one extra run each):"
		awk '/^per program/ { on = 1; next } on && !NF { exit } on' "$TMP/syscall.txt"
	fi
	if [ -s "$TMP/notes.txt" ]; then
		echo
		echo "notes:"
		sed 's/^/  /' "$TMP/notes.txt"
	fi
	echo
	echo "section times: $(paste -sd, "$TMP/times.txt" | sed 's/,/, /g')"
}

echo
summary | tee "$TMP/summary.txt"
if [ -n "$OUT" ]; then
	{
		cat "$TMP/summary.txt"
		for s in ${SECTIONS//,/ }; do
			echo
			echo "########## $s"
			cat "$TMP/$s.txt" 2>/dev/null || cat "$TMP/$s.out" 2>/dev/null
		done
	} >"$OUT" || die "cannot write $OUT"
fi
# a failed section fails the whole run, once the others have reported
if grep -q ': failed (exit' "$TMP/notes.txt" 2>/dev/null; then
	exit 1
fi
exit 0
