#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Soak test of `latprof serve` (issue 8, not CI): the agent watches the whole
# system while a churning workload starts and ends processes (short shells,
# sys_pipe runs, hot_ab bursts) for the whole run; a scraper GETs /metrics
# every second and a puller GETs /debug/pprof/profile?seconds=5 every 10 s.
# Reports the agent's RSS over time, its growth after the warm-up, failed
# scrapes and pulls, the agent's CPU time, and its history's memory
# (latprof_history_memory_bytes, read with each scrape) against its cap.
#
# usage: bench/serve_soak.sh [-d SECONDS] [-w WARMUP_SECONDS] [-F HZ] [-m MB] [-o DIR]
#   -d  duration (default 1800: 30 minutes)
#   -w  warm-up excluded from the growth figure (default 300, at most d/2)
#   -F  the agent's sampling rate (default: serve's)
#   -m  the history's memory cap, --history-max-mb (its look-back: the default 10
#       minutes)
#   -o  keep the logs and rss.csv there (default: a temp dir, printed)
# Needs root, a built latprof (make) and fixtures (make fixtures), curl.
set -u

DURATION=1800
WARMUP=300
OUT=""
AGENT_ARGS=()
while getopts "d:w:F:m:o:" c; do
	case $c in
	d) DURATION=$OPTARG ;;
	w) WARMUP=$OPTARG ;;
	F) AGENT_ARGS+=(-F "$OPTARG") ;;
	m) AGENT_ARGS+=(--history-max-mb "$OPTARG"); CAP_MB=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) sed -n '2,18p' "$0"; exit 2 ;;
	esac
done
[ "$WARMUP" -gt $((DURATION / 2)) ] && WARMUP=$((DURATION / 2))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LATPROF=${LATPROF:-$ROOT/latprof}
FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
OUT=${OUT:-$(mktemp -d /tmp/latprof-soak.XXXXXX)}
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] || { echo "serve_soak: needs root" >&2; exit 2; }
[ -x "$LATPROF" ] && [ -x "$FIXTURES/sys_pipe" ] && [ -x "$FIXTURES/hot_ab" ] ||
	{ echo "serve_soak: build latprof and fixtures first (make && make fixtures)" >&2; exit 2; }

PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
PIDS=""
cleanup()
{
	local p
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	# only these: a bare "wait" would also wait for the agent, still running
	[ -z "$PIDS" ] || wait $PIDS 2>/dev/null
}
trap cleanup EXIT
trap "exit 1" INT TERM

"$LATPROF" serve --listen "127.0.0.1:$PORT" -a "${AGENT_ARGS[@]}" >"$OUT/serve.log" 2>&1 &
AGENT=$!
for ((i = 0; i < 100; i++)); do
	grep -q "serving on" "$OUT/serve.log" && break
	sleep 0.1
done
grep -q "serving on" "$OUT/serve.log" || { cat "$OUT/serve.log"; exit 1; }

# churn: every process lives well under a second; new pids all the time
(
	n=0
	while :; do
		n=$((n + 1))
		sh -c 'for i in 1 2 3; do cat /proc/self/stat >/dev/null; done'
		ls / >/dev/null
		"$FIXTURES/sys_pipe" 3 20 >/dev/null
		[ $((n % 10)) = 0 ] && "$FIXTURES/hot_ab" 0.2 >/dev/null
		sleep 0.05
	done
) &
PIDS="$PIDS $!"

# scraper: one GET /metrics a second
(
	while :; do
		t0=$(date +%s%N)
		c=$(curl -s -o "$OUT/last.metrics" -w '%{http_code}' --max-time 5 "$BASE/metrics")
		h=$(awk '$1 == "latprof_history_memory_bytes" { print $2 }' "$OUT/last.metrics")
		echo "$(date +%s) $c $((($(date +%s%N) - t0) / 1000000)) ${h:-0}"
		sleep 1
	done
) >"$OUT/scrapes.log" &
PIDS="$PIDS $!"

# puller: a 5 s profile every 10 s
(
	while :; do
		c=$(curl -s -o "$OUT/last.pb.gz" -w '%{http_code}' --max-time 30 "$BASE/debug/pprof/profile?seconds=5")
		echo "$(date +%s) $c $(stat -c %s "$OUT/last.pb.gz" 2>/dev/null || echo 0)"
		sleep 5
	done
) >"$OUT/pulls.log" &
PIDS="$PIDS $!"

echo "serve_soak: ${DURATION}s, agent pid $AGENT on $BASE, logs in $OUT"
echo "elapsed_s,rss_kib,cpu_s" >"$OUT/rss.csv"
T0=$(date +%s)
hz=$(getconf CLK_TCK)
while :; do
	el=$(($(date +%s) - T0))
	kill -0 "$AGENT" 2>/dev/null || { echo "serve_soak: the agent died"; exit 1; }
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$AGENT/status)
	cpu=$(awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.1f", ($12 + $13) / hz }' /proc/$AGENT/stat)
	echo "$el,$rss,$cpu" >>"$OUT/rss.csv"
	[ "$el" -ge "$DURATION" ] && break
	sleep 5
done
cleanup
PIDS=""
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?

# RSS swings with each profile's symbolizer (freed when the request ends):
# the agent's own footprint is the floor between pulls, the lowest sample of
# each minute. Growth compares the median floor of the 5 minutes after the
# warm-up with that of the last 5 minutes (or of what the run has).
awk -F, -v w="$WARMUP" 'NR > 1 { m = int($1 / 60); if (!(m in lo) || $2 < lo[m]) lo[m] = $2
		if ($1 >= w && $2 > max) max = $2; cpu = $3; el = $1 }
	function median(from, to,   i, n, v, j, k, t) {
		for (i = from; i < to; i++) if (i in lo) v[++n] = lo[i]
		for (j = 1; j <= n; j++) for (k = j + 1; k <= n; k++) if (v[k] < v[j]) { t = v[j]; v[j] = v[k]; v[k] = t }
		return n ? v[int((n + 1) / 2)] : 0
	}
	END {
		last = int(el / 60); first = int(w / 60); span = (last - first) / 2 < 5 ? int((last - first) / 2) : 5
		if (span < 1) span = 1
		a = median(first, first + span); b = median(last - span, last)
		printf "rss floor (lowest sample of each minute), median of minutes %d..%d: %d KiB, of the last %d: %d KiB, growth %.1f%%; max after warm-up %d KiB\n",
			first, first + span, a, span, b, a ? (b - a) * 100 / a : 0, max
		printf "agent cpu: %.1f s in %d s (%.2f%% of one CPU)\n", cpu, el, el ? cpu * 100 / el : 0
	}' "$OUT/rss.csv"
read -r n bad < <(awk '{ n++; if ($2 != 200) bad++ } END { print n + 0, bad + 0 }' "$OUT/scrapes.log")
read -r p50 pmax < <(awk '{ print $3 }' "$OUT/scrapes.log" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] + 0, v[NR] + 0 }')
echo "scrapes: $n, failed $bad, latency p50 $p50 ms, max $pmax ms"
awk -v cap="${CAP_MB:-64}" '$4 > max { max = $4 } END {
	printf "history memory (latprof_history_memory_bytes): at most %d bytes, cap %d MiB (%.1f%% of it)\n",
		max, cap, max * 100 / (cap * 1048576) }' "$OUT/scrapes.log"
awk '{ n++; if ($2 != 200) bad++ } END { printf "profile pulls: %d, failed %d\n", n, bad }' "$OUT/pulls.log"
echo "agent exit status after SIGTERM: $rc"
echo "rss over time: $OUT/rss.csv"
