#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Await attribution (issue 32; src/awaits.h, symbolize/pyasync.h): on
# Debian testing's stripped python3.14 and python3.15 (tests/pyroot), an
# asyncio service whose requests await a slow backend, two at a time, has
# each request's suspended time charged to its await chain.
#
# Ground truth (not from latprof): tests/fixtures/py_awaits.py times each
# request's await itself (time.monotonic_ns around `await call_backend()`,
# which waits for a backend thread that answers after 150 ms). Checked:
#   - `serve 20 2`: every request's task "req-I" shown as "[task req-I]",
#     and the await weight on stacks [task req-I];handle_request;
#     call_backend between 85% and 115% of what that request timed; the
#     request tasks' total within 90-110% of the timed sum; the report's
#     Awaits section lists their chain with its 20 tasks;
#   - `idle 1.5` (the main task awaits the task "idler", which awaits
#     asyncio.sleep(1.5)): idle_wait under [task idler] within +-10% of the
#     1.5 s the program timed, and the main task's chain ending in idle
#     (awaiting a Task is where a chain stops);
#   - --await-hz 0: no await column, and --weight await says why;
#   - Debian's python3.11: no await column; the metadata says 3.14+ is needed.
TEST_BUDGET_S=${TEST_BUDGET_S:-90}
. "$(dirname "$0")/lib.sh"
require_root_bpf
fixture=$(dirname "$0")/../fixtures/py_awaits.py
pythons=()
if pyroot "$fixture"; then
	pythons+=("chroot $PYROOT python3.14 $PYROOT_TMP/py_awaits.py"
		  "chroot $PYROOT python3.15 $PYROOT_TMP/py_awaits.py")
else
	info "no Debian testing root (debootstrap): only the python3.11 checks"
fi

# check_awaits NAME: the request checks above on $WORKDIR/NAME.*
check_awaits()
{
	local name=$1 out=$WORKDIR/$1.check
	/usr/bin/python3 - "$WORKDIR/$name.await.folded" "$WORKDIR/$name.out" >"$out" <<'PYEOF' ||
import sys
prog = open(sys.argv[2]).read()
waits = dict((k, int(v)) for k, v in
             (w.split(":") for w in prog.split("waits=")[1].split()[0].split(",")))
per = dict((k, 0) for k in waits)
reqs = total = 0
for line in open(sys.argv[1]):
    stack, w = line.rsplit(" ", 1)
    frames = stack.split(";")
    total += int(w)
    task = [f[6:-1] for f in frames if f.startswith("[task ")]
    if not task or task[0] not in per:
        continue
    reqs += int(w)
    i = frames.index("[task %s]" % task[0])
    if frames[i + 1].startswith("handle_request (") and frames[i + 2].startswith("call_backend ("):
        per[task[0]] += int(w)
bad = []
for k in sorted(waits, key=lambda k: int(k.split("-")[1])):
    share = per[k] / waits[k]
    print("%s: awaited %.1f ms (its own timing), charged %.1f ms to handle_request;call_backend (%.0f%%)"
          % (k, waits[k] / 1e6, per[k] / 1e6, 100 * share))
    if not 0.85 <= share <= 1.15:
        bad.append("%s: %.0f%% of its await charged to its chain" % (k, 100 * share))
timed = sum(waits.values())
print("requests: %.1f ms charged, %.1f ms timed; await weight in all %.1f ms"
      % (reqs / 1e6, timed / 1e6, total / 1e6))
if not 0.9 * timed <= reqs <= 1.1 * timed:
    bad.append("the requests' tasks were charged %.1f ms for %.1f ms timed" % (reqs / 1e6, timed / 1e6))
for b in bad:
    print("BAD: " + b)
sys.exit(1 if bad else 0)
PYEOF
	{
		cat "$out" >&2
		return 1
	}
	sed "s/^/  /" "$out"
}

for py in "${pythons[@]}"; do
	name=serve${py##* python}
	name=${name%% *}
	name=${name//./}
	info "== $py serve 20 2"
	# shellcheck disable=SC2086 # the interpreter's command line, split on purpose
	record_or_fail "$name" --mode cpu,syscall -- $py serve 20 2
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.await.folded" --format folded \
		--weight await
	check_awaits "$name" || fail "$py: the requests' awaits are wrong (above)"
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report"
	grep -A4 "^Awaits" "$WORKDIR/$name.report" |
		grep -qE " 20  handle_request \(py_awaits.py\) > call_backend \(py_awaits.py\) > " || {
		diag_file "report" "$WORKDIR/$name.report" 120
		fail "$py: the report's Awaits section does not list the 20 requests' chain"
	}

	info "== $py idle 1.5"
	name=idle${name#serve}
	# shellcheck disable=SC2086
	record_or_fail "$name" --mode cpu,syscall -- $py idle 1.5
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.await.folded" --format folded \
		--weight await
	/usr/bin/python3 - "$WORKDIR/$name.await.folded" "$WORKDIR/$name.out" <<'PYEOF' ||
import sys
timed = int(open(sys.argv[2]).read().split("waits=idler:")[1].split()[0])
idler = main = 0
for line in open(sys.argv[1]):
    stack, w = line.rsplit(" ", 1)
    frames = stack.split(";")
    if "[task idler]" in frames and any(f.startswith("idle_wait (") for f in frames):
        idler += int(w)
    elif "[task Task-*]" in frames and frames[-1].startswith("idle ("):
        main += int(w)
print("  idler: %.1f ms charged to [task idler];idle_wait, %.1f ms timed; the main task %.1f ms "
      "ending in idle" % (idler / 1e6, timed / 1e6, main / 1e6))
ok = 0.9 * timed <= idler <= 1.1 * timed and 0.9 * timed <= main <= 1.1 * timed
sys.exit(0 if ok else 1)
PYEOF
	{
		diag_file "await folded" "$WORKDIR/$name.await.folded"
		fail "$py idle: the idle task's await is wrong (above)"
	}
done

if [ ${#pythons[@]} -gt 0 ]; then
	py=${pythons[0]}
	info "== $py serve 4 2 --await-hz 0"
	# shellcheck disable=SC2086
	record_or_fail off --mode cpu,syscall --await-hz 0 -- $py serve 4 2
	lp_export "$WORKDIR/off.pb.gz" "$WORKDIR/off.folded" --format folded --weight await &&
		fail "--await-hz 0: the profile has an await column"
	grep -q "needs CPython 3.14+" "$WORKDIR/off.folded.err" ||
		fail "--weight await on a profile without it does not say why: $(cat "$WORKDIR/off.folded.err")"
fi

info "== python3.11 serve 4 2"
record_or_fail py311 --mode cpu,syscall -- /usr/bin/python3.11 "$fixture" serve 4 2
lp_export "$WORKDIR/py311.pb.gz" "$WORKDIR/py311.folded" --format folded --weight await &&
	fail "python3.11: the profile has an await column"
export_or_fail "$WORKDIR/py311.pb.gz" "$WORKDIR/py311.json" --format json
grep -q '"proc\.[0-9]*\.awaits":"CPython 3.11: needs 3.14+"' "$WORKDIR/py311.json" || {
	grep -o '"proc\.[0-9]*\.awaits[^,]*' "$WORKDIR/py311.json" >&2
	fail "python3.11: the metadata does not say that await attribution needs 3.14"
}
pass
