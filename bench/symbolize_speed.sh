#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# How fast addresses of a binary become functions and lines: `latprof
# symbolize` against eu-addr2line, binutils addr2line and llvm-symbolizer,
# all with inline frames and function names, on glibc with libc6-dbg's
# separate debuginfo. See bench/README.md.
#
# Two address sets, drawn the way a profile draws them: 5,000 distinct
# addresses of libc's .text, and 100,000 draws from them skewed toward a few
# hot ones (Zipf, s = 1.1). Each tool reads a set on standard input; rounds
# interleave the tools; the median wall time gives addresses per second.
# -o FILE also writes the table and every run (tool, set, seconds) to FILE.
#
# Usage: bench/symbolize_speed.sh [-r ROUNDS] [-o FILE]   (LATPROF, LIB may be set)

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-r ROUNDS] [-o FILE]"
ROUNDS=3
OUT=
while getopts "r:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage
LIB=${LIB:-/lib/x86_64-linux-gnu/libc.so.6}
need_latprof
for t in eu-addr2line addr2line llvm-symbolizer eu-readelf; do
	command -v $t >/dev/null || die "$t not found (make setup)"
done
make_tmp
trap cleanup EXIT

# the two address sets
/usr/bin/python3 - "$LIB" "$TMP" <<'PYEOF'
import random, subprocess, sys
lib, tmp = sys.argv[1], sys.argv[2]
out = subprocess.run(["eu-readelf", "-S", "-W", lib], capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.split()
    if ".text" in f:
        i = f.index(".text")
        lo, size = int(f[i + 2], 16), int(f[i + 4], 16)
rnd = random.Random(42)
distinct = rnd.sample(range(lo, lo + size), 5000)
weights = [1 / (k + 1) ** 1.1 for k in range(len(distinct))]
draws = rnd.choices(distinct, weights, k=100000)
open(tmp + "/distinct.txt", "w").write("".join("0x%x\n" % a for a in distinct))
open(tmp + "/draws.txt", "w").write("".join("0x%x\n" % a for a in draws))
print("draws: %d distinct of 100000" % len(set(draws)))
PYEOF

# run TOOL SET: one timed run; prints the wall seconds
run()
{
	local t0 t1 cmd
	case $1 in
	latprof) cmd=("$LATPROF" symbolize -i -e "$LIB") ;;
	eu-addr2line) cmd=(eu-addr2line -f -i -e "$LIB") ;;
	addr2line) cmd=(addr2line -f -i -e "$LIB") ;;
	llvm-symbolizer) cmd=(llvm-symbolizer --inlines --functions=linkage "--obj=$LIB") ;;
	esac
	t0=$(date +%s.%N)
	"${cmd[@]}" <"$TMP/$2.txt" >"$TMP/$1.$2.out" 2>/dev/null || die "$1 failed on $2"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}

TOOLS="latprof eu-addr2line addr2line llvm-symbolizer"
for ((r = 1; r <= ROUNDS; r++)); do
	for set in distinct draws; do
		for t in $TOOLS; do
			echo -e "$t\t$set\t$(run $t $set)" >>"$TMP/runs.tsv"
		done
	done
	echo "round $r/$ROUNDS done" >&2
done

{
	echo "# $(basename "$LIB") (build-id $(eu-readelf -n "$LIB" | awk '/Build ID/ { print $3 }')), debuginfo from libc6-dbg"
	echo "# $ROUNDS rounds, $(nproc) CPUs, $(uname -r); addresses/s = set size / median wall time"
	printf "%-16s %14s %14s %12s %12s\n" tool "5k distinct/s" "100k draws/s" "x addr2line" "(draws)"
	for t in $TOOLS; do
		d=$(awk -F'\t' -v t=$t '$1 == t && $2 == "distinct" { print $3 }' "$TMP/runs.tsv" | sort -n |
			awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		w=$(awk -F'\t' -v t=$t '$1 == t && $2 == "draws" { print $3 }' "$TMP/runs.tsv" | sort -n |
			awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		echo "$t $d $w"
	done | awk '
		{ tool[NR] = $1; d[NR] = 5000 / $2; w[NR] = 100000 / $3; if ($1 == "addr2line") { bd = d[NR]; bw = w[NR] } }
		END { for (i = 1; i <= NR; i++)
			printf "%-16s %14.0f %14.0f %11.2fx %11.2fx\n", tool[i], d[i], w[i], d[i] / bd, w[i] / bw }'
} | tee "${OUT:-/dev/null}"
if [ -n "$OUT" ]; then
	{
		echo
		echo "# raw runs: tool set wall_s"
		cat "$TMP/runs.tsv"
	} >>"$OUT" || die "cannot write $OUT"
fi
