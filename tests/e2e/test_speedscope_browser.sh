#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A speedscope export opens in speedscope itself, in a real browser.
#
# Ground truth: sys_pipe's known stacks (main -> reader_loop -> wait_on_pipe
# -> read in the parent, writer_loop -> nanosleep in the forked child) and
# speedscope's own importer (the npm package's release build, headless
# chromium through tests/browser/speedscope.mjs). Checks, `record --
# sys_pipe` then `export --format speedscope --weight latency`:
#   - speedscope imports the file without error and offers 2 profiles (one
#     per process: the reader and the writer), opening the one the file's
#     activeProfileIndex names: the heavier, which is the reader or the writer
#     by a few ms of 1 s each, so either (a reader kept off the CPU for 50 ms
#     finds its byte waiting, and that read is not slow);
#   - its sandwich view lists wait_on_pipe, reader_loop, writer_loop,
#     syscall:read and syscall:clock_nanosleep;
#   - a truncated copy of the file is refused (the error check works);
#   - screenshots in build/artifacts (or $ARTIFACTS).
# Skips (77) when the npm packages are missing (`make browser-deps`), unless
# CI is set: then that is a failure.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe
browser_dir=$(cd "$_lib_dir/../browser" && pwd)
if [ ! -d "$browser_dir/node_modules/speedscope" ] || [ ! -d "$browser_dir/node_modules/playwright-core" ]; then
	[ -n "${CI:-}" ] && fail "tests/browser/node_modules missing (run make browser-deps)"
	skip "tests/browser/node_modules missing (run make browser-deps)"
fi
command -v node >/dev/null || fail "node not installed"

record_or_fail pipe -- "$FIXTURES/sys_pipe"
ss=$WORKDIR/pipe.speedscope.json
export_or_fail "$WORKDIR/pipe.pb.gz" "$ss" --format speedscope --weight latency
head -c 400 "$ss" >"$WORKDIR/broken.speedscope.json"
timeout -k 5 45 node "$browser_dir/speedscope.mjs" "$ss" 2 wait_on_pipe reader_loop writer_loop \
	syscall:read syscall:clock_nanosleep -- "$WORKDIR/broken.speedscope.json" >"$WORKDIR/node.out" 2>&1
rc=$?
sed 's/^/  | /' "$WORKDIR/node.out"
[ $rc = 0 ] || fail "speedscope.mjs exited $rc"
pass "speedscope imports the export, 2 profiles, frames listed"
