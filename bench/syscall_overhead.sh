#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What syscall tracing adds to each syscall of the traced process: latprof
# record --mode syscall against the floor (empty BPF programs on the same
# hooks, build/bench/floor), the clock floor (the same programs reading the
# clock once each, floor --clock: what any tool that times every call adds
# at least), syscount -L, a bpftrace latency histogram,
# perf trace -s and strace -c, on cheap syscalls (build/fixtures/bench_sys:
# getppid() and 1-byte read()s of /dev/zero). See bench/README.md.
#
# Every variant runs once per round, in an order rotated each round. The
# tools attach to the workload's pid; the workload waits on a fifo until the
# tool is attached, then times its own loops. Writes only to a temporary
# directory, and to FILE when given -o FILE.
#
# Usage: bench/syscall_overhead.sh [-r ROUNDS] [-n THOUSAND_CALLS] [-o FILE]
#        (LATPROF, FIXTURES, FLOOR, SYSCOUNT, BPFTRACE, PERF and STRACE may
#        be set in the environment)

set -u
. "$(dirname "$0")/lib.sh"

# Many short rounds, not a few long ones: this host's noise moves whole runs
# (+-30 ns per call from run to run), so the median of the per-round
# differences settles with the number of rounds, not the length of a run:
# 40 rounds of 300 k calls resolved the untraced pid to within a few ns of
# the floor, which 9 rounds of 3000 k could not (docs/performance.md).
ROUNDS=31
ITERS=300
ITERS_UNIT=THOUSAND_CALLS
rounds_args "$@"

FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
FLOOR=${FLOOR:-$ROOT/build/bench/floor}
SYSCOUNT=${SYSCOUNT:-/usr/sbin/syscount}
BPFTRACE=${BPFTRACE:-bpftrace}
PERF=${PERF:-perf}
STRACE=${STRACE:-strace}
WORK=$FIXTURES/bench_sys
CPU=1		# the workload and the tool share it
# perf trace and strace cost tens of microseconds per call: they run
# 1/SLOW_DIV of the calls, which keeps a run near a second
SLOW_DIV=100

need_root "the tools attach BPF programs, perf events and ptrace"
need_tracefs
[ -x "$WORK" ] || die "fixture not found: $WORK (run make fixtures)"
[ -x "$FLOOR" ] || die "floor not found: $FLOOR (run make bench-floor)"
[ "$(nproc)" -gt "$CPU" ] || die "needs at least $((CPU + 1)) CPUs"

make_tmp
RUNS=$TMP/runs.tsv	# variant round calls getppid_ns read_ns tool_cpu_s work_cpu/wall
WPID=
TPID=
SLEEPER=
trap 'for p in $TPID $WPID $SLEEPER; do kill -9 "$p" && wait "$p"; done 2>/dev/null; cleanup' EXIT
mkfifo "$TMP/go" || die "cannot create a fifo in $TMP"
# the target of lp_other: latprof traces it while the workload runs untraced
sleep 1000000 &
SLEEPER=$!

VARIANTS="base floor floor_clock"
has_latprof_syscall syscall "$SLEEPER" && VARIANTS="$VARIANTS lp lp_other"
has "$SYSCOUNT" syscount && VARIANTS="$VARIANTS syscount"
has "$BPFTRACE" bpftrace && VARIANTS="$VARIANTS bpftrace"
has "$PERF" "perf trace" && VARIANTS="$VARIANTS perf_trace"
has "$STRACE" strace && VARIANTS="$VARIANTS strace"
# A/B of two latprof builds: LATPROF_B=path adds the variants lp_b and
# lp_b_other; BENCH_VARIANTS="base floor lp lp_b" runs only those
[ -n "${LATPROF_B:-}" ] && VARIANTS="$VARIANTS lp_b lp_b_other"
VARIANTS=${BENCH_VARIANTS:-$VARIANTS}

# run VARIANT ROUND: one run of the workload under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2 calls=$ITERS i c0 c1
	local -a cmd=()
	case $v in
	perf_trace | strace) calls=$(awk -v n="$ITERS" -v d="$SLOW_DIV" 'BEGIN { print n / d }') ;;
	esac
	: >"$TMP/work.out"	# here, not in the child: no stale "ready"
	taskset -c "$CPU" "$WORK" -w "$TMP/go" "$calls" >>"$TMP/work.out" 2>"$TMP/work.err" &
	WPID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$TMP/work.out" && break
		sleep 0.05
	done
	grep -q ready "$TMP/work.out" || die "$WORK did not start: $(cat "$TMP/work.err")"
	case $v in
	floor) cmd=("$FLOOR") ;;
	floor_clock) cmd=("$FLOOR" --clock) ;;
	lp) cmd=("$LATPROF" record --mode syscall -q -o "$TMP/lp.pb.gz" -p "$WPID") ;;
	lp_other) cmd=("$LATPROF" record --mode syscall -q -o "$TMP/lp.pb.gz" -p "$SLEEPER") ;;
	lp_b) cmd=("$LATPROF_B" record --mode syscall -q -o "$TMP/lp.pb.gz" -p "$WPID") ;;
	lp_b_other) cmd=("$LATPROF_B" record --mode syscall -q -o "$TMP/lp.pb.gz" -p "$SLEEPER") ;;
	syscount) cmd=("$SYSCOUNT" -L -p "$WPID") ;;
	bpftrace) cmd=("$BPFTRACE" -e "
		tracepoint:raw_syscalls:sys_enter /pid == $WPID/ { @start[tid] = nsecs; }
		tracepoint:raw_syscalls:sys_exit /pid == $WPID && @start[tid]/ {
			@usecs[args->id] = hist((nsecs - @start[tid]) / 1000);
			delete(@start[tid]);
		}
		BEGIN { printf(\"attached\\n\"); }") ;;
	perf_trace) cmd=("$PERF" trace -s -p "$WPID") ;;
	strace) cmd=("$STRACE" -c -f -p "$WPID") ;;
	esac
	rm -f "$TMP/lp.pb.gz"
	: >"$TMP/tool.out"
	: >"$TMP/tool.err"
	if [ ${#cmd[@]} -gt 0 ]; then
		taskset -c "$CPU" "${cmd[@]}" >>"$TMP/tool.out" 2>>"$TMP/tool.err" &
		TPID=$!
		case $v in
		floor | floor_clock) wait_attached "$v" "$TPID" "$TMP/tool.out" '^attached' ;;
		bpftrace) wait_attached "$v" "$TPID" "$TMP/tool.out" '^attached' ;;
		strace) wait_attached "$v" "$TPID" "$TMP/tool.err" 'attached' ;;
		*) wait_attached "$v" "$TPID" ;;
		esac
		c0=$(cpu_s "$TPID")
	fi
	[ -n "${PROGS:-}" ] && prog_snapshot "$TMP/progs0.json" "$TPID"
	echo go >"$TMP/go"
	wait "$WPID" || die "$v: $WORK failed: $(cat "$TMP/work.err")"
	WPID=
	if [ -n "${PROGS:-}" ]; then
		prog_snapshot "$TMP/progs1.json"
		prog_delta "$TMP/progs0.json" "$TMP/progs1.json" "$PROG_PATTERN" |
			awk -v v="$v" -v n="$calls" '{ printf "%s\t%s\t%.3f\n", v, $0, $2 / (2000 * n) }' \
			>>"$PROGS"
	fi
	if [ -n "$TPID" ]; then
		c1=$(cpu_s "$TPID")
		stop_tool "$v"
		case $v in
		lp | lp_other | lp_b | lp_b_other) [ -s "$TMP/lp.pb.gz" ] || die "$v: latprof wrote no profile" ;;
		esac
	else
		c0=0 c1=0
	fi
	awk -v v="$v" -v r="$r" -v c0="$c0" -v c1="$c1" '/calls=/ {
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			w[kv[1]] = kv[2]
		}
		# tool cpu -1: the tool exited with the workload (strace), unknown
		printf "%s\t%d\t%d\t%.1f\t%.1f\t%.2f\t%.3f\n", v, r, w["calls"], w["getppid_ns"],
			w["read_ns"], c1 < 0 || c0 < 0 ? -1 : c1 - c0, w["cpu_ns"] / w["wall_ns"]
		found = 1
	}
	END { exit !found }' "$TMP/work.out" >>"$RUNS" || die "$v: the workload printed no result"
}

run_rounds "bench_sys $ITERS k getppid + $ITERS k read (perf trace, strace: 1/$SLOW_DIV)"

# The parts: PROG_ROUNDS (3) more runs of each BPF variant, interleaved, with
# kernel.bpf_stats_enabled, outside the timed rounds (the accounting adds
# two clock reads per program run), giving each program's own ns per run
# (the median of the runs) and runs per workload syscall.
# Programs on the syscall hooks (and latprof's sched_switch) by name:
# latprof's on_sys_* (raw_tp) or on_sys_*_btf (tp_btf), the floor's, syscount's
# and bpftrace's.
PROG_PATTERN='sys_enter|sys_exit|sched_switch|tracepoint_raw'
PROGS_FILE=$TMP/progs.tsv	# variant program runs ns_per_run runs_per_call
: >"$PROGS_FILE"
if bpf_stats_on; then
	trap 'bpf_stats_off; for p in $TPID $WPID $SLEEPER; do kill -9 "$p" && wait "$p"; done 2>/dev/null; cleanup' EXIT
	for ((r = 0; r < ${PROG_ROUNDS:-3}; r++)); do
		for v in $VARIANTS; do
			case $v in
			floor | floor_clock | lp | lp_other | lp_b | lp_b_other | syscount | bpftrace)
				RUNS=$TMP/progs_runs.tsv PROGS=$PROGS_FILE run "$v" "$r" ;;
			esac
		done
	done
	bpf_stats_off
	echo "  per-program pass done" >&2
else
	echo "$BENCH: warning: no kernel.bpf_stats_enabled: no per-program breakdown" >&2
fi

# summary: per variant min/median/max ns per call of both syscalls, the
# median over rounds of the cost added to the same round's base run, its
# ratio to the floor's, and the tool's own CPU per call.
summary()
{
	local v
	echo "# workload: bench_sys, $ITERS k getppid() + $ITERS k read(/dev/zero, 1 byte) per run"
	echo "#   (perf trace, strace: $((ITERS / SLOW_DIV)) k each); $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
	echo "# tools: $("$PERF" version 2>/dev/null), bpftrace $("$BPFTRACE" --version 2>/dev/null |
		awk '{ print $2 }'), $("$STRACE" -V 2>/dev/null | head -1 | awk '{ print "strace " $4 }'),"
	echo "#   syscount (libbpf-tools $(dpkg-query -W -f='${Version}' libbpf-tools 2>/dev/null)), latprof $("$LATPROF" --version 2>/dev/null | awk '{ print $NF }')"
	echo "# workload and tool pinned to CPU $CPU; ns/call = the workload's own mean wall time per call"
	echo "# added = median over rounds of (variant - base of the same round), per call;"
	echo "#   mean = (getppid + read) / 2; x floor = added mean / the floor's added mean"
	echo "# tool_cpu = the tool's own CPU time while the workload ran, per call"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		# the per-round differences to base: round getppid read mean
		awk -F'\t' -v v="$v" '
			$1 == "base" { bg[$2] = $4; br[$2] = $5 }
			$1 == v { vg[$2] = $4; vr[$2] = $5; cpu[$2] = $6 < 0 ? -1 : $6 * 1e9 / (2 * $3) }
			END {
				for (r in vg)
					if (r in bg)
						printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\n", r, vg[r] - bg[r],
							vr[r] - br[r], (vg[r] - bg[r] + vr[r] - br[r]) / 2, cpu[r]
			}' "$RUNS" >"$TMP/d.tsv"
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$v" \
			"$(col_stat "$TMP/v.tsv" 4 min)" "$(col_stat "$TMP/v.tsv" 4 med)" \
			"$(col_stat "$TMP/v.tsv" 4 max)" \
			"$(col_stat "$TMP/v.tsv" 5 min)" "$(col_stat "$TMP/v.tsv" 5 med)" \
			"$(col_stat "$TMP/v.tsv" 5 max)" \
			"$(col_stat "$TMP/d.tsv" 2 med)" "$(col_stat "$TMP/d.tsv" 3 med)" \
			"$(col_stat "$TMP/d.tsv" 4 med)" "$(col_stat "$TMP/d.tsv" 5 med)"
	done >"$TMP/sum.tsv"
	printf "%-13s %25s %25s %23s %8s %8s\n" "" "getppid ns/call" "read ns/call" \
		"added ns/call" "x floor" "tool_cpu"
	printf "%-13s %8s %8s %8s %8s %8s %8s %7s %7s %7s %8s %8s\n" variant min median max \
		min median max getppid read mean "" "ns/call"
	awk -F'\t' '
		$1 == "floor" { fl = $10 }
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				split(line[i], f, "\t")
				if (f[1] == "base")
					printf "%-13s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %7s %7s %7s %8s %8s\n",
						f[1], f[2], f[3], f[4], f[5], f[6], f[7], "-", "-", "-", "-", "-"
				else
					printf "%-13s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %+7.1f %+7.1f %+7.1f %8s %8s\n",
						f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
						(fl > 0 ? sprintf("%.1fx", f[10] / fl) : "-"),
						(f[11] < 0 ? "-" : sprintf("%.1f", f[11]))
			}
		}' "$TMP/sum.tsv"
	echo
	echo "added cost per syscall, mean of getppid and read: median over rounds of the"
	echo "difference to the round's base run (and, for reference, best run - best base run):"
	awk -F'\t' '
		BEGIN {
			label["floor_clock"] = "floor + clock reads"
			label["lp"] = "latprof"
			label["lp_other"] = "latprof, other pid"
			label["lp_b"] = "latprof B (LATPROF_B)"
			label["lp_b_other"] = "latprof B, other pid"
			label["syscount"] = "syscount -L"
			label["perf_trace"] = "perf trace -s"
			label["strace"] = "strace -c"
		}
		{ order[NR] = $1; med[$1] = $10; lo[$1] = ($2 + $5) / 2 }
		END {
			for (i = 1; i <= NR; i++) {
				v = order[i]
				if (v == "base")
					continue
				printf "  %-20s %+8.3f us/call %8s floor", (v in label) ? label[v] : v,
					med[v] / 1000, (med["floor"] > 0 ? sprintf("%.1fx", med[v] / med["floor"]) : "-")
				m = lo[v] - lo["base"]; f = lo["floor"] - lo["base"]
				printf "   (best: %+.3f us/call, %s floor)\n", m / 1000,
					(f > 0 ? sprintf("%.1fx", m / f) : "-")
			}
		}' "$TMP/sum.tsv"
	if [ -s "$PROGS_FILE" ]; then
		echo
		echo "per program (kernel.bpf_stats_enabled, ${PROG_ROUNDS:-3} extra runs each, outside the rounds):"
		echo "the program's own run time (median, min-max of the runs), and its runs per workload syscall"
		printf "  %-13s %-24s %10s %15s %9s\n" variant program "ns/run" "min-max" "runs/call"
		# per variant and program, in the order first seen: the runs' ns sorted
		awk -F'\t' '
			!(($1 SUBSEP $2) in n) { order[++k] = $1 SUBSEP $2 }
			{ i = ++n[$1, $2]; ns[$1, $2, i] = $4; rpc[$1, $2] = $5 }
			END {
				for (j = 1; j <= k; j++) {
					key = order[j]; m = n[key]
					for (a = 1; a <= m; a++) v[a] = ns[key, a]
					for (a = 2; a <= m; a++)
						for (b = a; b > 1 && v[b - 1] > v[b]; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
					med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
					split(key, kv, SUBSEP)
					printf "  %-13s %-24s %10.1f %7.1f-%-7.1f %9.3f\n", kv[1], kv[2], med, v[1], v[m], rpc[key]
				}
			}' "$PROGS_FILE"
	fi
	# Without a tool in user space (all but perf trace and strace) the
	# workload is on CPU for its whole loop; less means something else ran
	# on its CPU, or the host took it away.
	awk -F'\t' '$1 != "perf_trace" && $1 != "strace" && $7 < 0.95 { n++; l = l " " $1 "/" $2 + 1 }
		END {
			if (n)
				printf "\nwarning: %d runs were on CPU for less than 95%% of their loop (something\n" \
					"else ran on CPU '"$CPU"'), variant/round:%s\n", n, l
		}' "$RUNS"
}

report "raw runs: variant round calls getppid_ns read_ns tool_cpu_s work_cpu/wall" "$RUNS"
