#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The Python view (docs/python.md "The Python view"): Python programs'
# stacks without the interpreter's glue by default, the full native stack
# with --native, on every CPython on the machine (Debian's static python3.11,
# pyenv 3.8-3.13).
#
# Ground truth (not from latprof): tests/fixtures/py_view.py sleeps 4 x 0.2 s
# in inner() (called by outer() from <module>) and 2 x 0.1 s in
# Sleeper.__call__ (called by call_twice() through the interpreter's
# slot_tp_call: C frames between two Python frames on every release), and
# prints the time it spent in those sleeps (time.monotonic_ns around each).
# Checks per interpreter, --mode syscall (latency folded stacks):
#   - default: every stack under inner (py_view.py) reads exactly
#     COMM;<module>;outer;inner;time_sleep...;syscall:NAME, every one under
#     __call__ COMM;<module>;call_twice;__call__;time_sleep...: no _start,
#     Py_BytesMain or _PyEval_ frame above <module>, none of the eval loop
#     entry or call dispatch (_PyEval_*, *Vectorcall*, slot_tp_call,
#     _PyObject_MakeTpCall, function_code_fastcall) anywhere; their
#     latency is the script's own sleep time, within 2%;
#   - --native: the same stacks keep them: Py_BytesMain above <module>,
#     slot_tp_call between call_twice and __call__; the total latency of
#     the export equals the default's to the nanosecond (folding moves
#     nothing);
#   - flamegraph, diff and export --format speedscope of the last one, and
#     record -o FILE.folded with the last interpreter: no Py_BytesMain
#     frame, but with --native;
#   - the report's slow call site of the 4 calls of inner names
#     inner (py_view.py) and then time_sleep (with --native the sites are
#     the innermost frames, printed: which ones name inner depends on the
#     release's call specialization).
# Seven interpreters, one 1.2 s run each: ~40 s on the 2-vCPU VM.
TEST_BUDGET_S=${TEST_BUDGET_S:-120}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_view.py

machine_pythons

n=0
for py in "${pythons[@]}"; do
	n=$((n + 1))
	name=py$n
	info "== $py"
	# -S: no site, whose .pth lines run exec()'d code objects that are freed
	# before the script's are made, at the same addresses: a frame names the
	# first code object seen at its address (docs/python.md, Limits), and
	# inner() was once "<module> (<string>)" on 3.9; naming is not tested here
	# Python frames are the precondition, not the subject: a recording whose
	# stacks were all "taken before it was found" (the interpreter read by an
	# idle-priority thread on a loaded machine: docs/python.md) is made again
	for try in 1 2 3; do
		record_or_fail $name --mode syscall -- "$py" -S "$SCRIPT"
		export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.view" --format folded \
			--weight latency
		grep -q "inner (py_view.py)" "$WORKDIR/$name.view" && break
		info "no Python frames in try $try: $("$LATPROF" report --no-color \
			"$WORKDIR/$name.pb.gz" 2>&1 | grep -A1 " Python 3" | tail -n 1 | tr -s ' ')"
	done
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.native" --format folded \
		--weight latency --native
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report" || fail "$py: report failed"
	timeout -k 5 30 "$LATPROF" report --no-color --native "$WORKDIR/$name.pb.gz" \
		>"$WORKDIR/$name.nreport" 2>&1 || fail "$py: report --native failed"
	if ! /usr/bin/python3 - "$WORKDIR/$name" >"$WORKDIR/$name.check" <<'EOF'; then
import re
import sys

base = sys.argv[1]
truth = dict(kv.split("=") for kv in open(base + ".out").read().split()[1:])
MOD, OUTER, INNER = "<module> (py_view.py)", "outer (py_view.py)", "inner (py_view.py)"
TWICE = "call_twice (py_view.py)"
CALL = re.compile(r"^(Sleeper\.)?__call__ \(py_view\.py\)$")
GLUE = re.compile(r"^(_PyEval_|_?PyObject_Vectorcall|_PyObject_VectorcallTstate|"
                  r"slot_tp_call|_PyObject_MakeTpCall|function_code_fastcall|"
                  r"cfunction_vectorcall|Py_BytesMain$|_start$)")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    out = []
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        out.append((stack.split(";"), int(count)))
    return out


view, native = load(base + ".view"), load(base + ".native")
sleeps = [(f, c) for f, c in view if INNER in f or any(CALL.match(x) for x in f)]
inner = sum(c for f, c in sleeps if INNER in f)
call = sum(c for f, c in sleeps if INNER not in f)
for f, c in sleeps:
    want = [MOD, OUTER, INNER] if INNER in f else [MOD, TWICE]
    got = f[1:1 + len(want) + 1]
    if (got[:len(want)] != want or (INNER not in f and not CALL.match(got[-1])) or
            not f[1 + len(want) + (INNER not in f)].startswith("time_sleep") or
            not f[-1].startswith("syscall:")):
        fail("a sleep's stack is not the program's: " + ";".join(f))
    glue = [x for x in f if GLUE.match(x)]
    if glue:
        fail("interpreter glue %s left in %s" % (glue, ";".join(f)))
for what, got, want in (("inner", inner, int(truth["inner_ns"])),
                        ("__call__", call, int(truth["call_ns"]))):
    print("%s: %.3f s of latency, the script slept %.3f s (%.3f)" %
          (what, got / 1e9, want / 1e9, got / want))
    if not 0.98 <= got / want <= 1.02:
        fail("%s: %.3f s of latency against %.3f s slept" % (what, got / 1e9, want / 1e9))

n_inner = [(f, c) for f, c in native if INNER in f]
n_call = [(f, c) for f, c in native if any(CALL.match(x) for x in f) and INNER not in f]
if sum(c for _, c in n_inner) != inner or sum(c for _, c in n_call) != call:
    fail("--native: the sleeps weigh %d and %d ns, the view %d and %d" %
         (sum(c for _, c in n_inner), sum(c for _, c in n_call), inner, call))
if any("Py_BytesMain" not in f[:f.index(MOD)] for f, _ in n_inner):
    fail("--native: a stack of inner without Py_BytesMain above <module>")
for f, _ in n_call:
    between = f[f.index(TWICE) + 1:next(i for i, x in enumerate(f) if CALL.match(x))]
    if not any(x.startswith("slot_tp_call") for x in between):
        fail("--native: no slot_tp_call between call_twice and __call__: " + ";".join(f))
total_view, total_native = sum(c for _, c in view), sum(c for _, c in native)
print("total latency %d ns in the view, %d ns with --native" % (total_view, total_native))
if total_view != total_native:
    fail("the view's total latency %d is not --native's %d" % (total_view, total_native))


def sites_of(path):
    """The lines of the report's slow call sites section."""
    text = open(path).read()
    return text[text.index("Slow call sites"):].split("\n\n")[0].split("\n")


def site_of(path):
    lines = sites_of(path)
    for i, line in enumerate(lines):
        # "    800ms       4  200ms  syscall:clock_nanosleep": the 4 calls of inner
        if re.match(r"^ +\S+ +4 +\S+  syscall:", line):
            return lines[i + 1].strip()
    return None


site = site_of(base + ".report")
nsites = [x.strip() for x in sites_of(base + ".nreport")[2:] if "syscall:" not in x]
print("slow call site: %s; with --native: %s" % (site, ", ".join(nsites)))
if not site or not re.search(re.escape(INNER) + r";time_sleep[^;]*$", site):
    fail("the report's slow call site of the 0.8 s is %r (want ...;%s;time_sleep)" %
         (site, INNER))
EOF
		sed 's/^/  /' "$WORKDIR/$name.check"
		diag_file "report" "$WORKDIR/$name.report"
		folded_top "$WORKDIR/$name.native" "" 4 >&2
		fail "$py: $(sed -n 's/^FAIL: //p' "$WORKDIR/$name.check")"
	fi
	sed 's/^/  /' "$WORKDIR/$name.check"
done
# the other views of the last profile: the SVG, diff and speedscope fold the
# same frames, and --native keeps them (Py_BytesMain is above every <module>)
prof=$WORKDIR/$name.pb.gz
for view in "flamegraph" "flamegraph --native" "diff --no-normalize" "diff --native" \
	"export --format speedscope" "export --format speedscope --native"; do
	case $view in
	diff*) args="$prof $prof" ;;
	*) args=$prof ;;
	esac
	# shellcheck disable=SC2086
	timeout -k 5 30 "$LATPROF" $view $args -w latency -o "$WORKDIR/view.out" \
		2>"$WORKDIR/view.err" || { diag_file stderr "$WORKDIR/view.err"; fail "$view failed"; }
	grep -q "inner (py_view.py)" "$WORKDIR/view.out" || fail "$view: no frame inner (py_view.py)"
	case $view in
	*--native) grep -q "Py_BytesMain" "$WORKDIR/view.out" || fail "$view: no Py_BytesMain" ;;
	*) ! grep -q "Py_BytesMain" "$WORKDIR/view.out" || fail "$view: Py_BytesMain left in" ;;
	esac
done
info "flamegraph, diff and speedscope: Py_BytesMain only with --native"
# record -o FILE.folded is the same view, and takes --native too
for native in "" --native; do
	for try in 1 2 3; do
		lp_record "$WORKDIR/rec.out" "$WORKDIR/rec.err" --mode syscall $native \
			-o "$WORKDIR/rec$native.folded" -- "$py" -S "$SCRIPT" ||
			{ diag_file "record stderr" "$WORKDIR/rec.err"; fail "record -o .folded $native failed"; }
		grep -q "inner (py_view.py)" "$WORKDIR/rec$native.folded" && break
	done
	grep -q "inner (py_view.py);time_sleep" "$WORKDIR/rec$native.folded" ||
		[ -n "$native" ] || fail "record -o .folded: no inner (py_view.py);time_sleep"
	if [ -n "$native" ]; then
		grep -q "Py_BytesMain" "$WORKDIR/rec$native.folded" || fail "record --native: no Py_BytesMain"
	else
		! grep -q "Py_BytesMain" "$WORKDIR/rec.folded" || fail "record -o .folded: Py_BytesMain left in"
	fi
done
pass "${#pythons[@]} interpreters: the program's stacks by default, the interpreter's with --native"
