#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Start backend.py and one model server, wait for /healthz, send REQUESTS
# requests (default 300) at CONCURRENCY (default 4) to each endpoint with
# load.py, then stop both servers and wait for them, whatever happened.
#
# Usage: examples/model_server/run.sh [fastapi|flask|gunicorn] [REQUESTS] [CONCURRENCY]
# Environment: PORT (8000), BACKEND_PORT (8001), PATHS (the endpoints to
# load, space separated), OUT_DIR (if set, load.py writes per-request
# latencies to OUT_DIR/<endpoint>.lat), PROFILE (if set, the server is
# recorded with "latprof record -p PID --requests --files --net" into that
# file from /healthz until the load is done; LATPROF names the binary,
# default the repo's ./latprof; needs root). Or profile it by hand with
# "latprof record -p PID", PID from the "app" line the server prints.
# PYROOT (if set): the servers run under "chroot PYROOT /usr/bin/python3",
# a Debian root with the example's packages (tests/pyroot/mkroot.sh makes
# one with CPython 3.14, where latprof charges an async endpoint's awaits
# to it), from a copy of this directory in PYROOT/tmp; load.py stays here.
set -euo pipefail

VARIANT=${1:-fastapi}
REQUESTS=${2:-300}
CONCURRENCY=${3:-4}
PORT=${PORT:-8000}
BACKEND_PORT=${BACKEND_PORT:-8001}
PATHS=${PATHS:-/predict /predict_file /predict_remote}
# Debian's interpreter: the packages are installed for it, not for pyenv's.
PY=/usr/bin/python3
DIR=$(cd "$(dirname "$0")" && pwd)
# A data directory of our own: model and feature files, removed at exit.
DATA=$(mktemp -d ${PYROOT:+"$PYROOT"}/tmp/latprof_model_server.XXXXXX)
# The servers' interpreter and directories as they see them (SPY, SDIR, SDATA)
SPY=(/usr/bin/python3)
SDIR=$DIR
SDATA=$DATA
if [ -n "${PYROOT:-}" ]; then
	cp "$DIR"/*.py "$DATA/"
	SPY=(chroot "$PYROOT" /usr/bin/python3)
	SDATA=/tmp/${DATA##*/}
	SDIR=$SDATA
fi
pids=()

# Stop in reverse order of start; "wait" makes sure none outlives us.
cleanup() {
	local i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	rm -rf "$DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Another server already on the port would answer our /healthz and our load.
for p in "$PORT" "$BACKEND_PORT"; do
	if curl -s -o /dev/null "http://127.0.0.1:$p/"; then
		echo "run.sh: port $p is already in use" >&2
		exit 1
	fi
done

"${SPY[@]}" "$SDIR/backend.py" --port "$BACKEND_PORT" &
pids+=($!)
case $VARIANT in
fastapi)
	"${SPY[@]}" "$SDIR/app.py" --port "$PORT" --backend-port "$BACKEND_PORT" \
		--data-dir "$SDATA" &
	;;
flask)
	"${SPY[@]}" "$SDIR/app_flask.py" --port "$PORT" --backend-port "$BACKEND_PORT" \
		--data-dir "$SDATA" &
	;;
gunicorn)
	# One worker process with 4 threads (gthread): a single process to
	# profile, requests spread over its threads.
	BACKEND_PORT=$BACKEND_PORT DATA_DIR=$SDATA "${SPY[@]}" /usr/bin/gunicorn --chdir "$SDIR" -w 1 --threads 4 \
		-b "127.0.0.1:$PORT" --log-level warning 'app_flask:create_app()' &
	;;
*)
	echo "usage: run.sh [fastapi|flask|gunicorn] [REQUESTS] [CONCURRENCY]" >&2
	exit 2
	;;
esac
pids+=($!)

# Training the model takes a few seconds; give up after 60.
for ((i = 0; i < 240; i++)); do
	curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
	kill -0 "${pids[1]}" 2>/dev/null || { echo "run.sh: $VARIANT server exited" >&2; exit 1; }
	sleep 0.25
done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "run.sh: no /healthz" >&2; exit 1; }

[ -n "${OUT_DIR:-}" ] && mkdir -p "$OUT_DIR"
rec=
if [ -n "${PROFILE:-}" ]; then
	# gunicorn's pid is its master; the worker that serves is its child,
	# and record -p follows children only when they fork later: take both.
	targets=$(pgrep -d, -P "${pids[1]}" || true)
	# Its stderr to ours and to a log: the load starts once record says it
	# is recording (attached), or connections accepted before would be
	# unknown to it and their waits left undecided (docs/syscalls.md).
	"${LATPROF:-$DIR/../../latprof}" record -p "${pids[1]}${targets:+,$targets}" \
		--requests --files --net -o "$PROFILE" 2> >(tee "$DATA/record.log" >&2) &
	rec=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^latprof: recording' "$DATA/record.log" 2>/dev/null && break
		kill -0 "$rec" 2>/dev/null || { wait "$rec" || true; echo "run.sh: latprof record failed" >&2; exit 1; }
		sleep 0.05
	done
	grep -q '^latprof: recording' "$DATA/record.log" ||
		{ kill -INT "$rec"; echo "run.sh: latprof record did not attach in 30 s" >&2; exit 1; }
fi
for path in $PATHS; do
	# In the background plus "wait": bash runs the INT/TERM trap at once
	# during "wait", but only after a foreground command has finished.
	$PY "$DIR/load.py" --port "$PORT" --path "$path" --requests "$REQUESTS" \
		--concurrency "$CONCURRENCY" ${OUT_DIR:+--out "$OUT_DIR/${path#/}.lat"} &
	pids+=($!)
	wait $!
	unset 'pids[-1]'
done
if [ -n "$rec" ]; then
	# SIGINT: record stops, symbolizes and writes the complete profile
	kill -INT "$rec"
	wait "$rec"
fi
