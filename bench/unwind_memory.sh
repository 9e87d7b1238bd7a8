#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Memory of latprof record --unwind dwarf over a long run: latprof's RSS and
# the memory of its BPF maps, sampled every second while it profiles Debian's
# /usr/bin/python3 (no frame pointers) running tests/fixtures/py_loop.py.
# See bench/README.md.
#
# RSS is VmRSS from /proc/PID/status. Map memory is the sum of the "memlock:"
# lines of /proc/PID/fdinfo/FD for latprof's BPF map fds (those with a
# "map_type:" line): what the kernel charges for each map, ring buffers
# included, the same number as bpftool's bytes_memlock. Writes only to a
# temporary directory, and to FILE with -o.
#
# Usage: bench/unwind_memory.sh [-d SECONDS] [-F HZ] [-o FILE]
#        (LATPROF and PYTHON may be set in the environment)

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-d SECONDS] [-F HZ] [-o FILE]"
DURATION=60
FREQ=499
OUT=
while getopts "d:F:o:h" opt; do
	case $opt in
	d) DURATION=$OPTARG ;;
	F) FREQ=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $DURATION =~ ^[1-9][0-9]*$ ]] && [[ $FREQ =~ ^[1-9][0-9]*$ ]] || usage

PYTHON=${PYTHON:-/usr/bin/python3}
SCRIPT=$ROOT/tests/fixtures/py_loop.py

need_root "latprof needs CAP_BPF/CAP_PERFMON"
need_latprof
[ -x "$PYTHON" ] || die "python not found: $PYTHON"
[ -r "$SCRIPT" ] || die "workload not found: $SCRIPT"
need_unwind

make_tmp
TRACE=$TMP/trace.tsv	# t_s rss_kb map_bytes maps cpu_s

# map_mem PID: "BYTES MAPS", the memlock of PID's BPF map fds
map_mem()
{
	local f total=0 n=0 m
	for f in /proc/"$1"/fdinfo/*; do
		m=$(awk '/^map_type:/ { map = 1 } /^memlock:/ { ml = $2 }
			 END { if (map) print ml + 0 }' "$f" 2>/dev/null)
		[ -n "$m" ] || continue
		total=$((total + m))
		n=$((n + 1))
	done
	echo "$total $n"
}

# cpu_s PID: utime + stime of PID in seconds
cpu_s()
{
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null
}

echo "unwind_memory: latprof record --unwind dwarf -F $FREQ on $PYTHON py_loop.py, $DURATION s" >&2
"$LATPROF" record -q --unwind dwarf -F "$FREQ" -o "$TMP/mem.pb.gz" -- \
	"$PYTHON" "$SCRIPT" "$DURATION" >"$TMP/py.out" 2>"$TMP/lp.err" &
LP=$!
t0=$EPOCHREALTIME
sleep 1
while kill -0 "$LP" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$LP/status" 2>/dev/null)
	read -r bytes maps < <(map_mem "$LP")
	cpu=$(cpu_s "$LP")
	[ -n "$rss" ] && [ -n "$cpu" ] &&
		printf "%.1f\t%d\t%d\t%d\t%s\n" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
			'BEGIN { print b - a }')" "$rss" "$bytes" "$maps" "$cpu" >>"$TRACE"
	sleep 1
done
wait "$LP"
rc=$?
LP=
[ $rc = 0 ] || { cat "$TMP/lp.err" >&2; die "latprof record exited $rc"; }
[ -s "$TRACE" ] || die "no measurement taken"
"$LATPROF" report --no-color "$TMP/mem.pb.gz" >"$TMP/report.txt" 2>&1 ||
	die "latprof report failed: $(cat "$TMP/report.txt")"

summary()
{
	local n first last cpu
	n=$(grep -c '' "$TRACE")
	echo "# latprof record --unwind dwarf -F $FREQ -- $PYTHON py_loop.py $DURATION"
	echo "# $(nproc) CPUs, $(uname -r); $n measurements, one a second"
	echo "# rss = latprof's VmRSS; maps = memlock of latprof's BPF map fds (/proc/PID/fdinfo)"
	printf "%-12s %9s %9s %9s\n" "" min median max
	printf "%-12s %9.1f %9.1f %9.1f\n" rss_MB \
		"$(col_stat "$TRACE" 2 min | awk '{ print $1 / 1024 }')" \
		"$(col_stat "$TRACE" 2 med | awk '{ print $1 / 1024 }')" \
		"$(col_stat "$TRACE" 2 max | awk '{ print $1 / 1024 }')"
	printf "%-12s %9.1f %9.1f %9.1f\n" map_MB \
		"$(col_stat "$TRACE" 3 min | awk '{ print $1 / 1048576 }')" \
		"$(col_stat "$TRACE" 3 med | awk '{ print $1 / 1048576 }')" \
		"$(col_stat "$TRACE" 3 max | awk '{ print $1 / 1048576 }')"
	printf "%-12s %9d %9d %9d\n" maps \
		"$(col_stat "$TRACE" 4 min)" "$(col_stat "$TRACE" 4 med)" "$(col_stat "$TRACE" 4 max)"
	# growth: median RSS of the first vs the last 10 measurements
	first=$(head -n 10 "$TRACE" | cut -f2 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	last=$(tail -n 10 "$TRACE" | cut -f2 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	cpu=$(tail -n 1 "$TRACE" | cut -f5)
	printf "rss growth: %.1f MB (first 10 s median) -> %.1f MB (last 10 s median)\n" \
		"$(awk -v k="$first" 'BEGIN { print k / 1024 }')" "$(awk -v k="$last" 'BEGIN { print k / 1024 }')"
	printf "latprof cpu: %.2f s over %.0f s (%.1f%% of one CPU)\n" "$cpu" \
		"$(tail -n 1 "$TRACE" | cut -f1)" "$(awk -v c="$cpu" -v t="$(tail -n 1 "$TRACE" | cut -f1)" \
		'BEGIN { print t ? 100 * c / t : 0 }')"
	echo "workload: $(head -n 1 "$TMP/py.out")"
	echo "profile: $(stat -c %s "$TMP/mem.pb.gz") bytes; $(grep -E '^  total' "$TMP/report.txt" | sed 's/^ *//')"
	awk '/^Stacks/ { s = 1; print; next } s && /^[^ ]/ { s = 0 } s' "$TMP/report.txt"
}

report "raw: t_s rss_kb map_bytes maps latprof_cpu_s" "$TRACE"
