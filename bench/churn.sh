#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Recording the whole system on a busy machine with process churn (issue
# "record -a on a busy machine"): latprof record -a, perf record -a -g,
# syscount -L and latprof serve (one profile pulled over HTTP), each for
# SECONDS while N shell loops run /bin/sleep 0.01 back to back (up to ~100
# execs a second per loop; on 2 CPUs the loops saturate the machine well
# before that). See bench/README.md.
#
# Measured per run: the wall time from launch to exit (the tools stop at
# SECONDS: what matters is how far past it they end), the peak RSS of the
# whole run (GNU time %M; serve: its VmHWM after the pull, a fresh agent per
# run, and its RSS right after the pull), the events the tool lost (latprof:
# the counters of latprof report's "Lost and dropped", summed, and
# syscall_stats_unattributed_map_full apart; perf: its lost samples, perf report
# --stats; syscount counts none), the tool's CPU time and the processes
# created per second on the machine during the run (/proc/stat).
#
# Every variant runs once per round beside a fresh churn (started 0.5 s
# before the tool, killed with its process group after it), in an order
# rotated each round; the rounds of each N run together. Writes only to a
# temporary directory, and to FILE when given -o FILE.
#
# Usage: bench/churn.sh [-r ROUNDS] [-n LOOPS[,LOOPS...]] [-d SECONDS] [-o FILE]
#        (LATPROF, PERF, SYSCOUNT, CURL and PORT may be set in the
#        environment; BENCH_VARIANTS="lp perf" runs only the variants named;
#        CHURN_PY=INTERPRETER runs LOOPS idle-ish Python processes instead
#        of the shell loops: what many processes of one interpreter cost)

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-r ROUNDS] [-n LOOPS[,LOOPS...]] [-d SECONDS] [-o FILE]"
ROUNDS=5
LOOPS_LIST=10,60
DURATION=3
OUT=
while getopts "r:n:d:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	n) LOOPS_LIST=$OPTARG ;;
	d) DURATION=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] && [[ $DURATION =~ ^[1-9][0-9]*$ ]] &&
	[[ $LOOPS_LIST =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || usage
LOOPS_LIST=${LOOPS_LIST//,/ }

PERF=${PERF:-perf}
SYSCOUNT=${SYSCOUNT:-/usr/sbin/syscount}
CURL=${CURL:-curl}
SETTLE=0.5	# seconds of churn before the tool starts
# the loops end by themselves after this long, should the script not kill them
CHURN_MAX=$((20 * DURATION + 60))

need_root "latprof, perf and syscount trace every process"
need_tracefs
need_latprof
need_time

# a free port on the loopback for serve: PORT, or one the kernel picks
if [ -z "${PORT:-}" ]; then
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
		2>/dev/null) || PORT=18437
fi
if ss -ltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$PORT\$"; then
	die "port $PORT is in use (set PORT)"
fi

make_tmp
RUNS=$TMP/runs.tsv	# variant loops round wall_s peak_rss_kb after_rss_kb lost map_full cpu_s forks_per_s
: >"$RUNS"
CHURN=
CHURN_JOB=
TPID=
trap 'stop_serve; churn_stop; cleanup' EXIT
trap 'exit 1' INT TERM HUP

VARIANTS="lp"
has "$PERF" perf && VARIANTS="$VARIANTS perf"
has "$SYSCOUNT" syscount && VARIANTS="$VARIANTS syscount"
has "$CURL" serve && VARIANTS="$VARIANTS serve"
VARIANTS=${BENCH_VARIANTS:-$VARIANTS}
for v in $VARIANTS; do
	case $v in
	lp | perf | syscount | serve) ;;
	*) die "unknown variant: $v (lp, perf, syscount, serve)" ;;
	esac
done

# stop_serve: kills the agent if one runs (the exit trap)
stop_serve()
{
	[ -n "$TPID" ] || return 0
	kill -9 "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	TPID=
}

# forks: processes created since boot (/proc/stat)
forks()
{
	awk '$1 == "processes" { print $2 }' /proc/stat
}

# latprof_wait: waits up to 30 s for LATPROF (make replaces it while it builds)
latprof_wait()
{
	local i
	for ((i = 0; i < 300; i++)); do
		[ -x "$LATPROF" ] && return 0
		sleep 0.1
	done
	die "latprof not found: $LATPROF (run make)"
}

# lp_lost PROFILE: "SUM MAP_FULL", the counters latprof report lists under
# "Lost and dropped" (without modules_refused: files, not events) and
# syscall_stats_unattributed_map_full among them; "- -" if the report fails
lp_lost()
{
	"$LATPROF" report "$1" 2>/dev/null | awk '
		/^Lost and dropped/ { on = 1; found = 1; next }
		on && /^[^ ]/ { on = 0 }
		on && NF == 2 && $2 ~ /^[0-9]+$/ {
			s += $2
			if ($1 == "syscall_stats_unattributed_map_full")
				m = $2
		}
		END { print found ? s + 0 " " m + 0 : "- -" }'
}

# perf_lost: the samples perf lost (its per-event LOST_SAMPLES count, lost
# ring buffer records included), "-" if perf report fails
perf_lost()
{
	"$PERF" report --stats -i "$TMP/perf.data" 2>/dev/null | awk '
		/events:/ { found = 1 }
		/ stats:$/ { ev = 1; next }
		ev && /LOST_SAMPLES events:/ { n += $NF }
		END { print found ? n + 0 : "-" }'
}

# serve_pull: starts a fresh latprof serve -a, and when it answers /healthz,
# times one pull of a DURATION s profile to TMP/p.pb.gz; sets WALL, PEAK
# (VmHWM after the pull, kB), AFTER (VmRSS after it) and CPU (the agent's
# CPU during the pull); stops the agent
serve_pull()
{
	local i url=http://127.0.0.1:$PORT code t0 t1 c0 c1 k val rest
	: >"$TMP/tool.err"
	"$LATPROF" serve -q -a --listen "127.0.0.1:$PORT" >/dev/null 2>"$TMP/tool.err" &
	TPID=$!
	for ((i = 0; i < 300; i++)); do
		kill -0 "$TPID" 2>/dev/null || break
		[ "$("$CURL" -s --max-time 1 "$url/healthz" 2>/dev/null)" = ok ] && break
		sleep 0.1
	done
	if [ "$("$CURL" -s --max-time 1 "$url/healthz" 2>/dev/null)" != ok ]; then
		sed 's/^/    /' "$TMP/tool.err" >&2
		die "serve: not answering on $url"
	fi
	c0=$(cpu_s "$TPID")
	t0=$EPOCHREALTIME
	code=$("$CURL" -s -o "$TMP/p.pb.gz" -w '%{http_code}' --max-time $((DURATION + 300)) \
		"$url/debug/pprof/profile?seconds=$DURATION")
	t1=$EPOCHREALTIME
	c1=$(cpu_s "$TPID")
	PEAK=0 AFTER=0
	while read -r k val rest; do
		case $k in
		VmHWM:) PEAK=$val ;;
		VmRSS:) AFTER=$val ;;
		esac
	done 2>/dev/null <"/proc/$TPID/status"
	if [ "$code" != 200 ] || [ ! -s "$TMP/p.pb.gz" ]; then
		sed 's/^/    /' "$TMP/tool.err" >&2
		die "serve: the pull failed (HTTP $code)"
	fi
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	CPU=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", a < 0 || b < 0 ? -1 : b - a }')
	stop_tool serve TERM
}

# run VARIANT ROUND: one run of VARIANT beside LOOPS churn loops; appends to RUNS
run()
{
	local v=$1 r=$2 f0 f1 t1 lost=- full=- after=- u s m
	rm -f "$TMP/x.pb.gz" "$TMP/perf.data" "$TMP/p.pb.gz"
	case $v in
	lp | serve) latprof_wait ;;
	esac
	churn_start "$LOOPS"
	f0=$(forks)
	case $v in
	lp) timed_run lp "$LATPROF" record -a -d "$DURATION" -q -o "$TMP/x.pb.gz" ;;
	perf) timed_run perf "$PERF" record -q -a -g -o "$TMP/perf.data" -- sleep "$DURATION" ;;
	syscount) timed_run syscount "$SYSCOUNT" -L -d "$DURATION" ;;
	serve) LAUNCH=$EPOCHREALTIME; serve_pull ;;
	esac
	t1=$EPOCHREALTIME
	f1=$(forks)
	churn_alive || echo "$BENCH: warning: $v, $LOOPS loops, round $((r + 1)): the churn ended before the tool" >&2
	churn_stop
	case $v in
	serve)
		after=$AFTER
		read -r lost full < <(lp_lost "$TMP/p.pb.gz") ;;
	*)
		read -r _ u s m <"$TMP/time.out"
		WALL=$(awk -v a="$LAUNCH" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		PEAK=$m
		CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		case $v in
		lp)
			[ -s "$TMP/x.pb.gz" ] || die "lp: latprof wrote no profile"
			read -r lost full < <(lp_lost "$TMP/x.pb.gz") ;;
		perf) lost=$(perf_lost) ;;
		esac ;;
	esac
	printf "%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%.0f\n" "$v" "$LOOPS" "$r" "$WALL" "$PEAK" \
		"$after" "$lost" "$full" "$CPU" \
		"$(awk -v a="$f0" -v b="$f1" -v t0="$LAUNCH" -v t1="$t1" 'BEGIN { print (b - a) / (t1 - t0) }')" \
		>>"$RUNS"
}

# latprof's first run on a kernel makes its BTF cache (docs/troubleshooting.md):
# made here, so that every timed run starts as a user's second run does
warm_latprof
for LOOPS in $LOOPS_LIST; do
	run_rounds "$LOOPS churn loops of /bin/sleep 0.01, the tools for $DURATION s"
done

# vstat VARIANT LOOPS COL: "min median max" of column COL of the runs of
# VARIANT with LOOPS, the runs without a value ("-") left out; "- - -" if none
vstat()
{
	awk -F'\t' -v v="$1" -v n="$2" -v c="$3" '$1 == v && $2 == n && $c != "-" { print $c }' \
		"$RUNS" | sort -g | awk '
		{ a[NR] = $1 }
		END {
			if (!NR) { print "- - -"; exit }
			print a[1], NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[NR]
		}'
}

# summary: per LOOPS and variant, min/median/max of the wall time and of the
# peak RSS, the median of the rest; then latprof's and serve's ratios to perf
summary()
{
	local n v
	if [ -n "${CHURN_PY:-}" ]; then
		echo "# no churn: LOOPS processes of $CHURN_PY, each asleep in 50 ms steps, started"
	else
		echo "# churn: LOOPS shell loops, each running /bin/sleep 0.01 back to back, started"
	fi
	echo "#   ${SETTLE} s before the tool and killed after it; $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
	echo "# lp = latprof record -a -d $DURATION -q; perf = perf record -a -g -- sleep $DURATION;"
	echo "#   syscount = syscount -L -d $DURATION; serve = a fresh latprof serve -a, one pull of"
	echo "#   /debug/pprof/profile?seconds=$DURATION"
	echo "# wall = launch to exit (serve: the pull, request to response); past = median wall - $DURATION s"
	echo "# peak = peak RSS, GNU time %M (serve: VmHWM after the pull, start-up included);"
	echo "#   after = serve's RSS right after the pull"
	echo "# lost = the counters of latprof report's \"Lost and dropped\", summed (map_full:"
	echo "#   syscall_stats_unattributed_map_full); perf: lost samples (perf report --stats); syscount: -"
	echo "# cpu = the tool's user+sys (serve: during the pull); forks/s = processes created per"
	echo "#   second on the whole machine during the run (/proc/stat); medians"
	for n in $LOOPS_LIST; do
		echo
		echo "$n loops:"
		for v in $VARIANTS; do
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$v" "$(vstat "$v" "$n" 4)" \
				"$(vstat "$v" "$n" 5)" "$(vstat "$v" "$n" 6 | cut -d' ' -f2)" \
				"$(vstat "$v" "$n" 7 | cut -d' ' -f2)" "$(vstat "$v" "$n" 8 | cut -d' ' -f2)" \
				"$(vstat "$v" "$n" 9 | cut -d' ' -f2)" "$(vstat "$v" "$n" 10 | cut -d' ' -f2)"
		done >"$TMP/sum.tsv"
		printf "%-9s %7s %7s %7s %7s %8s %8s %8s %8s %10s %9s %6s %7s\n" variant wall median max \
			past peak median max after lost map_full cpu "forks"
		printf "%-9s %7s %7s %7s %7s %8s %8s %8s %8s %10s %9s %6s %7s\n" "" min_s _s _s _s min_MB \
			_MB _MB _MB "" "" _s "/s"
		awk -F'\t' -v d="$DURATION" '
			function f(x, fmt) { return x == "-" ? "-" : sprintf(fmt, x) }
			function mb(x) { return x == "-" ? "-" : sprintf("%.1f", x / 1024) }
			{
				split($2, w, " ")
				split($3, p, " ")
				printf "%-9s %7s %7s %7s %7s %8s %8s %8s %8s %10s %9s %6s %7s\n", $1,
					f(w[1], "%.3f"), f(w[2], "%.3f"), f(w[3], "%.3f"),
					w[2] == "-" ? "-" : sprintf("%+.3f", w[2] - d),
					mb(p[1]), mb(p[2]), mb(p[3]), mb($4), f($5, "%.0f"), f($6, "%.0f"),
					f($7, "%.2f"), f($8, "%.0f")
			}' "$TMP/sum.tsv"
		awk -F'\t' -v d="$DURATION" '
			{ split($2, w, " "); split($3, p, " "); wall[$1] = w[2]; peak[$1] = p[2] }
			END {
				if (!("perf" in peak) || peak["perf"] == "-" || peak["perf"] == 0)
					exit
				printf "ratios (medians):"
				if ("lp" in peak)
					printf " latprof/perf peak RSS %.2f, wall %.2f;", peak["lp"] / peak["perf"],
						wall["lp"] / wall["perf"]
				if ("serve" in peak)
					printf " serve pull peak/perf peak RSS %.2f;", peak["serve"] / peak["perf"]
				printf "\n"
			}' "$TMP/sum.tsv" | sed 's/;$//'
	done
}

report "raw runs: variant loops round wall_s peak_rss_kb after_rss_kb lost map_full cpu_s forks_per_s" "$RUNS"
