#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Redraw the pictures of README.md and docs/ from real recordings: the demo
# workload (CPU and syscall latency), the demo against its "optimised
# parser" variant (diff), tests/fixtures/sys_wall (1 s spinning, 1 s
# asleep: hot/cold), and for docs/model-serving.md the FastAPI example under
# load (latency flame graph, timeline; on CPython 3.14 in a testing root, the
# await flame graph) and load_model.py (timeline). Each SVG is latprof's own; headless chromium renders
# the PNG. Run as root from the repo root: make docs-images
set -euo pipefail
BUILD=${BUILD:-build}
img=docs/img
work=$BUILD/img
mkdir -p "$work"

rec() { ./latprof record -F 499 "$@" >/dev/null; }
rec -o "$work/demo.pb.gz" -- "$BUILD/examples/demo_work"
rec -o "$work/demo-fast.pb.gz" -- "$BUILD/examples/demo_work" 2
rec --mode cpu,syscall,offcpu -o "$work/wall.pb.gz" -- "$BUILD/fixtures/sys_wall" 1000 1000

./latprof flamegraph "$work/demo.pb.gz" -o "$img/demo-cpu.svg"
./latprof flamegraph "$work/demo.pb.gz" --weight latency -o "$img/demo-latency.svg"
./latprof flamegraph "$work/wall.pb.gz" --weight wall -o "$img/wall.svg"
./latprof diff "$work/demo.pb.gz" "$work/demo-fast.pb.gz" \
	--subtitle "demo_work, parse_request 5 units (before) vs 2 units (after)" -o "$img/diff.svg"
./latprof report "$work/demo.pb.gz" >"$img/demo-report.txt"

PROFILE=$work/serve.pb.gz PORT=18000 BACKEND_PORT=18001 \
	examples/model_server/run.sh fastapi 100 4 >"$work/serve.out"
./latprof flamegraph "$work/serve.pb.gz" --weight latency -o "$img/model-latency.svg"
./latprof flamegraph "$work/serve.pb.gz" -o "$img/model-cpu.svg"
# docs/python.md's "before": the same stacks with the interpreter's frames
./latprof flamegraph "$work/serve.pb.gz" --native -o "$work/model-cpu-native.svg"
node tests/browser/svg2png.mjs "$work/model-cpu-native.svg" "$img/model-cpu-native.png" 1200
./latprof timeline "$work/serve.pb.gz" -o "$img/model-serve-timeline.svg"
# the async endpoint's awaits, on Debian testing's python3 (3.14) and its
# FastAPI in the root of tests/pyroot/mkroot.sh (docs/model-serving.md, 5)
root=$(tests/pyroot/mkroot.sh)
PYROOT=$root PROFILE=$work/await.pb.gz PATHS=/predict_remote PORT=18000 BACKEND_PORT=18001 \
	examples/model_server/run.sh fastapi 100 4 >"$work/await.out"
./latprof flamegraph "$work/await.pb.gz" --weight await -o "$img/model-await.svg"
model=$work/big.joblib
/usr/bin/python3 examples/model_server/load_model.py --model "$model" --seconds 0 >/dev/null
rec --files --interval 0.5 -o "$work/load.pb.gz" -- \
	/usr/bin/python3 examples/model_server/load_model.py --model "$model"
./latprof timeline "$work/load.pb.gz" -o "$img/model-load-timeline.svg"

for name in demo-cpu demo-latency wall diff model-latency model-cpu model-await model-serve-timeline \
	model-load-timeline; do
	node tests/browser/svg2png.mjs "$img/$name.svg" "$img/$name.png" 1200
done
ls -l "$img"
