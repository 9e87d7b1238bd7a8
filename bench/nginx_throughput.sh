#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What tracing one nginx worker costs in requests per second: latprof record
# --mode cpu,syscall and latprof serve (its default collectors) against the
# floor (empty BPF programs on the syscall hooks, build/bench/floor), the
# clock floor (the same reading the clock once each, floor --clock), syscount -L, a bpftrace latency histogram and
# perf trace -s, with wrk as the load. See bench/README.md.
#
# nginx (one worker, a small static file, config in a temporary directory)
# runs pinned to CPU 1, wrk to CPU 0. Every variant runs once per round, in
# an order rotated each round. Writes only to a temporary directory, and to
# FILE when given -o FILE.
#
# Usage: bench/nginx_throughput.sh [-r ROUNDS] [-d SECONDS] [-o FILE]
#        (LATPROF, FLOOR, NGINX, WRK, SYSCOUNT, BPFTRACE, PERF and PORT may be
#        set in the environment)

set -u
. "$(dirname "$0")/lib.sh"

USAGE="[-r ROUNDS] [-d SECONDS] [-o FILE]"
ROUNDS=7
DURATION=5
OUT=
while getopts "r:d:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	d) DURATION=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] && [[ $DURATION =~ ^[1-9][0-9]*$ ]] || usage

FLOOR=${FLOOR:-$ROOT/build/bench/floor}
NGINX=${NGINX:-/usr/sbin/nginx}
WRK=${WRK:-wrk}
SYSCOUNT=${SYSCOUNT:-/usr/sbin/syscount}
BPFTRACE=${BPFTRACE:-bpftrace}
PERF=${PERF:-perf}
PORT=${PORT:-18431}
SERVER_CPU=1	# nginx and the tools
CLIENT_CPU=0	# wrk
CONNS=50

need_root "the tools attach BPF programs and perf events"
need_tracefs
[ -x "$FLOOR" ] || die "floor not found: $FLOOR (run make bench-floor)"
[ -x "$NGINX" ] || die "nginx not found: $NGINX (apt-get install -y nginx)"
command -v "$WRK" >/dev/null 2>&1 || die "wrk not found (apt-get install -y wrk)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs"
if ss -ltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$PORT\$"; then
	die "port $PORT is in use (set PORT)"
fi

make_tmp
RUNS=$TMP/runs.tsv	# variant round requests_per_s p99_ms tool_cpu_s worker_cpu_s
NGINX_PID=
WORKER=
TPID=
trap 'stop_all 2>/dev/null; cleanup' EXIT

# stop_all: kills the tool, stops nginx (SIGTERM to the master, then SIGKILL
# to the master and the worker if they are still there)
stop_all()
{
	local i
	[ -n "$TPID" ] && kill -9 "$TPID" && wait "$TPID"
	[ -n "$NGINX_PID" ] || return 0
	kill -TERM "$NGINX_PID"
	for ((i = 0; i < 50; i++)); do
		kill -0 "$NGINX_PID" || break
		sleep 0.1
	done
	kill -9 "$NGINX_PID" $WORKER
	wait "$NGINX_PID"
}

# the server: one worker, a 612-byte file, no access log (no disk writes in
# the measurement), runs as root so it reads the 0700 temporary directory
mkdir -p "$TMP/html" "$TMP/logs"
head -c 612 /dev/zero | tr '\0' 'x' >"$TMP/html/index.html"
cat >"$TMP/nginx.conf" <<EOF
worker_processes 1;
user root;
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	server {
		listen 127.0.0.1:$PORT;
		location / { root $TMP/html; }
	}
}
EOF
taskset -c "$SERVER_CPU" "$NGINX" -p "$TMP" -c "$TMP/nginx.conf" -g 'daemon off;' \
	>"$TMP/nginx.out" 2>&1 &
NGINX_PID=$!
for ((i = 0; i < 100; i++)); do
	WORKER=$(pgrep -P "$NGINX_PID" 2>/dev/null | head -1)
	[ -n "$WORKER" ] && break
	sleep 0.05
done
[ -n "$WORKER" ] || { cat "$TMP/nginx.out" "$TMP/logs/error.log" >&2 2>/dev/null; die "nginx did not start"; }
URL=http://127.0.0.1:$PORT/index.html
for ((i = 0; i < 100; i++)); do
	"$WRK" -t1 -c1 -d1s "$URL" >/dev/null 2>&1 && break
	sleep 0.1
done

VARIANTS="base floor floor_clock"
has_latprof_syscall cpu,syscall "$WORKER" && VARIANTS="$VARIANTS lp serve serve_nohist serve_trig"
has "$SYSCOUNT" syscount && VARIANTS="$VARIANTS syscount"
has "$BPFTRACE" bpftrace && VARIANTS="$VARIANTS bpftrace"
has "$PERF" "perf trace" && VARIANTS="$VARIANTS perf_trace"
# A/B of two latprof builds, as in syscall_overhead.sh
[ -n "${LATPROF_B:-}" ] && VARIANTS="$VARIANTS lp_b serve_b"
VARIANTS=${BENCH_VARIANTS:-$VARIANTS}

# run VARIANT ROUND: one wrk run against nginx under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2 c0=0 c1=0 w0 w1
	local -a cmd=()
	case $v in
	floor) cmd=("$FLOOR") ;;
	floor_clock) cmd=("$FLOOR" --clock) ;;
	lp) cmd=("$LATPROF" record --mode cpu,syscall -q -o "$TMP/lp.pb.gz" -p "$WORKER") ;;
	lp_b) cmd=("$LATPROF_B" record --mode cpu,syscall -q -o "$TMP/lp.pb.gz" -p "$WORKER") ;;
	# the agent with its default collectors, on the worker; nothing scrapes it
	serve) cmd=("$LATPROF" serve -q -p "$WORKER" --listen "127.0.0.1:$((PORT + 1))") ;;
	serve_b) cmd=("$LATPROF_B" serve -q -p "$WORKER" --listen "127.0.0.1:$((PORT + 1))") ;;
	# serve as before its history (issue 34), and with a trigger rule checked each window
	serve_nohist) cmd=("$LATPROF" serve -q -p "$WORKER" --listen "127.0.0.1:$((PORT + 1))"
			--history 0) ;;
	serve_trig) cmd=("$LATPROF" serve -q -p "$WORKER" --listen "127.0.0.1:$((PORT + 1))"
			--trigger-dir "$TMP/triggers"
			--trigger name=slow,syscall=writev,p99_ms=100,every_s=600) ;;
	syscount) cmd=("$SYSCOUNT" -L -p "$WORKER") ;;
	bpftrace) cmd=("$BPFTRACE" -e "
		tracepoint:raw_syscalls:sys_enter /pid == $WORKER/ { @start[tid] = nsecs; }
		tracepoint:raw_syscalls:sys_exit /pid == $WORKER && @start[tid]/ {
			@usecs[args->id] = hist((nsecs - @start[tid]) / 1000);
			delete(@start[tid]);
		}
		BEGIN { printf(\"attached\\n\"); }") ;;
	perf_trace) cmd=("$PERF" trace -s -p "$WORKER") ;;
	esac
	rm -f "$TMP/lp.pb.gz"
	: >"$TMP/tool.out"
	: >"$TMP/tool.err"
	if [ ${#cmd[@]} -gt 0 ]; then
		taskset -c "$SERVER_CPU" "${cmd[@]}" >>"$TMP/tool.out" 2>>"$TMP/tool.err" &
		TPID=$!
		case $v in
		floor | floor_clock | bpftrace) wait_attached "$v" "$TPID" "$TMP/tool.out" '^attached' ;;
		*) wait_attached "$v" "$TPID" ;;
		esac
		# the history's recorder attaches a session of its own after the agent's
		case $v in serve | serve_b | serve_trig) sleep 2 ;; esac
		c0=$(cpu_s "$TPID")
	fi
	[ -n "${PROGS:-}" ] && prog_snapshot "$TMP/progs0.json" "$TPID"
	w0=$(cpu_s "$WORKER")
	taskset -c "$CLIENT_CPU" "$WRK" -t1 -c"$CONNS" -d"${DURATION}s" --latency "$URL" \
		>"$TMP/wrk.out" 2>&1 || { cat "$TMP/wrk.out" >&2; die "$v: wrk failed"; }
	w1=$(cpu_s "$WORKER")
	if [ -n "${PROGS:-}" ]; then
		prog_snapshot "$TMP/progs1.json"
		prog_delta "$TMP/progs0.json" "$TMP/progs1.json" . |
			awk -F'\t' -v v="$v" -v r="$r" -v d="$DURATION" '
				{ ns += $2 * $3 }
				END { printf "%s\t%d\t%.3f\n", v, r, ns / (d * 1e9) * 100 }' >>"$PROGS"
	fi
	if [ -n "$TPID" ]; then
		c1=$(cpu_s "$TPID")
		stop_tool "$v"
		if [ "$v" = lp ] && [ ! -s "$TMP/lp.pb.gz" ]; then
			die "lp: latprof wrote no profile"
		fi
	fi
	kill -0 "$WORKER" 2>/dev/null || die "$v: the nginx worker $WORKER is gone"
	awk -v v="$v" -v r="$r" -v c0="$c0" -v c1="$c1" -v w="$(awk -v a="$w0" -v b="$w1" \
		'BEGIN { print b - a }')" '
		function ms(s) {
			if (s ~ /us$/) return s / 1000
			if (s ~ /ms$/) return s + 0
			if (s ~ /s$/) return s * 1000
			return s
		}
		/^ +99%/ { p99 = ms($2) }
		/^ +[0-9]+ requests in/ { reqs = $1 }
		/^Non-2xx/ { bad = $NF }
		/^Requests\/sec:/ { rps = $2 }
		END {
			if (rps == "" || bad > 0)
				exit 1
			printf "%s\t%d\t%.1f\t%.3f\t%.2f\t%.2f\n", v, r, rps, p99,
				c1 < 0 || c0 < 0 ? -1 : c1 - c0, w
		}' "$TMP/wrk.out" >>"$RUNS" || { cat "$TMP/wrk.out" >&2; die "$v: no result from wrk"; }
}

# syscalls_per_request: syscalls of the worker per request, counted with
# perf stat on raw_syscalls:sys_enter during a 2 s wrk run (empty without perf)
syscalls_per_request()
{
	command -v "$PERF" >/dev/null 2>&1 || return
	"$PERF" stat -x, -e raw_syscalls:sys_enter -p "$WORKER" -o "$TMP/stat.out" -- sleep 3 &
	local p=$!
	sleep 0.5
	taskset -c "$CLIENT_CPU" "$WRK" -t1 -c"$CONNS" -d2s "$URL" >"$TMP/wrk0.out" 2>&1
	wait "$p"
	awk -F, '/raw_syscalls:sys_enter/ { n = $1 } END { print n }' "$TMP/stat.out" |
		paste - <(awk '/requests in/ { print $1 }' "$TMP/wrk0.out") |
		awk '$1 > 0 && $2 > 0 { printf "%.1f", $1 / $2 }'
}
SYSC_PER_REQ=$(syscalls_per_request)

run_rounds "wrk -t1 -c$CONNS -d${DURATION}s against nginx (1 worker, pid $WORKER)"

# latprof's own CPU has two parts: its process (tool_cpu above) and its BPF
# programs, which run in the worker's context on every syscall and switch.
# Those are timed by the kernel (kernel.bpf_stats_enabled, the sum of every
# program the tool holds) in PROG_ROUNDS (2) more runs of lp and serve,
# outside the timed rounds: the accounting adds two clock reads per program
# run, so this part is a little high.
PROGS_FILE=$TMP/progs.tsv	# variant round bpf_pct (% of one CPU)
: >"$PROGS_FILE"
if [[ " $VARIANTS " == *" lp "* || " $VARIANTS " == *" serve "* ]] && bpf_stats_on; then
	trap 'bpf_stats_off; stop_all 2>/dev/null; cleanup' EXIT
	for ((r = 0; r < ${PROG_ROUNDS:-2}; r++)); do
		for v in lp serve; do
			[[ " $VARIANTS " == *" $v "* ]] &&
				RUNS=$TMP/progs_runs.tsv PROGS=$PROGS_FILE run "$v" "$r"
		done
	done
	bpf_stats_off
fi

# summary: per variant min/median/max requests/s, the throughput loss (the
# median over rounds of 1 - variant / base of the same round), median p99
# latency and the tool's CPU.
summary()
{
	local v
	echo "# nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///'), 1 worker on CPU $SERVER_CPU, 612-byte static file, keep-alive;"
	echo "#   wrk -t1 -c$CONNS -d${DURATION}s on CPU $CLIENT_CPU; $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
	[ -n "$SYSC_PER_REQ" ] && echo "# the worker makes $SYSC_PER_REQ syscalls per request (perf stat raw_syscalls:sys_enter)"
	echo "# tools (pinned to CPU $SERVER_CPU, with nginx): floor = empty BPF programs on the syscall hooks;"
	echo "#   lp = latprof record --mode cpu,syscall -p WORKER; syscount -L -p; bpftrace per-syscall"
	echo "#   latency histogram (pid filter); perf trace -s -p"
	echo "# loss = median over rounds of 1 - req/s / base req/s of the same round"
	echo "# tool_cpu, nginx_cpu = CPU time of the tool, of the nginx worker during the wrk run,"
	echo "#   as % of one CPU (nginx near 100%: the worker, not wrk, is the bottleneck)"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		awk -F'\t' -v v="$v" -v d="$DURATION" '
			$1 == "base" { b[$2] = $3 }
			$1 == v { x[$2] = $3; cpu[$2] = $5 < 0 ? -1 : $5 / d * 100; w[$2] = $6 / d * 100 }
			END {
				for (r in x)
					if (r in b)
						printf "%d\t%.3f\t%.1f\t%.1f\t%.4f\n", r, (1 - x[r] / b[r]) * 100,
							cpu[r], w[r], 1e6 / x[r] - 1e6 / b[r]
			}' "$RUNS" >"$TMP/d.tsv"
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$v" \
			"$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(col_stat "$TMP/d.tsv" 2 med)" \
			"$(col_stat "$TMP/v.tsv" 4 med)" "$(col_stat "$TMP/d.tsv" 3 med)" \
			"$(col_stat "$TMP/d.tsv" 4 med)" "$(col_stat "$TMP/d.tsv" 5 med)"
	done >"$TMP/sum.tsv"
	printf "%-11s %9s %9s %9s %8s %8s %9s %9s\n" variant "req/s" median max loss p99 tool_cpu \
		nginx_cpu
	printf "%-11s %9s %9s %9s %8s %8s %9s %9s\n" "" min "" "" "%" ms "%" "%"
	awk -F'\t' '
		{
			if ($1 == "base")
				printf "%-11s %9.0f %9.0f %9.0f %8s %8.2f %9s %9.1f\n", $1, $2, $3, $4, "-",
					$6, "-", $8
			else
				printf "%-11s %9.0f %9.0f %9.0f %8.1f %8.2f %9s %9.1f\n", $1, $2, $3, $4, $5,
					$6, ($7 < 0 ? "-" : sprintf("%.1f", $7)), $8
		}' "$TMP/sum.tsv"
	echo
	echo "throughput loss against base (median over rounds); the worker time it adds per"
	echo "request (median over rounds of 1 / req/s - 1 / base req/s of the same round:"
	echo "medians of different rounds moved it by 2x on this host), that against the"
	echo "floor's, and spread over the request's syscalls:"
	awk -F'\t' -v per="$SYSC_PER_REQ" '
		BEGIN {
			label["floor_clock"] = "floor + clock reads"
			label["lp"] = "latprof"
			label["lp_b"] = "latprof B"
			label["serve"] = "latprof serve"
			label["serve_b"] = "latprof serve B"
			label["serve_nohist"] = "serve --history 0"
			label["serve_trig"] = "serve + a trigger"
			label["syscount"] = "syscount -L"
			label["perf_trace"] = "perf trace -s"
		}
		# the worker time added per request (the worker is the bottleneck)
		{ order[NR] = $1; loss[$1] = $5; add[$1] = $9 }
		END {
			for (i = 1; i <= NR; i++) {
				v = order[i]
				if (v == "base")
					continue
				printf "  %-20s %6.1f%% fewer requests/s  %+7.2f us/request", \
					(v in label) ? label[v] : v, loss[v], add[v]
				if (add["floor"] > 0)
					printf " %7.1fx the floor", add[v] / add["floor"]
				if (per > 0)
					printf "  %+7.3f us/syscall", add[v] / per
				printf "\n"
			}
		}' "$TMP/sum.tsv"
	if [ -s "$PROGS_FILE" ]; then
		echo
		echo "own CPU, % of one CPU during the wrk run: the process (its user+sys, the timed"
		echo "rounds), its BPF programs (run time by kernel.bpf_stats_enabled, ${PROG_ROUNDS:-2} extra"
		echo "runs, median) and the total; the programs' time is also in nginx_cpu"
		for v in lp serve; do
			grep -q "^$v	" "$PROGS_FILE" || continue
			awk -F'\t' -v v="$v" -v d="$DURATION" '$1 == v && $5 >= 0 { print $5 / d * 100 }' \
				"$RUNS" | sort -n >"$TMP/own.p"
			awk -F'\t' -v v="$v" '$1 == v { print $3 }' "$PROGS_FILE" | sort -n >"$TMP/own.b"
			[ -s "$TMP/own.p" ] && [ -s "$TMP/own.b" ] || continue
			paste -d' ' <(awk '{ a[NR] = $1 } END { print a[1], a[int((NR + 1) / 2)], a[NR] }' \
				"$TMP/own.p") <(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' "$TMP/own.b") |
				awk -v v="$v" '{ printf "own_cpu %-6s process %5.2f%% (%.2f-%.2f)  bpf %5.2f%%  total %5.2f%% (%.2f-%.2f)\n",
					v, $2, $1, $3, $4, $2 + $4, $1 + $4, $3 + $4 }'
		done
	fi
	# The worker should be busy all the time; below 90% (perf trace
	# aside, which takes a third of the CPU) it was not the bottleneck, or
	# something else ran on its CPU.
	awk -F'\t' -v d="$DURATION" '$1 != "perf_trace" && $6 / d < 0.9 { n++; l = l " " $1 "/" $2 + 1 }
		END {
			if (n)
				printf "\nwarning: in %d runs the nginx worker used less than 90%% of CPU '"$SERVER_CPU"'\n" \
					"(something else ran on it), variant/round:%s\n", n, l
		}' "$RUNS"
}

report "raw runs: variant round requests_per_s p99_ms tool_cpu_s worker_cpu_s" "$RUNS"
