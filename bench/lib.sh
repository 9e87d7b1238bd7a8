# SPDX-License-Identifier: GPL-2.0-only
# What the bench scripts share: paths, argument handling, checks, the
# temporary directory, the interleaved rounds and the final report. Sourced,
# not run: . "$(dirname "$0")/lib.sh" (after set -u).
#
# Sets BENCH (the script's name, the prefix of its messages), ROOT (the
# repository), LATPROF (from the environment, or ROOT/latprof) and TIME.

BENCH=${0##*/}
BENCH=${BENCH%.sh}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LATPROF=${LATPROF:-$ROOT/latprof}
TIME=/usr/bin/time

# usage: prints the script's USAGE to stderr and exits 2
usage()
{
	echo "usage: $0 $USAGE" >&2
	exit 2
}

# die MESSAGE...: prints "BENCH: MESSAGE" to stderr and exits 1
die()
{
	echo "$BENCH: $*" >&2
	exit 1
}

# rounds_args ARGS...: parses [-r ROUNDS] [-n MILLION_ITERS] [-o FILE] into
# ROUNDS (default 5), ITERS (default 1000) and OUT (default none); a script
# may set ROUNDS, ITERS and ITERS_UNIT (for the usage line) before the call
rounds_args()
{
	USAGE="[-r ROUNDS] [-n ${ITERS_UNIT:-MILLION_ITERS}] [-o FILE]"
	ROUNDS=${ROUNDS:-5}
	ITERS=${ITERS:-1000}
	OUT=
	while getopts "r:n:o:h" opt; do
		case $opt in
		r) ROUNDS=$OPTARG ;;
		n) ITERS=$OPTARG ;;
		o) OUT=$OPTARG ;;
		*) usage ;;
		esac
	done
	[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] && [[ $ITERS =~ ^[1-9][0-9]*$ ]] || usage
}

# need_root WHY: dies unless run as root; WHY says what needs it
need_root()
{
	[ "$(id -u)" = 0 ] || die "needs root ($1)"
}

# need_tracefs: mounts tracefs (and debugfs) where the tools look for
# tracepoints, when the machine has not: syscount, perf trace and bpftrace's
# tracepoint probes read the tracepoints' ids and formats there, and fail
# without it ("failed to determine tracepoint ... perf event ID"). latprof
# itself does not need it (tp_btf and raw_tp attach by BTF and name).
need_tracefs()
{
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "$BENCH: warning: cannot mount tracefs: syscount, perf trace and bpftrace may fail" >&2
	[ -d /sys/kernel/debug/tracing ] || mountpoint -q /sys/kernel/debug ||
		mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || true
}

# need_latprof: dies unless LATPROF is an executable
need_latprof()
{
	[ -x "$LATPROF" ] || die "latprof not found: $LATPROF (run make)"
}

# need_time: dies unless GNU time is at TIME
need_time()
{
	[ -x "$TIME" ] || die "GNU time not found at $TIME: apt-get install -y time"
}

# need_unwind: dies unless LATPROF record knows --unwind
need_unwind()
{
	"$LATPROF" record --help 2>&1 | grep -q -- --unwind || die "$LATPROF has no --unwind"
}

# add_perf_variants: appends perf99 and perf999 to VARIANTS if PERF runs,
# else says they are skipped
add_perf_variants()
{
	if command -v "$PERF" >/dev/null 2>&1; then
		VARIANTS="$VARIANTS perf99 perf999"
	else
		echo "$BENCH: $PERF not found, perf variants skipped" >&2
	fi
}

# make_tmp: creates the temporary directory TMP, removed at exit, after
# killing the background process LP if one is set
make_tmp()
{
	TMP=$(mktemp -d /tmp/latprof-bench.XXXXXX)
	LP=
	trap cleanup EXIT
}

# cleanup: the exit trap of make_tmp
cleanup()
{
	[ -n "$LP" ] && kill "$LP" 2>/dev/null && wait "$LP" 2>/dev/null
	rm -rf "$TMP"
}

# timed_run VARIANT CMD...: runs CMD under GNU time, its output to
# TMP/work.out and "%e %U %S %M" to TMP/time.out; LAUNCH is $EPOCHREALTIME
# just before. Dies with CMD's stderr if CMD fails.
timed_run()
{
	local v=$1
	shift
	sync
	LAUNCH=$EPOCHREALTIME
	if ! "$TIME" -o "$TMP/time.out" -f "%e %U %S %M" "$@" >"$TMP/work.out" 2>"$TMP/err"; then
		cat "$TMP/err" >&2
		die "$v: $* failed"
	fi
}

# add_run VARIANT ROUND [POST]: appends to RUNS the line of the last
# timed_run: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb
# from the workload's "key=value" output and GNU time, then the six fields
# of POST ("post_ms post_cpu_s post_rss_kb out_kb samples with_main") when
# given. Dies if the workload printed no result.
add_run()
{
	awk -v v="$1" -v r="$2" -v launch="$LAUNCH" -v post="${3:-}" '
		FILENAME == ARGV[1] {
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				w[kv[1]] = kv[2]
			}
			next
		}
		{ elapsed = $1; cpu_all = $2 + $3; rss = $4 }
		END {
			if (w["wall_ns"] == "")
				exit 1
			# launch is seconds.microseconds: compare in ms, the
			# leading digits cancel well within a double
			startup_ms = w["start_realtime_ns"] / 1e6 - launch * 1e3
			tool = cpu_all - w["cpu_ns"] / 1e9
			printf "%s\t%d\t%.4f\t%.4f\t%.2f\t%.3f\t%.3f\t%d", v, r,
				w["wall_ns"] / 1e9, w["cpu_ns"] / 1e9, startup_ms,
				elapsed, tool, rss
			if (post != "") {
				split(post, p, " ")
				printf "\t%.1f\t%.2f\t%d\t%.1f\t%d\t%d",
					p[1], p[2], p[3], p[4], p[5], p[6]
			}
			printf "\n"
		}' "$TMP/work.out" "$TMP/time.out" >>"$RUNS" || die "$1: the workload printed no result"
}

# run_rounds WORKLOAD: ROUNDS rounds of run VARIANT ROUND over VARIANTS, the
# order rotated by one each round; WORKLOAD describes the workload on stderr
run_rounds()
{
	local -a variants=($VARIANTS)
	local nv=${#variants[@]} r i v order
	echo "$BENCH: $ROUNDS rounds x $nv variants, $1" >&2
	for ((r = 0; r < ROUNDS; r++)); do
		order=""
		for ((i = 0; i < nv; i++)); do
			v=${variants[$(((i + r) % nv))]}
			order="$order $v"
			run "$v" "$r"
		done
		echo "  round $((r + 1))/$ROUNDS:$order" >&2
	done
}

# col_stat FILE COL min|med|max: a statistic of column COL of a TSV file
col_stat()
{
	cut -f"$2" "$1" | sort -g | awk -v s="$3" '
		{ a[NR] = $1 }
		END {
			if (s == "min") print a[1]
			else if (s == "max") print a[NR]
			else print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		}'
}

# report RAW FILE: prints the output of summary; with -o also writes it to
# OUT, then a blank line, the line "# RAW" and FILE
report()
{
	summary | tee "$TMP/summary.txt"
	if [ -n "$OUT" ]; then
		{
			cat "$TMP/summary.txt"
			echo
			echo "# $1"
			cat "$2"
		} >"$OUT" || die "cannot write $OUT"
	fi
}

# Attaching tools to a running workload and stopping them (syscall_overhead.sh,
# nginx_throughput.sh): the tool runs as TPID, logs to $TMP/tool.err.

# has TOOL NAME: true if TOOL runs; else says NAME is skipped
has()
{
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "$BENCH: $1 not found, $2 skipped" >&2
	return 1
}

# warm_latprof: one short recording, then a second for bpftool, in the
# background, to write latprof's kernel BTF cache: the runs that follow
# start as every run after a kernel's first does (docs/troubleshooting.md)
warm_latprof()
{
	[ -x "$LATPROF" ] || return 0
	"$LATPROF" record -q --mode cpu -o "$TMP/warm.pb.gz" -- true >/dev/null 2>&1
	sleep 1
	rm -f "$TMP/warm.pb.gz"
}

# has_latprof_syscall MODE PID: true if LATPROF records --mode MODE -p PID
# (a second's probe); else says why the latprof variants are skipped
has_latprof_syscall()
{
	if [ ! -x "$LATPROF" ]; then
		echo "$BENCH: latprof not found: $LATPROF (run make); latprof variants skipped" >&2
		return 1
	fi
	if ! "$LATPROF" record --help 2>&1 | grep -q -- '--mode'; then
		echo "$BENCH: $LATPROF has no --mode; latprof variants skipped" >&2
		return 1
	fi
	if ! "$LATPROF" record --mode "$1" -q -d 1 -o "$TMP/probe.pb.gz" \
		-p "$2" >"$TMP/probe.out" 2>&1; then
		echo "$BENCH: latprof record --mode $1 -p PID failed; latprof variants skipped:" >&2
		sed 's/^/    /' "$TMP/probe.out" >&2
		return 1
	fi
}

# tool_fds PID: how many BPF links and perf events PID holds
tool_fds()
{
	local f n=0
	for f in /proc/"$1"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in
		*bpf_link* | *bpf-link* | *perf_event*) n=$((n + 1)) ;;
		esac
	done
	echo "$n"
}

# idle_state PID: "STATE TICKS" of PID: its state letter and its CPU time
# (utime + stime, all threads) in clock ticks
idle_state()
{
	awk '{ sub(/^.*\) /, ""); print $1, $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}

# wait_attached NAME PID [FILE PATTERN]: waits until the tool PID is attached,
# then 0.2 s more to settle; dies if PID exits first or after 30 s. With FILE,
# attached means PATTERN appeared in FILE. Without, it means: the tool holds
# BPF links or perf events, and for the last 0.3 s their number has not
# changed, the tool has been asleep at every look and has used at most one
# clock tick of CPU (perf trace opens its events before it is done setting
# up; on a busy CPU that can take a while).
wait_attached()
{
	local name=$1 pid=$2 file=${3:-} pat=${4:-} i n st ticks last=-1 t0=-1 same=0
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		if [ -n "$file" ]; then
			grep -q -- "$pat" "$file" && { sleep 0.2; return; }
		else
			n=$(tool_fds "$pid")
			read -r st ticks < <(idle_state "$pid")
			if [ "$n" -gt 0 ] && [ "$n" = "$last" ] && [ "$st" = S ] &&
				[ $((ticks - t0)) -le 1 ]; then
				same=$((same + 1))
				[ "$same" -ge 3 ] && { sleep 0.2; return; }
			else
				same=0
				t0=${ticks:-0}
			fi
			last=$n
		fi
		sleep 0.1
	done
	cat "$TMP/tool.err" >&2
	die "$name: not attached (pid $pid $(kill -0 "$pid" 2>/dev/null && echo "still running" || echo "exited"))"
}

# cpu_s PID: utime + stime of PID in seconds, -1 once it is gone
cpu_s()
{
	[ -r "/proc/$1/stat" ] || { echo -1; return; }
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo -1
}

# stop_tool NAME [SIGNAL]: SIGNAL (default INT) to the tool unless it has
# exited by itself; waits up to 60 s, then kills it and warns on stderr (the
# run's measurement, taken before, is kept: a tool that hangs on its way out,
# as bpftrace 0.17 once did here on a heavily loaded machine, does not lose
# the whole benchmark). Dies if the tool failed.
stop_tool()
{
	local name=$1 sig=${2:-INT} i rc
	[ -n "$TPID" ] || return 0
	for ((i = 0; i < 10; i++)); do
		kill -0 "$TPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -"$sig" "$TPID" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$TPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$TPID" 2>/dev/null; then
		kill -9 "$TPID"
		wait "$TPID" 2>/dev/null
		TPID=
		echo "$BENCH: warning: $name still running 60 s after SIG$sig, killed (the run is kept)" >&2
		return 0
	fi
	wait "$TPID"
	rc=$?
	TPID=
	if [ "$rc" != 0 ]; then
		sed 's/^/    /' "$TMP/tool.err" >&2
		die "$name: exited with status $rc"
	fi
}

# BPF program run time, kernel.bpf_stats_enabled (run_time_ns, run_cnt per
# program): what each program of a tool costs per run, measured by the
# kernel around the program alone, so host noise outside it does not count.
# bpf_stats_on / bpf_stats_off switch the accounting (it costs two clock
# reads per program run: never on during the timed rounds); prog_snapshot
# FILE [PID] saves every program's counters, and with PID the ids of the
# programs that process holds (its fds' prog_id, in FILE.ids: another BPF
# tool on the machine does not count); prog_delta A B PATTERN prints, for
# each program of A's ids whose name matches the regexp PATTERN,
# "name<TAB>runs<TAB>ns per run" between the snapshots. The ids are read
# at the first snapshot: latprof -p exits with its target.
BPF_STATS_OLD=
bpf_stats_on()
{
	BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) || return 1
	sysctl -qw kernel.bpf_stats_enabled=1
}

bpf_stats_off()
{
	[ -n "$BPF_STATS_OLD" ] && sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_OLD"
	BPF_STATS_OLD=
}

prog_snapshot()
{
	bpftool -j prog show >"$1" 2>/dev/null
	[ -z "${2:-}" ] || cat /proc/"$2"/fdinfo/* 2>/dev/null |
		awk '/^prog_id:/ { print $2 }' | sort -u >"$1.ids"
}

prog_delta()
{
	python3 - "$1" "$2" "$3" <<'PY'
import json, re, sys
try:
    with open(sys.argv[1] + ".ids") as f:
        ids = {int(line) for line in f if line.strip()}
except OSError:
    ids = set()
def load(path):
    try:
        with open(path) as f:
            return {p["id"]: p for p in json.load(f)}
    except (OSError, ValueError):
        return {}
a, b = load(sys.argv[1]), load(sys.argv[2])
for pid, p in sorted(b.items()):
    name = p.get("name", "")
    if pid not in ids or not re.search(sys.argv[3], name):
        continue
    q = a.get(pid, {})
    runs = p.get("run_cnt", 0) - q.get("run_cnt", 0)
    ns = p.get("run_time_ns", 0) - q.get("run_time_ns", 0)
    if runs > 0:
        print("%s\t%d\t%.1f" % (name, runs, ns / runs))
PY
}

# churn_start LOOPS: LOOPS shell loops running /bin/sleep 0.01 back to back,
# in a session and process group of their own, led by CHURN (CHURN_JOB: the
# job), ending by themselves after CHURN_MAX s; then SETTLE s. Needs TMP.
# With CHURN_PY=INTERPRETER, LOOPS long-lived Python processes instead, each
# waking every 50 ms (idle-ish services: many processes, no churn).
churn_start()
{
	local i CHURN_PY=${CHURN_PY:-}
	rm -f "$TMP/churn.pid"
	setsid bash -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1"
		end=$((SECONDS + $3))
		for ((i = 0; i < $2; i++)); do
			if [ -n "$4" ]; then
				"$4" -c "import time
end = time.time() + $3
while time.time() < end:
    time.sleep(0.05)" &
			else
				( while [ $SECONDS -lt $end ]; do /bin/sleep 0.01; done ) &
			fi
		done
		wait' churn "$TMP/churn.pid" "$1" "$CHURN_MAX" "${CHURN_PY:-}" </dev/null >/dev/null 2>&1 &
	CHURN_JOB=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/churn.pid" ] && break
		sleep 0.02
	done
	CHURN=$(cat "$TMP/churn.pid" 2>/dev/null)
	[ -n "$CHURN" ] || die "the churn did not start"
	# the interpreters take a while to start, all of them on 2 CPUs
	# (each counted once it runs the interpreter: pgrep -x by its name)
	for ((i = 0; i < 500 && ${#CHURN_PY} > 0; i++)); do
		[ "$(pgrep -g "$CHURN" -c -x "$(basename "$CHURN_PY" | cut -c1-15)")" -ge "$1" ] && break
		sleep 0.02
	done
	sleep "$SETTLE"
}

# churn_alive: true while the churn's loops run
churn_alive()
{
	[ -n "$CHURN" ] && pgrep -g "$CHURN" -x bash >/dev/null
}

# churn_stop: kills the churn's process group, waits until it is empty
# (a sleep left behind ends within 10 ms), SIGKILL after 2 s
churn_stop()
{
	local i
	[ -n "$CHURN" ] || return 0
	kill -TERM -- -"$CHURN" 2>/dev/null
	for ((i = 0; i < 40; i++)); do
		pgrep -g "$CHURN" >/dev/null || break
		sleep 0.05
	done
	kill -KILL -- -"$CHURN" 2>/dev/null
	wait "$CHURN_JOB" 2>/dev/null
	CHURN=
}
