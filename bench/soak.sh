#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve's memory over many profile pulls on a busy machine (issue "record -a
# on a busy machine": RSS after 1,000 pulls within 10% of after the first).
# One latprof serve -a runs beside N shell loops running /bin/sleep 0.01 back
# to back (bench/churn.sh's churn) while PULLS profiles of SECONDS s each are
# pulled from /debug/pprof/profile, one after another, as Parca or Pyroscope
# would (they pull every 10 s; back to back is the same work, sooner).
#
# Printed: the agent's VmRSS right after pull 1, 10, every 100th and the
# last (each also to stderr as it is taken when PROGRESS=1 is set), its
# VmHWM at the end, and the ratio of the last RSS to the first;
# the pulls that failed (none is expected). Writes only to a temporary
# directory, and to FILE when given -o FILE.
#
# Usage: bench/soak.sh [-p PULLS] [-n LOOPS] [-d SECONDS] [-o FILE]
#        (LATPROF, CURL, PORT and PROGRESS may be set in the environment)

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-p PULLS] [-n LOOPS] [-d SECONDS] [-o FILE]"
PULLS=1000
LOOPS=10
DURATION=1
OUT=
while getopts "p:n:d:o:h" opt; do
	case $opt in
	p) PULLS=$OPTARG ;;
	n) LOOPS=$OPTARG ;;
	d) DURATION=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $PULLS =~ ^[1-9][0-9]*$ ]] && [[ $LOOPS =~ ^[0-9]+$ ]] &&
	[[ $DURATION =~ ^[1-9][0-9]*$ ]] || usage

CURL=${CURL:-curl}
PROGRESS=${PROGRESS:-}
SETTLE=0.5
CHURN_MAX=$((PULLS * (DURATION + 5) + 120))
need_root "serve -a traces every process"
need_tracefs
need_latprof
has "$CURL" curl || die "curl is needed to pull profiles"
if [ -z "${PORT:-}" ]; then
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
		2>/dev/null) || PORT=18438
fi

make_tmp
CHURN=
CHURN_JOB=
TPID=
trap '[ -n "$TPID" ] && kill -9 "$TPID" 2>/dev/null; churn_stop; cleanup' EXIT
trap 'exit 1' INT TERM HUP

# status_kb KEY: KEY (VmRSS:, VmHWM:) of the agent in kB
status_kb()
{
	awk -v k="$1" '$1 == k { print $2 }' "/proc/$TPID/status" 2>/dev/null
}

[ "$LOOPS" -gt 0 ] && churn_start "$LOOPS"
url=http://127.0.0.1:$PORT
"$LATPROF" serve -q -a --listen "127.0.0.1:$PORT" >/dev/null 2>"$TMP/serve.err" &
TPID=$!
for ((i = 0; i < 300; i++)); do
	kill -0 "$TPID" 2>/dev/null || break
	[ "$("$CURL" -s --max-time 1 "$url/healthz" 2>/dev/null)" = ok ] && break
	sleep 0.1
done
[ "$("$CURL" -s --max-time 1 "$url/healthz" 2>/dev/null)" = ok ] ||
	{ sed 's/^/    /' "$TMP/serve.err" >&2; die "serve: not answering on $url"; }

{
	echo "# bench/soak.sh: latprof serve -a beside $LOOPS churn loops, $PULLS pulls of $DURATION s"
	echo "# rss = the agent's VmRSS right after that pull, kB"
	echo "# anon = its RssAnon (private memory: what a leak grows); the rest of the RSS is"
	echo "#   files and shared mappings: libraries, the BPF rings (a ring maps its pages twice)"
	printf "%-8s %10s %8s %10s %8s\n" pull rss_kb "vs 1st" anon_kb "vs 1st"
} >"$TMP/out"
failed=0 first= first_anon= rss= anon= t0=$SECONDS
for ((n = 1; n <= PULLS; n++)); do
	code=$("$CURL" -s -o "$TMP/p.pb.gz" -w '%{http_code}' --max-time $((DURATION + 60)) \
		"$url/debug/pprof/profile?seconds=$DURATION")
	[ "$code" = 200 ] && [ -s "$TMP/p.pb.gz" ] || failed=$((failed + 1))
	kill -0 "$TPID" 2>/dev/null || die "serve exited at pull $n: $(tail -n 3 "$TMP/serve.err")"
	rss=$(status_kb VmRSS:)
	anon=$(status_kb RssAnon:)
	[ -z "$first" ] && first=$rss first_anon=$anon
	case $n in
	1 | 10 | *00 | "$PULLS")
		printf "%-8s %10s %8.3f %10s %8.3f\n" "$n" "$rss" "$(awk -v a="$rss" -v b="$first" 'BEGIN { print a / b }')" \
			"$anon" "$(awk -v a="$anon" -v b="$first_anon" 'BEGIN { print a / b }')" \
			>>"$TMP/out"
		[ -n "$PROGRESS" ] && tail -n 1 "$TMP/out" >&2 ;;
	esac
done
{
	echo "# peak (VmHWM) $(status_kb VmHWM:) kB; $failed of $PULLS pulls failed; $((SECONDS - t0)) s"
	echo "# last/first RSS $(awk -v a="$rss" -v b="$first" 'BEGIN { printf "%.3f", a / b }')"
	echo "# last/first RssAnon $(awk -v a="$anon" -v b="$first_anon" 'BEGIN { printf "%.3f", a / b }')"
} >>"$TMP/out"
cat "$TMP/out"
[ -n "$OUT" ] && cp "$TMP/out" "$OUT"
exit 0
