#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# GIL waits (issue 32, item 3; bpf/gil.bpf.h, src/gil.h): a Python thread's
# futex waits on its interpreter's GIL are their own category, "gil", with
# each thread's time waiting and holding, on stripped interpreters too.
#
# Ground truth (not from latprof): tests/fixtures/py_gil.py times each of
# its threads itself: its wall time and its own CPU time
# (time.thread_time_ns); wall - CPU is the time it did not run, which for
# two pure-Python threads on a GIL build is their wait for the GIL (and
# whatever else kept them off a CPU of this shared machine). Per
# interpreter: pyenv's 3.8, 3.12 and
# 3.13 (DWARF), Debian's python3.11 and Debian testing's stripped
# python3.14 and python3.15 in a chroot (tests/pyroot/mkroot.sh; their
# _Py_DebugOffsets; a /proc mounted in a mount namespace of the run's own),
# `cpu 2 3`, recorded at 199 Hz:
#   - each thread's GIL wait in the JSON export ("gil" list, by its tid)
#     within 10 points of the share of its wall time it did not run; on a
#     busy machine (the thread runnable, waiting for a CPU, more than 5% of
#     its time, by the kernel's /proc/thread-self/schedstat, which the
#     fixture reads), between that share less its runnable share and that
#     share, 10 points either way: time waiting for a CPU is no GIL wait;
#   - its time holding the GIL (CPU samples that found it the holder) at
#     most its CPU samples, and more than a quarter of its measured CPU;
#   - the profile's "category" label has "gil" latency, the report a gil
#     line in its breakdown and a "Python GIL" section.
# `lock 0.5` on python3.11 and python3.15: a thread blocked 0.5 s on a
# threading.Lock that another holds (time.sleep, GIL released) waits on
# a futex of its own: at most 50 ms of GIL wait, its lock wait labelled
# "sync" (>= 90% of the time it measured), under 50 ms labelled "gil".
# A free-threaded build (python3.13t/3.14t, pyenv or the chroot), when
# there is one: no gil section, no "gil" label.
TEST_BUDGET_S=${TEST_BUDGET_S:-120}
. "$(dirname "$0")/lib.sh"
require_root_bpf
fixture=$(dirname "$0")/../fixtures/py_gil.py
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
pythons=()
for v in 3.8 3.12 3.13; do
	for p in "$root"/versions/$v.*/bin/python$v; do
		[ -x "$p" ] && pythons+=("$p $fixture")
	done
done
[ -x /usr/bin/python3.11 ] && pythons+=("/usr/bin/python3.11 $fixture")
lockpy=("/usr/bin/python3.11 $fixture")
freepy=()
for p in "$root"/versions/*t/bin/python3.1[3-9]t; do
	[ -x "$p" ] && freepy+=("$p $fixture")
done
if pyroot "$fixture"; then
	# the root has no /proc, where the fixture reads its schedstat: one in a
	# mount namespace of its own, gone with it
	inroot=$WORKDIR/inroot.sh
	printf '#!/bin/sh\nmount -t proc proc "$1/proc" && exec chroot "$@"\n' >"$inroot"
	chmod +x "$inroot"
	pythons+=("unshare -m $inroot $PYROOT python3.14 $PYROOT_TMP/py_gil.py"
		  "unshare -m $inroot $PYROOT python3.15 $PYROOT_TMP/py_gil.py")
	lockpy+=("chroot $PYROOT python3.15 $PYROOT_TMP/py_gil.py")
	for v in 3.13t 3.14t 3.15t; do
		[ -x "$PYROOT/usr/bin/python$v" ] &&
			freepy+=("chroot $PYROOT python$v $PYROOT_TMP/py_gil.py")
	done
fi
[ ${#pythons[@]} -gt 0 ] || skip "no CPython with a GIL on this machine"

# labels NAME: the pprof's totals by "category" label (pprof_decode.py)
labels()
{
	/usr/bin/python3 "$_lib_dir/pprof_decode.py" labels "$WORKDIR/$1.pb.gz" category \
		>"$WORKDIR/$1.labels" || fail "pprof_decode.py labels $1 failed"
}

# label_ns NAME CATEGORY: the latency nanoseconds labelled CATEGORY
label_ns()
{
	awk -v c="$2" '$1 == c && $2 == "latency/nanoseconds" { print $3; f = 1 }
		END { if (!f) print 0 }' "$WORKDIR/$1.labels"
}

i=0
for py in "${pythons[@]}"; do
	i=$((i + 1))
	name=cpu$i
	info "== $py cpu 2 3"
	# shellcheck disable=SC2086 # the interpreter's command line, split on purpose
	record_or_fail $name -F 199 --mode cpu,syscall -- $py cpu 2 3
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.json" --format json
	json_py "$WORKDIR/$name.json" '
truth = []
for line in open(sys.argv[2]):
    if line.startswith("py_gil thread "):
        f = dict(kv.split("=") for kv in line.split()[2:])
        truth.append((int(f["tid"]), int(f["wall_ns"]), int(f["cpu_ns"]), int(f["runq_ns"])))
gil = j.get("gil")
if not gil:
    sys.exit("  no \"gil\" section in the JSON export")
got = {t["tid"]: t for t in gil["list"]}
bad = []
if len(truth) != 2:
    bad.append("the fixture printed %d threads" % len(truth))
for tid, wall, cpu, runq in truth:
    t = got.get(tid)
    if not t:
        bad.append("thread %d is not in the gil list" % tid)
        continue
    want = 100.0 * (wall - cpu) / wall
    have = 100.0 * t["wait_ns"] / wall
    busy = 100.0 * runq / wall
    print("  thread %d: wall %.3f s, cpu %.3f s: did not run %.1f%%; GIL wait %.3f s (%d waits)"
          " = %.1f%% (%+.1f points); held %.3f s, CPU sampled %.3f s; runnable %.1f%%"
          % (tid, wall / 1e9, cpu / 1e9, want, t["wait_ns"] / 1e9, t["waits"], have,
             have - want, t["held_ns"] / 1e9, t["cpu_ns"] / 1e9, busy))
    # a busy machine: time runnable, waiting for a CPU, is no GIL wait
    if abs(have - want) > 10 and (busy <= 5 or not want - busy - 10 <= have <= want + 10):
        bad.append("thread %d: GIL wait %.1f%% of its wall time, it did not run %.1f%%"
                   " (runnable %.1f%%)" % (tid, have, want, busy))
    elif abs(have - want) > 10:
        print("  (not within 10 points: the machine was busy, %.1f%% runnable; within"
              " [did not run - runnable - 10, did not run + 10])" % busy)
    if t["held_ns"] > t["cpu_ns"] or t["held_ns"] < cpu / 4:
        bad.append("thread %d: held %.3f s, CPU sampled %.3f s, measured %.3f s"
                   % (tid, t["held_ns"] / 1e9, t["cpu_ns"] / 1e9, cpu / 1e9))
for b in bad:
    print("  BAD: " + b)
sys.exit(1 if bad else 0)
' "$WORKDIR/$name.out" || {
		diag_file "record stderr" "$WORKDIR/$name.err"
		fail "$py: the GIL waits are wrong (above)"
	}
	labels $name
	gil_ns=$(label_ns $name gil)
	[ "$gil_ns" -gt 0 ] || {
		diag_file "labels" "$WORKDIR/$name.labels"
		fail "$py: no latency labelled category=gil in the profile"
	}
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report"
	grep -q "^  in syscalls: gil " "$WORKDIR/$name.report" &&
		grep -q "^Python GIL" "$WORKDIR/$name.report" || {
		diag_file "report" "$WORKDIR/$name.report" 60
		fail "$py: the report has no gil breakdown line or no Python GIL section"
	}
done

i=0
for py in "${lockpy[@]}"; do
	i=$((i + 1))
	name=lock$i
	info "== $py lock 0.5"
	# shellcheck disable=SC2086
	record_or_fail $name -F 199 --mode cpu,syscall -- $py lock 0.5
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.json" --format json
	labels $name
	line=$(grep "^py_gil blocked " "$WORKDIR/$name.out") || fail "$py: the fixture did not say"
	tid=$(sed 's/.*tid=\([0-9]*\).*/\1/' <<<"$line")
	blocked=$(sed 's/.*blocked_ns=\([0-9]*\).*/\1/' <<<"$line")
	wait=$(json_py "$WORKDIR/$name.json" '
print(sum(t["wait_ns"] for t in (j.get("gil") or {}).get("list", []) if t["tid"] == int(sys.argv[2])))
' "$tid")
	sync=$(label_ns $name sync)
	gil=$(label_ns $name gil)
	info "blocked $((blocked / 1000000)) ms on the lock: its GIL wait $((wait / 1000000)) ms;" \
		"latency labelled sync $((sync / 1000000)) ms, gil $((gil / 1000000)) ms"
	[ "$wait" -le 50000000 ] || fail "$py: a thread blocked on a threading.Lock waited $wait ns for the GIL"
	[ "$gil" -le 50000000 ] || fail "$py: $gil ns labelled gil for a lock wait"
	[ "$sync" -ge $((blocked * 9 / 10)) ] || {
		diag_file "labels" "$WORKDIR/$name.labels"
		fail "$py: the lock wait ($blocked ns) is not labelled sync ($sync ns)"
	}
done

if [ ${#freepy[@]} -eq 0 ]; then
	info "no free-threaded build here (pyenv 3.13t, Debian's python3.13t): not checked"
fi
for py in "${freepy[@]}"; do
	name=free
	info "== $py cpu 2 2 (free-threaded)"
	# shellcheck disable=SC2086
	record_or_fail $name -F 199 --mode cpu,syscall -- $py cpu 2 2
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.json" --format json
	labels $name
	json_py "$WORKDIR/$name.json" 'sys.exit(1 if j.get("gil") else 0)' ||
		fail "$py: a free-threaded build has a gil section"
	[ "$(label_ns $name gil)" = 0 ] || fail "$py: a free-threaded build has gil latency"
done
pass "GIL waits within 10 points on ${#pythons[@]} interpreters; a lock wait is sync"
