#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What walking CPython frames costs the profiled Python program: latprof
# record with Python frames (the default) against --no-python and against no
# profiler, on two pure-Python workloads: a CPU loop under a 20-deep chain of
# Python calls, sampled at 999 Hz (--mode cpu), and a loop of cheap syscalls
# (os.getppid() and 1-byte os.read() of /dev/zero, --mode cpu,syscall), and
# on 3.14+ an asyncio echo over loopback (100 client tasks and the server's
# 100, N/10 thousand round trips in all, --mode cpu,syscall), where "off" is
# --await-hz 0 (no walk of the tasks) instead of --no-python. Each
# runs with Debian's /usr/bin/python3.11, pyenv's 3.12 when there is one, and
# Debian testing's stripped python3.15 in the container-like root of
# tests/pyroot/mkroot.sh (`chroot ROOT python3.15`, as a user runs one; the
# root is not made here: without it the 3.15 rows are skipped). The
# number compared is the loop's own wall time, measured inside Python with
# time.perf_counter_ns (not the profiler's run time, which includes
# symbolization). See bench/README.md.
#
# Every variant runs once per round, in an order rotated each round. Then,
# when bpftool is there, the BPF program's own cost: kernel.bpf_stats_enabled
# for a few more runs of the CPU loop, run_time_ns / run_cnt of on_cpu_sample
# with and without Python frames (restored afterwards). Writes only to a
# temporary directory, and to FILE when given -o FILE.
#
# Usage: bench/python_overhead.sh [-r ROUNDS] [-n THOUSANDS] [-o FILE]
#        -n: the CPU loop calls its chain N thousand times (default 400, ~2.5 s
#        here), the syscall loop makes 6 x N thousand syscalls (~4 s)
#        (LATPROF, PYTHONS="PATH..." and BPFTOOL may be set in the environment;
#        in PYTHONS, ROOT:PATH runs PATH under chroot ROOT, the workload copied
#        into ROOT/tmp; PYROOT is the root of the default python3.15, default
#        /var/cache/latprof/pyroot/root;
#        BENCH_VARIANTS="cpu311_on cpu311_off ..." runs only the variants named;
#        STATS_ROUNDS=0 skips the bpf_stats runs)

set -u
. "$(dirname "$0")/lib.sh"

ROUNDS=7
ITERS=400
ITERS_UNIT=THOUSANDS
rounds_args "$@"

BPFTOOL=${BPFTOOL:-bpftool}
STATS_ROUNDS=${STATS_ROUNDS:-3}
FREQ=999	# the CPU loop's sampling frequency

need_root "latprof needs CAP_BPF/CAP_PERFMON"
need_latprof
need_time
"$LATPROF" record --help 2>&1 | grep -q -- --no-python || die "$LATPROF has no --no-python"
[[ $STATS_ROUNDS =~ ^[0-9]+$ ]] || die "STATS_ROUNDS: want a number"

# The interpreters: Debian's 3.11, pyenv's 3.12 when there is one, and
# python3.15 in PYROOT (ROOT:PATH, run as chroot ROOT PATH). The root takes a
# debootstrap (about a minute, 120 MB downloaded): made by make setup or
# tests/pyroot/mkroot.sh, never here; without it the 3.15 rows are skipped.
PYROOT=${PYROOT:-/var/cache/latprof/pyroot/root}
if [ -z "${PYTHONS:-}" ]; then
	PYTHONS=/usr/bin/python3.11
	if command -v pyenv >/dev/null 2>&1; then
		for p in "$(pyenv root)"/versions/3.12*/bin/python3.12; do
			[ -x "$p" ] && { PYTHONS="$PYTHONS $p"; break; }
		done
	fi
	if [ -x "$PYROOT/usr/bin/python3.15" ]; then
		PYTHONS="$PYTHONS $PYROOT:/usr/bin/python3.15"
	else
		echo "$BENCH: warning: no python3.15 in $PYROOT (make it with" \
			"tests/pyroot/mkroot.sh $(dirname "$PYROOT")), python3.15 skipped" >&2
	fi
fi
declare -A PY		# version tag (311) -> interpreter
declare -A PYROOTS	# version tag -> the root it runs in under chroot, or none
VARIANTS=
for p in $PYTHONS; do
	r=
	case $p in
	*:*) r=${p%%:*} p=${p#*:} ;;
	esac
	[ -x "$r$p" ] || die "python not found: $r$p"
	tag=$(${r:+chroot "$r"} "$p" -c 'import sys; print("%d%d" % sys.version_info[:2])') ||
		die "${r:+chroot $r }$p does not run"
	PY[$tag]=$p
	PYROOTS[$tag]=$r
	VARIANTS="$VARIANTS cpu${tag}_base cpu${tag}_on cpu${tag}_off sys${tag}_base sys${tag}_on sys${tag}_off"
	# await attribution walks asyncio's tasks of 3.14+ only
	[ "$tag" -ge 314 ] && VARIANTS="$VARIANTS aio${tag}_base aio${tag}_on aio${tag}_off"
done
VARIANTS=${BENCH_VARIANTS:-$VARIANTS}
for v in $VARIANTS; do
	[[ $v =~ ^(cpu|sys|aio)([0-9]+)_(base|on|off)$ ]] && [ -n "${PY[${BASH_REMATCH[2]}]:-}" ] ||
		die "unknown variant: $v"
done

make_tmp
# variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb post_ms
# post_cpu_s post_rss_kb out_kb samples walked named loop_cpu_s
RUNS=$TMP/runs.tsv
: >"$RUNS"
STATS=$TMP/stats.tsv	# python round on|off run_time_ns run_cnt samples walked wall_s
: >"$STATS"
STATS_OLD=
ROOT_TMPS=()	# the workload's directories inside the roots
trap '[ -n "$STATS_OLD" ] && sysctl -q kernel.bpf_stats_enabled="$STATS_OLD"
	rm -rf ${ROOT_TMPS[@]+"${ROOT_TMPS[@]}"}; cleanup' EXIT

# The workload: MODE cpu or sys, N thousand; prints its own numbers in the
# key=value form of add_run (lib.sh), plus the loop's CPU time (loop_cpu_ns).
# With a third argument, a fifo, it then waits until something is written to
# it (the bpf_stats runs read the program's counters while the profiler is
# still attached).
W=$TMP/py_bench.py
cat >"$W" <<'EOF'
import os
import sys
import time

start_realtime_ns = time.time_ns()


def leaf(n):
    acc = 0
    for i in range(n):
        acc = (acc * 31 + i) % 1000003
    return acc


def chain(depth, n):
    if depth:
        return chain(depth - 1, n)
    return leaf(n)


def cpu_loop(k):
    for _ in range(k):
        chain(20, 100)


def sys_loop(k):
    fd = os.open("/dev/zero", os.O_RDONLY)
    for _ in range(k // 2):
        os.getppid()
        os.read(fd, 1)
    os.close(fd)


def aio_loop(k):
    import asyncio

    async def echo(reader, writer):
        while line := await reader.readline():
            writer.write(line)
            await writer.drain()
        writer.close()

    async def client(port, n):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(n):
            writer.write(b"x\n")
            await writer.drain()
            await reader.readline()
        writer.close()
        await writer.wait_closed()

    async def run():
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        await asyncio.gather(*(client(port, k // 100) for _ in range(100)))
        server.close()

    asyncio.run(run())


def main():
    mode, k = sys.argv[1], int(sys.argv[2]) * 1000
    loop = {"cpu": cpu_loop, "sys": sys_loop, "aio": aio_loop}[mode]
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    loop({"cpu": k, "sys": 6 * k, "aio": k // 10}[mode])
    wall_ns = time.perf_counter_ns() - t0
    loop_cpu_ns = time.process_time_ns() - c0
    print("start_realtime_ns=%d wall_ns=%d cpu_ns=%d loop_cpu_ns=%d" %
          (start_realtime_ns, wall_ns, time.process_time_ns(), loop_cpu_ns), flush=True)
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            f.read()


main()
EOF

# The workload of an interpreter in a root is copied into ROOT/tmp, where
# only the chrooted interpreter sees it (its bpf_stats fifo goes there too).
# Per version tag: WDIR, the workload's directory; WIN, the same directory
# as the interpreter sees it.
declare -A WDIR WIN
for tag in "${!PY[@]}"; do
	r=${PYROOTS[$tag]}
	if [ -z "$r" ]; then
		WDIR[$tag]=$TMP WIN[$tag]=$TMP
		continue
	fi
	d=$(mktemp -d "$r/tmp/latprof-bench.XXXXXX") || die "cannot create a directory in $r/tmp"
	ROOT_TMPS+=("$d")
	cp "$W" "$d/" || die "cannot copy the workload into $d"
	WDIR[$tag]=$d WIN[$tag]=/tmp/${d##*/}
done

# py_name TAG: the interpreter of TAG as the command runs it
py_name()
{
	echo "${PYROOTS[$1]:+chroot ${PYROOTS[$1]} }${PY[$1]}"
}

# cmd_of VARIANT [FIFO]: sets CMD to the command line of VARIANT; FIFO is
# a path as the interpreter sees it
cmd_of()
{
	local v=$1 work tag
	local -a lp=() py=()
	[[ $v =~ ^(cpu|sys|aio)([0-9]+)_(base|on|off)$ ]]
	work=${BASH_REMATCH[1]} tag=${BASH_REMATCH[2]}
	# chroot(8) execs the interpreter: the workload is still the process
	# latprof starts, with the interpreter's comm
	[ -n "${PYROOTS[$tag]}" ] && py=(chroot "${PYROOTS[$tag]}")
	py+=("${PY[$tag]}")
	case $work in
	cpu) lp=("$LATPROF" record -F "$FREQ" --mode cpu -q -o "$TMP/lp.pb.gz") ;;
	sys | aio) lp=("$LATPROF" record --mode cpu,syscall -q -o "$TMP/lp.pb.gz") ;;
	esac
	case $v in
	*_base) lp=() ;;
	aio*_off) lp+=(--await-hz 0) ;;
	*_off) lp+=(--no-python) ;;
	esac
	CMD=(${lp[@]+"${lp[@]}"} ${lp[@]+--} "${py[@]}" -E -s "${WIN[$tag]}/${W##*/}" "$work" "$ITERS"
		${2:+"$2"})
}

# stacks: after a profiled run, times latprof export --format folded and
# counts the workload's samples, the samples whose Python frames were walked
# (latprof report's "walked") and those with a frame of py_bench.py (named:
# a code object latprof could not read shows as [unknown]). Prints
# "post_ms post_cpu_s post_rss_kb out_kb samples walked named".
stacks()
{
	local t0 t1 walked
	t0=$EPOCHREALTIME
	"$TIME" -o "$TMP/post.time" -f "%U %S %M" "$LATPROF" export "$TMP/lp.pb.gz" \
		--format folded -o "$TMP/stacks.txt" || die "latprof export failed"
	t1=$EPOCHREALTIME
	awk -v kb="$(stat -c %s "$TMP/lp.pb.gz")" -v t0="$t0" -v t1="$t1" \
		'END { printf "%.1f %.2f %d %.1f ", (t1 - t0) * 1e3, $1 + $2, $3, kb / 1024 }' \
		"$TMP/post.time"
	"$LATPROF" report --no-color "$TMP/lp.pb.gz" >"$TMP/report.txt" 2>&1 ||
		die "latprof report failed"
	walked=$(awk '/^Python/ { on = 1 } on && /walked [0-9]+/ {
			sub(/.*walked /, ""); n += $1 + 0 }
		END { print n + 0 }' "$TMP/report.txt")
	# folded: "comm;root;...;leaf COUNT"; a Python frame reads "leaf (py_bench.py)"
	awk -v walked="$walked" '
		{
			i = length($0)
			while (i > 0 && substr($0, i, 1) != " ")
				i--
			if ($0 !~ /^python/)
				next
			cnt = substr($0, i + 1)
			total += cnt
			if (index($0, " (py_bench.py)"))
				hit += cnt
		}
		END { print total + 0, walked, hit + 0 }' "$TMP/stacks.txt"
}

# run VARIANT ROUND: one run of the workload under VARIANT; appends to RUNS.
run()
{
	local v=$1 r=$2 post="0 0 0 0 0 0 0"
	cmd_of "$v"
	rm -f "$TMP/lp.pb.gz" "$TMP/stacks.txt"
	timed_run "$v" "${CMD[@]}"
	case $v in
	*_base) ;;
	*) [ -s "$TMP/lp.pb.gz" ] || die "$v: latprof wrote no profile"
	   post=$(stacks) ;;
	esac
	add_run "$v" "$r" "${post% *}"
	# the last columns: samples with a frame of py_bench.py, the loop's CPU time
	sed -i "\$ s/\$/\t${post##* }\t$(sed -n 's/.*loop_cpu_ns=\([0-9]*\).*/\1/p' "$TMP/work.out" |
		awk '{ printf "%.4f", $1 / 1e9 }')/" "$RUNS"
}

# prog_stats PID NAME: "run_time_ns run_cnt" of the BPF program NAME that
# process PID holds (its fds' prog_id: this bpftool may not list pids)
prog_stats()
{
	local ids
	ids=$(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u |
		paste -sd, -)
	"$BPFTOOL" prog show -j 2>/dev/null | jq -r --arg n "$2" "[.[] | select(.name == \$n and
		(.id | IN(${ids:-0})))][0] | \"\\(.run_time_ns // 0) \\(.run_cnt // 0)\""
}

# stats_run TAG on|off ROUND: the CPU loop under latprof with bpf_stats on;
# once the loop is done (and the profiler still attached), reads the counters
# of on_cpu_sample; appends to STATS. Returns 1 if bpftool showed none.
stats_run()
{
	local tag=$1 mode=$2 r=$3 i st
	rm -f "$TMP/lp.pb.gz" "${WDIR[$tag]}/hold"
	mkfifo "${WDIR[$tag]}/hold" || die "cannot create a fifo in ${WDIR[$tag]}"
	cmd_of "cpu${tag}_$mode" "${WIN[$tag]}/hold"
	: >"$TMP/work.out"
	"${CMD[@]}" >"$TMP/work.out" 2>"$TMP/err" &
	LP=$!
	for ((i = 0; i < 600; i++)); do
		grep -q wall_ns= "$TMP/work.out" && break
		kill -0 "$LP" 2>/dev/null || break
		sleep 0.05
	done
	st=$(prog_stats "$LP" on_cpu_sample)
	# blocks until the workload opens the fifo: bounded, in case it died
	timeout 30 sh -c 'echo >"$1"' sh "${WDIR[$tag]}/hold"
	wait "$LP" || { cat "$TMP/err" >&2; die "stats: ${CMD[*]} failed"; }
	LP=
	grep -q wall_ns= "$TMP/work.out" || die "stats: the workload printed no result"
	if [ -z "$st" ] || [ "${st#* }" = 0 ]; then
		echo "$BENCH: warning: no run_cnt for on_cpu_sample in $BPFTOOL prog show, per-sample cost skipped" >&2
		return 1
	fi
	printf "%s\t%d\t%s\t%s\t%s\t%s\n" "$tag" "$r" "$mode" "${st% *}" "${st#* }" \
		"$(stacks | awk '{ print $5 "\t" $6 }')	$(sed 's/.*wall_ns=\([0-9]*\).*/\1/' "$TMP/work.out" |
			awk '{ printf "%.4f", $1 / 1e9 }')" >>"$STATS"
}

# stats_rounds: STATS_ROUNDS rounds of stats_run, every interpreter on and off
stats_rounds()
{
	local r tag
	if [ "$STATS_ROUNDS" = 0 ] || ! command -v "$BPFTOOL" >/dev/null 2>&1 ||
		! command -v jq >/dev/null 2>&1; then
		echo "$BENCH: bpftool or jq not found (or STATS_ROUNDS=0), per-sample cost skipped" >&2
		return
	fi
	STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled) || return
	sysctl -q kernel.bpf_stats_enabled=1 || die "cannot set kernel.bpf_stats_enabled"
	echo "$BENCH: $STATS_ROUNDS rounds with kernel.bpf_stats_enabled=1" >&2
	for ((r = 0; r < STATS_ROUNDS; r++)); do
		for tag in $(printf "%s\n" "${!PY[@]}" | sort); do
			# the order alternates between rounds
			if ((r % 2)); then
				stats_run "$tag" off "$r" && stats_run "$tag" on "$r"
			else
				stats_run "$tag" on "$r" && stats_run "$tag" off "$r"
			fi || { : >"$STATS"; break 2; }
		done
		echo "  stats round $((r + 1))/$STATS_ROUNDS" >&2
	done
	sysctl -q kernel.bpf_stats_enabled="$STATS_OLD"
	STATS_OLD=
}

run_rounds "CPU loop $ITERS k x chain(20), syscall loop $((6 * ITERS)) k syscalls"
stats_rounds

# per_round A B [COL]: "min median max" over rounds of A's / B's column COL
# (default 3, the wall time) in the same round
per_round()
{
	awk -F'\t' -v a="$1" -v b="$2" -v c="${3:-3}" '
		$1 == a { x[$2] = $c }
		$1 == b { y[$2] = $c }
		END { for (r in x) if (r in y && y[r] > 0) printf "%.4f\n", x[r] / y[r] }' "$RUNS" |
		sort -g | awk '{ a[NR] = $1 }
			END {
				if (!NR) { print "- - -"; exit }
				m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
				print a[1], m, a[NR]
			}'
}

# summary: per variant min/median/max of the loop's wall time, its ratio to
# the same workload's run without a profiler and to --no-python, the other
# columns' medians; then the on/off ratios per round; then bpf_stats.
summary()
{
	local v base c
	echo "# workloads: py_bench.py cpu (a loop under chain(20), $ITERS k calls; latprof -F $FREQ"
	echo "#   --mode cpu) and sys ($((6 * ITERS)) k os.getppid()/os.read(/dev/zero, 1);"
	echo "#   latprof --mode cpu,syscall, 99 Hz); $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
	for v in $(printf "%s\n" "${!PY[@]}" | sort); do
		echo "#   python $v: $(py_name "$v") ($(${PYROOTS[$v]:+chroot "${PYROOTS[$v]}"} \
			"${PY[$v]}" -V 2>&1))"
	done
	echo "# on = Python frames (the default), off = --no-python, base = no profiler"
	echo "# wall = the loop's own wall time (time.perf_counter_ns in Python); loop_cpu = its CPU"
	echo "#   time (time.process_time_ns: user+sys, the sampling interrupts and BPF programs"
	echo "#   included, the time other tasks had the CPU not)"
	echo "# /base, /off = median / median of base, of off (same workload and python)"
	echo "# startup = launch to the script's first line"
	echo "# tool_cpu = user+sys of the whole command minus the workload's own cpu"
	echo "# samples = the workload's CPU samples (median per run); walk% = those whose Python"
	echo "#   frames were walked (latprof report), named% = those with a frame of py_bench.py"
	echo "#   (not [unknown]), both over all rounds"
	for v in $VARIANTS; do
		awk -F'\t' -v v="$v" '$1 == v' "$RUNS" >"$TMP/v.tsv"
		printf "%s" "$v"
		printf "\t%s" "$(col_stat "$TMP/v.tsv" 3 min)" "$(col_stat "$TMP/v.tsv" 3 med)" \
			"$(col_stat "$TMP/v.tsv" 3 max)" "$(col_stat "$TMP/v.tsv" 5 med)" \
			"$(col_stat "$TMP/v.tsv" 6 med)" "$(col_stat "$TMP/v.tsv" 7 med)" \
			"$(col_stat "$TMP/v.tsv" 8 med)" "$(col_stat "$TMP/v.tsv" 13 med)" \
			"$(col_stat "$TMP/v.tsv" 16 med)"
		awk -F'\t' '{ s += $13; w += $14; m += $15 }
			END { printf "\t%s\t%s\n", s ? w / s : "-", s ? m / s : "-" }' "$TMP/v.tsv"
	done >"$TMP/sum.tsv"
	printf "%-12s %6s %6s %6s %6s %6s %6s %6s %6s %7s %8s %6s %7s %6s %6s\n" variant wall \
		median max /base /off loop /base /off startup tool_cpu rss samples walk named
	printf "%-12s %6s %6s %6s %6s %6s %6s %6s %6s %7s %8s %6s %7s %6s %6s\n" "" min_s _s _s "" "" \
		cpu_s "" "" _ms _s _MB "" "%" "%"
	awk -F'\t' '
		{ med[$1] = $3; cpu[$1] = $10; line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				split(line[i], f, "\t")
				pre = f[1]
				sub(/_[a-z]+$/, "", pre)
				b = med[pre "_base"]
				o = med[pre "_off"]
				cb = cpu[pre "_base"]
				co = cpu[pre "_off"]
				lp = f[1] !~ /_base$/
				on = f[1] ~ /_on$/
				printf "%-12s %6.3f %6.3f %6.3f %6s %6s %6.3f %6s %6s %7.1f %8.3f %6.1f %7s %6s %6s\n",
					f[1], f[2], f[3], f[4], (b > 0 ? sprintf("%.3f", f[3] / b) : "-"),
					(on && o > 0 ? sprintf("%.3f", f[3] / o) : "-"), f[10],
					(cb > 0 ? sprintf("%.3f", f[10] / cb) : "-"),
					(on && co > 0 ? sprintf("%.3f", f[10] / co) : "-"),
					f[5], f[7], f[8] / 1024, (lp ? f[9] : "-"),
					(lp && f[11] != "-" ? sprintf("%.1f", f[11] * 100) : "-"),
					(lp && f[12] != "-" ? sprintf("%.1f", f[12] * 100) : "-")
			}
		}' "$TMP/sum.tsv"
	echo
	echo "ratios of the loop's wall time (and CPU time), min / median / max over rounds of"
	echo "the ratio within a round (target: on/off <= 1.05):"
	for v in $VARIANTS; do
		case $v in *_on) ;; *) continue ;; esac
		base=${v%_on}
		for c in 3 16; do
			printf "  %-7s %-4s on/off %-17s  on/base %-17s  off/base %s\n" \
				"$([ $c = 3 ] && echo "$base")" "$([ $c = 3 ] && echo wall || echo cpu)" \
				"$(per_round "$v" "${base}_off" $c | awk '{ printf "%.3f %.3f %.3f", $1, $2, $3 }')" \
				"$(per_round "$v" "${base}_base" $c | awk '{ printf "%.3f %.3f %.3f", $1, $2, $3 }')" \
				"$(per_round "${base}_off" "${base}_base" $c |
					awk '{ printf "%.3f %.3f %.3f", $1, $2, $3 }')"
		done
	done
	[ -s "$STATS" ] || return 0
	echo
	echo "on_cpu_sample with kernel.bpf_stats_enabled=1, CPU loop at $FREQ Hz, min / median / max"
	echo "over $STATS_ROUNDS rounds. ns/run = run_time_ns / run_cnt: the program runs on every CPU,"
	echo "its cheap runs for the idle CPU and other processes included; ns/sample = run_time_ns /"
	echo "the workload's samples: all of the program's time charged to them; added = ns/sample"
	echo "with Python frames - without, in the same round:"
	for v in $(printf "%s\n" "${!PY[@]}" | sort); do
		stats_of "$v" "$STATS" >"$TMP/st.tsv"
		[ -s "$TMP/st.tsv" ] || continue
		printf "  python %s: ns/run %s with Python frames, %s without\n" "$v" \
			"$(stat3 2)" "$(stat3 3)"
		printf "             ns/sample %s with Python frames, %s without, added %s\n" \
			"$(stat3 4)" "$(stat3 5)" "$(stat3 6)"
	done
}

# stats_of TAG FILE: per bpf_stats round of python TAG in FILE (the lines of
# STATS), "round ns/run_on ns/run_off ns/sample_on ns/sample_off added"
stats_of()
{
	awk -F'\t' -v t="$1" '
		$1 == t && $3 == "on" { ton[$2] = $4; non[$2] = $5; son[$2] = $6 }
		$1 == t && $3 == "off" { toff[$2] = $4; noff[$2] = $5; soff[$2] = $6 }
		END {
			for (r in ton)
				if (r in toff && non[r] && noff[r] && son[r] && soff[r])
					printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", r, ton[r] / non[r],
						toff[r] / noff[r], ton[r] / son[r], toff[r] / soff[r],
						ton[r] / son[r] - toff[r] / soff[r]
		}' "$2"
}

# stat3 COL: "min / median / max" of column COL of TMP/st.tsv, in ns
stat3()
{
	printf "%.0f / %.0f / %.0f" "$(col_stat "$TMP/st.tsv" "$1" min)" \
		"$(col_stat "$TMP/st.tsv" "$1" med)" "$(col_stat "$TMP/st.tsv" "$1" max)"
}

report "raw runs: variant round wall_s cpu_s startup_ms total_s tool_cpu_s rss_kb post_ms post_cpu_s post_rss_kb out_kb samples walked named loop_cpu_s" "$RUNS"
if [ -n "$OUT" ] && [ -s "$STATS" ]; then
	{
		echo
		echo "# bpf_stats: python round mode run_time_ns run_cnt samples walked wall_s"
		cat "$STATS"
	} >>"$OUT"
fi
