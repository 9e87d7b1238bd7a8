#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# docs/model-serving.md still shows what latprof prints. Its blocks of real
# output (between "<!-- generated: SPEC -->" and "<!-- end generated -->")
# are rewritten from a fresh run by examples/model_server/doc.sh, the script
# behind `make model-doc` (the model demo, then load_model.py recorded), into
# a copy in the work directory, and doc_blocks_check.py compares the copy
# with the committed doc in shape: numbers, paths and the lower rows of
# ranked tables vary between runs; section headers, column headings, notes,
# the shape of the rows, the top call sites and the top file must not.
# When it fails because latprof's output changed on purpose: run
# `sudo make model-doc`, then read the prose around the blocks that changed.
# ~20 s alone on the 2-vCPU VM.
TEST_BUDGET_S=${TEST_BUDGET_S:-110}
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v curl >/dev/null || skip "curl not installed"
/usr/bin/python3 -c 'import fastapi, uvicorn, sklearn' 2>/dev/null ||
	skip "python3-fastapi, python3-uvicorn or python3-sklearn missing"
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/docs/model-serving.md

# Two free ports, not make model-demo's (18000, 18001)
read -r port backend_port < <(/usr/bin/python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
WORK=$WORKDIR/model PORT=$port BACKEND_PORT=$backend_port LATPROF=$LATPROF \
	"$top/examples/model_server/doc.sh" "$doc" "$WORKDIR/model-serving.md" >"$WORKDIR/doc.out" 2>&1 ||
	{ diag_file doc.sh "$WORKDIR/doc.out" 40; fail "doc.sh could not rewrite the doc"; }
if ! /usr/bin/python3 "$(dirname "$0")/doc_blocks_check.py" "$doc" "$WORKDIR/model-serving.md" \
	>"$WORKDIR/check" 2>&1; then
	# the whole diff (numbers always differ) stays in the work directory
	diff -u "$doc" "$WORKDIR/model-serving.md" >"$WORKDIR/doc.diff"
	sed 's/^/  /' "$WORKDIR/check" | tail -n 30
	fail "docs/model-serving.md no longer matches latprof's output (sudo make model-doc rewrites it)"
fi
pass "$(tail -n 1 "$WORKDIR/check"): docs/model-serving.md matches a fresh run"
