#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What `latprof serve` with its defaults costs beside the model server under
# load (issue 30: "latprof's own CPU as a share of one core, on the model
# server under load"; bench/nginx_throughput.sh has the nginx rows). The
# FastAPI example (examples/model_server: app.py and its backend, Debian's
# python3) serves load.py's REQUESTS GETs of /predict at concurrency 4 while
# one of these runs:
#
#   base        no tool
#   serve       `latprof serve` (every process, syscalls and CPU: its
#               defaults), started before the load; Prometheus would
#               scrape /metrics (one scrape after the load)
#   serve_pull  the same, and a profile pulled over the load from
#               /debug/pprof/profile?seconds=P, as Parca or Pyroscope pull
#               (their default period is 10 s); P is a calibration run's
#               load time x 1.2 + 1 s, so the pull spans the load
#
# Measured per run: the model server's requests/s (load.py's own count and
# clock), and serve's CPU time (utime + stime, /proc/PID/stat, from before
# the load until the scrape, and the pull's answer, are in) as a share of
# one CPU: over the load's wall time, serve_pull's over the pull's P
# seconds (its profile's building included). Its BPF programs run in the
# profiled processes' context, which /proc does not charge to serve: they
# are timed by the kernel (kernel.bpf_stats_enabled, run_time_ns summed
# over serve's programs, the pull's own included) over the load, in
# PROG_ROUNDS (default 2) more runs of each serve variant, outside the
# timed rounds (the accounting adds two clock reads per program run, so
# that part is a little high).
#
# Every variant runs once per round, in an order rotated each round, beside
# the same server (started once, its model trained once). Writes only to a
# temporary directory, and to FILE when given -o FILE.
#
# Usage: bench/model_own_cpu.sh [-r ROUNDS] [-n REQUESTS] [-o FILE]
#        (LATPROF, PORT (18500), BACKEND_PORT (18501), SERVE_PORT (18502)
#        and PROG_ROUNDS may be set in the environment)
set -u
. "$(dirname "$0")/lib.sh"

ROUNDS=3
ITERS=1500
ITERS_UNIT=REQUESTS
rounds_args "$@"
need_root "serve traces every process, bpf_stats"
need_latprof
has curl "the bench" || die "curl is needed to scrape and pull"
has bpftool "the bench" || die "bpftool is needed for the BPF programs' run time"
PY=/usr/bin/python3
DIR=$ROOT/examples/model_server
PORT=${PORT:-18500}
BACKEND_PORT=${BACKEND_PORT:-18501}
SERVE_PORT=${SERVE_PORT:-18502}
VARIANTS="base serve serve_pull"
"$PY" -c 'import fastapi, uvicorn' 2>/dev/null || die "the model server's packages are missing (make setup)"

make_tmp
SERVERS=()
SPID=
PULL=
stop_all()
{
	local p
	[ -n "$PULL" ] && kill "$PULL" 2>/dev/null && wait "$PULL" 2>/dev/null
	PULL=
	[ -n "$SPID" ] && kill -INT "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	SPID=
	for p in "${SERVERS[@]}"; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SERVERS=()
}
trap 'bpf_stats_off; stop_all; cleanup' EXIT
trap 'exit 1' INT TERM HUP

for p in "$PORT" "$BACKEND_PORT" "$SERVE_PORT"; do
	curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$p/" && die "port $p is in use (set PORT, BACKEND_PORT, SERVE_PORT)"
done
mkdir -p "$TMP/data"
"$PY" "$DIR/backend.py" --port "$BACKEND_PORT" >"$TMP/backend.out" 2>&1 &
SERVERS+=($!)
"$PY" "$DIR/app.py" --port "$PORT" --backend-port "$BACKEND_PORT" --data-dir "$TMP/data" \
	>"$TMP/app.out" 2>&1 &
SERVERS+=($!)
for ((i = 0; i < 240; i++)); do
	curl -sf --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break
	kill -0 "${SERVERS[1]}" 2>/dev/null || die "the model server exited: $(tail -n 3 "$TMP/app.out")"
	sleep 0.25
done
curl -sf --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null || die "the model server did not answer /healthz"
# warm up (the first requests load what the rest reuse), then one load
# alone: the pull's length
"$PY" "$DIR/load.py" --port "$PORT" --path /predict --requests 100 --concurrency 4 >/dev/null ||
	die "load.py failed against the model server"
line=$("$PY" "$DIR/load.py" --port "$PORT" --path /predict --requests "$ITERS" --concurrency 4) ||
	die "load.py failed against the model server"
# with a margin: beside serve the load takes longer (5.6 s against 5.0)
PULL_S=$(sed -n 's/.* wall_s=\([0-9.]*\).*/\1/p' <<<"$line" | awk '{ printf "%d", $1 * 1.2 + 1 }')
[ "${PULL_S:-0}" -ge 1 ] || die "no wall_s in load.py's line: $line"

# start_serve: latprof serve with its defaults, answering /healthz
start_serve()
{
	"$LATPROF" serve -q --listen "127.0.0.1:$SERVE_PORT" >/dev/null 2>"$TMP/serve.err" &
	SPID=$!
	for ((i = 0; i < 300; i++)); do
		kill -0 "$SPID" 2>/dev/null || die "serve exited: $(tail -n 3 "$TMP/serve.err")"
		[ "$(curl -s --max-time 1 "http://127.0.0.1:$SERVE_PORT/healthz")" = ok ] && break
		sleep 0.1
	done
	sleep 1	# attached, its start-up's CPU spent before the measurement
}

# nr_progs PID: the BPF programs PID holds
nr_progs()
{
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { n++ } END { print n + 0 }'
}

# run VARIANT ROUND [STATS]: one load beside VARIANT; appends
# "variant round rps wall_s cpu_s" to TMP/runs.tsv, or with STATS (bpf_stats
# on) "variant round bpf_pct" to TMP/progs.tsv
run()
{
	local v=$1 r=$2 stats=${3:-} c0=0 c1=0 line rps wall bpf_ns span progs i
	[ "$v" = base ] || start_serve
	[ "$v" = base ] || c0=$(cpu_s "$SPID")
	if [ "$v" = serve_pull ]; then
		progs=$(nr_progs "$SPID")
		# with stats, longer: its programs must still be loaded at the last snapshot
		curl -s -o "$TMP/pull.pb.gz" --max-time $((PULL_S + 90)) \
			"http://127.0.0.1:$SERVE_PORT/debug/pprof/profile?seconds=$((PULL_S + ${stats:+5} + 0))" &
		PULL=$!
		# its session attached: its programs' ids are read below
		for ((i = 0; i < 100 && $(nr_progs "$SPID") <= progs; i++)); do
			sleep 0.05
		done
	fi
	[ -n "$stats" ] && prog_snapshot "$TMP/p0.json" "$SPID"
	line=$("$PY" "$DIR/load.py" --port "$PORT" --path /predict --requests "$ITERS" \
		--concurrency 4) || die "$v: load.py failed"
	[ -n "$stats" ] && prog_snapshot "$TMP/p1.json"
	if [ -n "$PULL" ]; then
		wait "$PULL" || die "$v: the profile pull failed"
		PULL=
	fi
	if [ "$v" != base ]; then
		curl -s -o "$TMP/metrics.txt" --max-time 30 "http://127.0.0.1:$SERVE_PORT/metrics" ||
			die "$v: the /metrics scrape failed"
		c1=$(cpu_s "$SPID")
	fi
	rps=$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")
	wall=$(sed -n 's/.* wall_s=\([0-9.]*\).*/\1/p' <<<"$line")
	[ -n "$rps" ] && [ -n "$wall" ] || die "$v: no rps in load.py's line: $line"
	span=$wall
	[ "$v" = serve_pull ] && span=$PULL_S
	if [ -n "$stats" ]; then
		bpf_ns=$(prog_delta "$TMP/p0.json" "$TMP/p1.json" . | awk -F'\t' '{ s += $2 * $3 } END { printf "%.0f", s }')
		printf "%s\t%s\t%s\n" "$v" "$r" "$(awk -v n="$bpf_ns" -v w="$wall" 'BEGIN { printf "%.2f", n / 1e9 / w * 100 }')" \
			>>"$TMP/progs.tsv"
	else
		printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$v" "$r" "$rps" "$wall" \
			"$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" "$span" >>"$TMP/runs.tsv"
	fi
	[ "$v" = base ] || { kill -INT "$SPID"; wait "$SPID"; SPID=; }
}

: >"$TMP/runs.tsv"
: >"$TMP/progs.tsv"
read -r -a vs <<<"$VARIANTS"
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < ${#vs[@]}; k++)); do
		run "${vs[(k + r) % ${#vs[@]}]}" "$r"
	done
done
if bpf_stats_on; then
	for ((r = 0; r < ${PROG_ROUNDS:-2}; r++)); do
		run serve "$r" stats
		run serve_pull "$r" stats
	done
	bpf_stats_off
fi

# mid: the median of the numbers on stdin, one a line (of an even count,
# the mean of the middle two); "-" for none
mid()
{
	sort -g | awk '{ a[NR] = $1 } END {
		if (!NR) print "-"
		else if (NR % 2) print a[(NR + 1) / 2]
		else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# median COLUMN VARIANT FILE
median()
{
	awk -F'\t' -v v="$2" -v c="$1" '$1 == v { print $c }' "$3" | mid
}

{
	echo "# bench/model_own_cpu.sh: latprof serve beside the FastAPI model server, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# load.py: $ITERS GETs of /predict at concurrency 4, $ROUNDS rounds (order rotated); $(nproc) CPUs, $(uname -r)"
	echo "# process = serve's utime+stime until /metrics is scraped (serve_pull: and its ${PULL_S} s pull"
	echo "#   answered), over the load's wall time (serve_pull: over ${PULL_S} s), % of one CPU; bpf = its programs' run time"
	echo "#   (kernel.bpf_stats_enabled, ${PROG_ROUNDS:-2} extra runs), % of one CPU; medians"
	printf "%-11s %9s %9s %9s %9s %9s %9s\n" variant rps "vs base" wall_s process bpf total
	base=$(median 3 base "$TMP/runs.tsv")
	for v in $VARIANTS; do
		rps=$(median 3 "$v" "$TMP/runs.tsv")
		wall=$(median 4 "$v" "$TMP/runs.tsv")
		proc=$(awk -F'\t' -v v="$v" '$1 == v && $6 > 0 { printf "%.2f\n", $5 / $6 * 100 }' \
			"$TMP/runs.tsv" | mid)
		bpf=$(median 3 "$v" "$TMP/progs.tsv")
		[ "$v" = base ] && proc=- bpf=-
		printf "%-11s %9s %9s %9s %9s %9s %9s\n" "$v" "$rps" \
			"$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.3f", a / b }')" "$wall" "${proc:--}" "${bpf:--}" \
			"$(awk -v a="$proc" -v b="$bpf" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "") print "-"; else printf "%.2f", a + b }')"
	done
} >"$TMP/out"
cat "$TMP/out"
[ -n "$OUT" ] && cp "$TMP/out" "$OUT"
exit 0
