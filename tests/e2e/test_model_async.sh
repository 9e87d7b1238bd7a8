#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The model server's async endpoint on CPython 3.14 (issue 32, item 4):
# examples/model_server/run.sh with PYROOT, the FastAPI app under uvicorn
# on Debian testing's stripped python3 (3.14) and its packages
# (tests/pyroot/mkroot.sh), recorded the way `make model-demo` records it
# (run.sh's PROFILE: record -p APP --requests --files --net) while load.py
# sends 100 requests at concurrency 4 to /predict_remote, an `async def`
# that awaits backend.py, which answers each request after 30 ms.
#
# Ground truth (not from latprof): backend.py's own count of requests and
# its fixed 30 ms delay, and load.py's own latencies. Checked:
#   - the await flame graph (`latprof flamegraph --weight await`) names the
#     endpoint and the awaited call: build_app.<locals>.predict_remote
#     (app.py) and StreamReader.read (streams.py);
#   - the await weight on stacks through predict_remote is at least 85% of
#     the backend's 100 x 30 ms and at most the client's summed latency
#     (load.py: requests x mean_ms) plus 10%;
#   - the report's Awaits section lists that chain.
TEST_BUDGET_S=${TEST_BUDGET_S:-120}
. "$(dirname "$0")/lib.sh"
require_root_bpf
pyroot "$(dirname "$0")/../fixtures/py_awaits.py" ||
	skip "no Debian testing root (debootstrap missing)"
chroot "$PYROOT" /usr/bin/python3 -c 'import fastapi, uvicorn, sklearn' 2>"$WORKDIR/imports.err" || {
	diag_file "imports" "$WORKDIR/imports.err"
	fail "the Debian testing root has no FastAPI, uvicorn or scikit-learn"
}
run_sh=$(dirname "$0")/../../examples/model_server/run.sh
free_port()
{
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

prof=$WORKDIR/serve.pb.gz
PYROOT=$PYROOT PROFILE=$prof LATPROF=$LATPROF PATHS=/predict_remote PORT=$(free_port) \
	BACKEND_PORT=$(free_port) timeout -k 5 100 "$run_sh" fastapi 100 4 >"$WORKDIR/run.out" \
	2>"$WORKDIR/run.err" || {
	diag_file "run.sh stdout" "$WORKDIR/run.out"
	diag_file "run.sh stderr" "$WORKDIR/run.err"
	fail "run.sh fastapi 100 4 under $PYROOT failed"
}
sed "s/^/  /" "$WORKDIR/run.out"
grep -q "^backend requests=100" "$WORKDIR/run.out" || fail "the backend did not answer 100 requests"
[ -s "$prof" ] || fail "no profile written"

timeout -k 5 30 "$LATPROF" flamegraph "$prof" --weight await -o "$WORKDIR/await.svg" \
	2>"$WORKDIR/await.svg.err" ||
	{ diag_file "flamegraph stderr" "$WORKDIR/await.svg.err"; fail "flamegraph --weight await failed"; }
for f in "build_app.&lt;locals&gt;.predict_remote (app.py)" "StreamReader.read (streams.py)"; do
	grep -qF "$f" "$WORKDIR/await.svg" || fail "the await flame graph does not name $f"
done
export_or_fail "$prof" "$WORKDIR/await.folded" --format folded --weight await
/usr/bin/python3 - "$WORKDIR/await.folded" "$WORKDIR/run.out" <<'PYEOF' || fail "the endpoint's await time is wrong (above)"
import re, sys
run = open(sys.argv[2]).read()
m = re.search(r"path=/predict_remote requests=(\d+) .* mean_ms=([0-9.]+)", run)
n, mean_ms = int(m.group(1)), float(m.group(2))
under = 0
for line in open(sys.argv[1]):
    stack, w = line.rsplit(" ", 1)
    if "build_app.<locals>.predict_remote (app.py)" in stack.split(";"):
        under += int(w)
low, high = 0.85 * n * 30e6, 1.1 * n * mean_ms * 1e6
print("  await under predict_remote: %.1f ms; the backend's %d x 30 ms = %.0f ms, the client's "
      "%d x %.2f ms = %.1f ms" % (under / 1e6, n, n * 30.0, n, mean_ms, n * mean_ms))
sys.exit(0 if low <= under <= high else 1)
PYEOF
lp_report "$prof" "$WORKDIR/report"
grep -A8 "^Awaits" "$WORKDIR/report" | grep -qF "build_app.<locals>.predict_remote (app.py) > StreamReader.read" || {
	diag_file "report" "$WORKDIR/report" 150
	fail "the report's Awaits section does not list predict_remote's chain"
}
pass
