#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Python frames in a real server: the FastAPI model server of
# examples/model_server (uvicorn, a scikit-learn RandomForest) under load.
#
# Started like test_requests_uvicorn.sh; wrk sends GET /predict over 4
# keep-alive connections, `record -F 499 -p APP -d 4` starts once wrk has run
# for 1 s, and wrk (30 s at most) is stopped only after record has written
# its profile, so the whole recording is under the same load. The folded CPU
# and latency stacks are held to what the app's own code says each thread
# does (app.py, model.py, and sklearn 1.2's ensemble/_forest.py, which
# model.predict runs):
#
#   (a) a slow syscall made while serving a request is charged to the
#       handler: the handler is a plain `def`, so FastAPI runs it on anyio's
#       worker threads, where WorkerThread.run either waits for work in
#       Queue.get (idle) or runs the request through context_run, which
#       calls the handler and nothing else (anyio's _asyncio.py). So >= 95%
#       of the latency of worker stacks through context_run must carry
#       `build_app.<locals>.predict (app.py)` (in practice the GIL waits of
#       the handler's sklearn calls: futex), and there must be some (>= 0.1
#       s of 4 s: four workers wait for the GIL most of each request).
#       Without Python frames it is 0 (no Python names at all). The share
#       of the handler in all latency depends on the machine's load, so it
#       is printed, not checked. A stack that still has an eval loop frame
#       (a walk that failed, or a kernel before 5.18 for syscalls in flight
#       at the stop: docs/python.md) has no Python frames to check: left
#       out, and its time printed. context_run is the interpreter's, which
#       the Python view folds away: (a) reads the --native export.
#   (a') the Python view (the default export) of the same latency: the
#       same total to the nanosecond; in every stack with Python frames no
#       interpreter frame between them (context_run, asyncio's task step,
#       the eval loop's entry, the call dispatch); and the handler right
#       under WorkerThread.run in >= 95% of the serving workers' latency
#       (a), where --native has context_run between the two.
#   (b) scikit-learn's Python functions name the CPU: the chain
#       handler -> predict (model.py) -> ForestClassifier.predict ->
#       ForestClassifier.predict_proba -> _accumulate_prediction ->
#       DecisionTreeClassifier.predict_proba is in the CPU stacks, and
#       ForestClassifier.predict is in >= 60% of the server's CPU samples:
#       a request's ~22 ms of worker CPU is all inside model.predict
#       (model.py calls nothing else), the loop's turnaround ~1 ms.
#   (c) at most 5% of the server's CPU samples still have a
#       `_PyEval_EvalFrameDefault` frame: every eval loop call is replaced by
#       the Python functions it ran.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v wrk >/dev/null || skip "wrk not installed"
/usr/bin/python3 -c 'import fastapi, uvicorn, sklearn' 2>/dev/null ||
	skip "python3-fastapi, python3-uvicorn or python3-sklearn missing"
app_dir=$(cd "$(dirname "$0")/../../examples/model_server" && pwd)

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_bg "$WORKDIR/app.out" /usr/bin/python3 "$app_dir/app.py" --port "$port" --backend-port 1 \
	--data-dir "$WORKDIR/data"
app=$BG_PID
for ((i = 0; i < 160; i++)); do
	curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
	kill -0 "$app" 2>/dev/null || { diag_file app "$WORKDIR/app.out"; fail "app.py exited"; }
	sleep 0.25
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null ||
	{ diag_file app "$WORKDIR/app.out"; fail "app.py never answered /healthz"; }
cpu_ms=$(curl -sf "http://127.0.0.1:$port/predict" | sed -n 's/.*"cpu_ms":\([0-9.]*\).*/\1/p')
info "app pid $app on port $port; one /predict alone: cpu_ms=$cpu_ms"

start_bg "$WORKDIR/wrk.out" wrk -t2 -c4 -d30s "http://127.0.0.1:$port/predict"
wrk_pid=$BG_PID
sleep 1
prof=$WORKDIR/srv.pb.gz
lp_record "$WORKDIR/rec.out" "$WORKDIR/rec.err" -F 499 -p "$app" -d 4 -o "$prof" ||
	{ diag_file "record stderr" "$WORKDIR/rec.err"; fail "latprof record -p $app -d 4 failed"; }
kill -0 "$wrk_pid" 2>/dev/null || { diag_file wrk "$WORKDIR/wrk.out"; fail "wrk ended during the recording"; }
kill "$wrk_pid"

export_or_fail "$prof" "$WORKDIR/cpu.folded" --format folded
export_or_fail "$prof" "$WORKDIR/lat.folded" --format folded --weight latency --native
export_or_fail "$prof" "$WORKDIR/view.folded" --format folded --weight latency

# One line per measure; "FAIL: reason" and exit 1 on the first miss.
if ! /usr/bin/python3 - "$WORKDIR/cpu.folded" "$WORKDIR/lat.folded" "$WORKDIR/view.folded" \
	>"$WORKDIR/check" <<'EOF'; then
import re
import sys

HANDLER = re.compile(r"^(?:.*\.)?predict \(app\.py\)$")
EVAL = "_PyEval_EvalFrameDefault"
RUN = "WorkerThread.run (_asyncio.py)"
CONTEXT_RUN = "context_run"
SKL_CHAIN = ["ForestClassifier.predict (_forest.py)",
             "ForestClassifier.predict_proba (_forest.py)",
             "_accumulate_prediction (_forest.py)",
             "DecisionTreeClassifier.predict_proba (_classes.py)"]


def load(path):
    """[(frames without the comm, count)]"""
    out = []
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        out.append((stack.split(";")[1:], int(count)))
    return out


def in_order(frames, chain):
    """chain's frames are in frames in this order, others between them."""
    i = 0
    for f in frames:
        if i < len(chain) and f == chain[i]:
            i += 1
    return i == len(chain)


def has_eval(frames):
    return any(f.startswith(EVAL) for f in frames)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


cpu, lat, view = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
cpu_all = sum(c for _, c in cpu)
if cpu_all < 500:
    fail("only %d CPU samples of the server" % cpu_all)

# (a) latency: stacks that kept their C frames are left out
kept = sum(c for f, c in lat if has_eval(f))
lat_all = sum(c for f, c in lat if not has_eval(f))
handler = sum(c for f, c in lat if not has_eval(f) and any(HANDLER.match(x) for x in f))
serving = [(f, c) for f, c in lat if not has_eval(f) and RUN in f and
           any(x.startswith(CONTEXT_RUN) for x in f[f.index(RUN):])]
serving_all = sum(c for _, c in serving)
serving_named = sum(c for f, c in serving if any(HANDLER.match(x) for x in f))
print("latency: %.3f s, %.3f s (%.3f) under the /predict handler; %.3f s with C "
      "frames left out" %
      (lat_all / 1e9, handler / 1e9, handler / max(1, lat_all), kept / 1e9))
print("latency of workers serving a request: %.3f s, %.3f (%.3f) under the handler" %
      (serving_all / 1e9, serving_named / 1e9, serving_named / max(1, serving_all)))
if serving_all < 0.1e9:
    fail("only %.3f s of latency in workers serving a request (want >= 0.1 s)" %
         (serving_all / 1e9))
if serving_named < 0.95 * serving_all:
    fail("%.3f of the serving workers' latency names the handler (want >= 0.95)" %
         (serving_named / serving_all))

# (a') the Python view of the same latency
PYFRAME = re.compile(r" \([^()]+\)$")
GLUE = re.compile(r"^(context_run|task_step|PyIter_Send|gen_send_ex|_PyEval_|_?PyObject_Call|"
                  r"_?PyObject_Vectorcall|_PyFunction_Vectorcall|slot_tp_call|method_vectorcall|"
                  r"cfunction_)")
if sum(c for _, c in view) != sum(c for _, c in lat):
    fail("the Python view weighs %d ns of latency, --native %d" %
         (sum(c for _, c in view), sum(c for _, c in lat)))
for f, c in view:
    py = [i for i, x in enumerate(f) if PYFRAME.search(x)]
    glue = [x for x in f[py[0]:py[-1]] if GLUE.match(x)] if py else []
    if glue:
        fail("interpreter frames %s between Python frames in the view: %s" %
             (glue, ";".join(f)))
direct = sum(c for f, c in view if RUN in f and f.index(RUN) + 1 < len(f) and
             HANDLER.match(f[f.index(RUN) + 1]))
print("view: %.3f s (%.3f of the serving workers') with the handler right under %s" %
      (direct / 1e9, direct / max(1, serving_all), RUN))
if direct < 0.95 * serving_all:
    fail("the view has the handler right under %s in %.3f s of %.3f s serving" %
         (RUN, direct / 1e9, serving_all / 1e9))

# (b) sklearn's functions on CPU
chain = sum(c for f, c in cpu if any(HANDLER.match(x) for x in f) and
            in_order(f, ["predict (model.py)"] + SKL_CHAIN))
forest = sum(c for f, c in cpu if SKL_CHAIN[0] in f)
print("cpu: %d samples, %d (%.3f) under ForestClassifier.predict, %d with "
      "handler;predict (model.py);...;DecisionTreeClassifier.predict_proba" %
      (cpu_all, forest, forest / cpu_all, chain))
if not chain:
    fail("no CPU stack has the handler, predict (model.py), " + ", ".join(SKL_CHAIN))
if forest < 0.60 * cpu_all:
    fail("ForestClassifier.predict is in %.3f of the CPU samples (want >= 0.60)" %
         (forest / cpu_all))

# (c) no eval loop frames left on CPU
evl = sum(c for f, c in cpu if has_eval(f))
print("cpu: %d samples (%.3f) still have %s" % (evl, evl / cpu_all, EVAL))
if evl > 0.05 * cpu_all:
    fail("%.3f of the CPU samples keep %s (want <= 0.05)" % (evl / cpu_all, EVAL))
EOF
	grep -v '^FAIL' "$WORKDIR/check" | sed 's/^/  /'
	diag_file "record stderr" "$WORKDIR/rec.err"
	echo "  heaviest latency stacks:"
	folded_top "$WORKDIR/lat.folded" "" 5
	echo "  heaviest CPU stacks:"
	folded_top "$WORKDIR/cpu.folded" "" 5
	fail "$(sed -n 's/^FAIL: //p' "$WORKDIR/check")"
fi
sed 's/^/  /' "$WORKDIR/check"
pass "the handler, sklearn's functions and no eval loop frames in the server's stacks; its Python view"
