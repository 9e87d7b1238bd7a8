#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Go (Debian's golang-go): an HTTP handler's CPU and a handler's slow file
# syscall, under the handlers' function names. Go calls the kernel directly
# (syscall.Syscall), not through libc.
#
# Ground truth (from the workload, not latprof): tests/fixtures/go_http.go
# serves /spin (20 ms of CPU in spinHandler) and /sync (64 KiB appended and
# fsynced in syncHandler) to its own client, 50 rounds, on a disk file
# system; the handlers time themselves (spin_ns, sync_ns around f.Sync()).
# Checks, `record -- go_http DIR`:
#   - the CPU time of stacks through main.spinHandler is spin_ns +-25%;
#   - latprof's fsync total (per-syscall statistics: every call) is sync_ns
#     +-20%, and >= 90% of the slow fsync time (calls >= 10 us, with stacks;
#     --min-duration 10, as a fast disk may finish every fsync under 1 ms)
#     is under main.syncHandler.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_cmd go golang-go "the Go test"
g=$WORKDIR/go
mkdir -p "$g/home" "$g/cache" "$g/path" "$g/tmp"
HOME=$g/home GOCACHE=$g/cache GOPATH=$g/path GOTMPDIR=$g/tmp GOFLAGS= GO111MODULE=off \
	GOTOOLCHAIN=local GOPROXY=off timeout -k 5 40 go build -o "$WORKDIR/go_http" \
	"$(dirname "$0")/../fixtures/go_http.go" >"$WORKDIR/build.log" 2>&1 ||
	{ diag_file "go build" "$WORKDIR/build.log"; fail "go build failed"; }
disk_workdir

record_or_fail gohttp --min-duration 10 -- "$WORKDIR/go_http" "$DISK_DIR"
prof=$WORKDIR/gohttp.pb.gz
out=$WORKDIR/gohttp.out
spin_ns=$(kv "$out" "go_http " spin_ns)
sync_ns=$(kv "$out" "go_http " sync_ns)
[ -n "$spin_ns" ] && [ -n "$sync_ns" ] || { diag_file "command stdout" "$out"; fail "go_http printed no spin_ns/sync_ns"; }

export_or_fail "$prof" "$WORKDIR/cpu.folded" --format folded --weight cpu-time
export_or_fail "$prof" "$WORKDIR/lat.folded" --format folded --weight latency
export_or_fail "$prof" "$WORKDIR/go.json" --format json
spin=$(awk '/;main\.spinHandler(;| )/ { s += $NF } END { printf "%d", s }' "$WORKDIR/cpu.folded")
read -r slow under < <(awk '/;syscall:fsync [0-9]+$/ { t += $NF; if (/;main\.syncHandler;/) u += $NF }
	END { printf "%d %d\n", t, u }' "$WORKDIR/lat.folded")
fsync=$(/usr/bin/python3 -c '
import json, sys
print(sum(s["total_ns"] for s in json.load(open(sys.argv[1]))["syscalls"] if s["name"] == "fsync"))' "$WORKDIR/go.json")
info "spinHandler: $spin ns on CPU (truth $spin_ns); fsync: $fsync ns (truth $sync_ns), slow $slow ns, $under under syncHandler"
in_range "$(calc "$spin / $spin_ns")" 0.75 1.25 ||
	{ sort -t' ' -k2 -rn "$WORKDIR/cpu.folded" | head -5 | cut -c1-300; fail "main.spinHandler holds $spin ns of CPU, truth $spin_ns"; }
in_range "$(calc "$fsync / $sync_ns")" 0.80 1.20 || fail "latprof's fsync total $fsync ns, the handler timed $sync_ns"
[ "$slow" -gt 0 ] || fail "no fsync reached the 10 us threshold: nothing to attribute (tmpfs?)"
in_range "$(calc "$under / $slow")" 0.90 1.0 ||
	{ grep 'syscall:fsync' "$WORKDIR/lat.folded" | head -3 | cut -c1-300; fail "only $under of $slow ns of slow fsync under main.syncHandler"; }
pass "spinHandler $spin / $spin_ns ns; fsync $fsync / $sync_ns ns, $under of $slow slow ns under syncHandler"
