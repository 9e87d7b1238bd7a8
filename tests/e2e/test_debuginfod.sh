#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# debuginfod: separate debuginfo fetched through libdw's client when, and only
# when, DEBUGINFOD_URLS is set.
#
# Ground truth: a local debuginfod (-F, file scanning) serving only the debug
# file of dbg_hot (objcopy --only-keep-debug), whose /metrics count the
# debuginfo requests it answered; nm -S and eu-addr2line -i on the unstripped
# fixture; strace for the libraries latprof opens. The binary recorded is a
# copy stripped of every symbol, with no debug file anywhere on disk.
# Checks, `record -F 499 -- COPY 0.5`:
#   - DEBUGINFOD_URLS unset: the server gets no debuginfo request, latprof
#     never opens libdebuginfod (strace), and dbg_hot_loop stays unresolved
#     (>= 80% of the samples at dbg_hot+0xOFFSET inside it);
#   - DEBUGINFOD_URLS=http://127.0.0.1:PORT, DEBUGINFOD_CACHE_PATH in WORKDIR:
#     the server answered a request for the build-id, the cache holds the
#     file, and dbg_hot_loop is resolved with dbg_hot.c lines (lib.sh
#     dbg_expect_resolved).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture dbg_hot
for t in debuginfod objcopy strip nm eu-readelf eu-addr2line strace curl; do
	command -v $t >/dev/null || fail "$t is needed (make setup installs it)"
done
fx=$FIXTURES/dbg_hot
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_CACHE_PATH=$WORKDIR/cache DEBUGINFOD_TIMEOUT=10

dbg_split srv "$fx"
bid=$(dbg_build_id "$fx")
[ -n "$bid" ] || fail "eu-readelf finds no build-id in $fx"
mkdir -p "$WORKDIR/served"
mv "$WORKDIR/srv.debug" "$WORKDIR/served/dbg_hot.debug"

# a free port, then the server on it; it is killed when the test exits
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
start_bg "$WORKDIR/debuginfod.log" debuginfod -F -p "$port" -d "$WORKDIR/debuginfod.sqlite" \
	-t 0 -g 0 -v "$WORKDIR/served"
# metric NAME: the value of the metric line starting with NAME, 0 if none
metric()
{
	curl -s --max-time 2 "$url/metrics" | awk -v m="$1" 'index($0, m " ") == 1 { v = $2 } END { print v + 0 }'
}
for ((i = 0; i < 100; i++)); do
	[ "$(metric 'found_debuginfo_total{source="files"}')" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
if [ "$(metric 'found_debuginfo_total{source="files"}')" -lt 1 ]; then
	diag_file "debuginfod log" "$WORKDIR/debuginfod.log"
	fail "debuginfod on port $port did not index $WORKDIR/served/dbg_hot.debug within 10 s"
fi
requests='http_requests_total{type="debuginfo"}'

# DEBUGINFOD_URLS unset: nobody asks the server, libdebuginfod is not loaded
before=$(metric "$requests")
strace -f -qq -e trace=openat -o "$WORKDIR/off.strace" \
	"$LATPROF" record -q -F 499 -o "$WORKDIR/off.pb.gz" -- "$WORKDIR/srv/dbg_hot" 0.5 \
	>"$WORKDIR/off.out" 2>"$WORKDIR/off.err" || {
	diag_file "latprof record stderr" "$WORKDIR/off.err"
	fail "latprof record (under strace, DEBUGINFOD_URLS unset) failed"
}
export_or_fail "$WORKDIR/off.pb.gz" "$WORKDIR/off.folded" --format folded
after=$(metric "$requests")
[ "$after" = "$before" ] || fail "DEBUGINFOD_URLS unset, yet debuginfod got $((after - before)) debuginfo requests"
if grep -q 'libdebuginfod' "$WORKDIR/off.strace"; then
	grep 'libdebuginfod\|libcurl' "$WORKDIR/off.strace" | head -3 | sed 's/^/  | /'
	fail "DEBUGINFOD_URLS unset, yet latprof loaded libdebuginfod"
fi
dbg_expect_unresolved off "$fx"
info "DEBUGINFOD_URLS unset: 0 debuginfo requests, libdebuginfod not opened, $DBG_RESULT"

# DEBUGINFOD_URLS set: fetched, cached, resolved
before=$(metric "$requests")
DEBUGINFOD_URLS=$url dbg_record on "$WORKDIR/srv/dbg_hot"
after=$(metric "$requests")
if [ "$after" -le "$before" ] || ! grep -q "/buildid/$bid/debuginfo" "$WORKDIR/debuginfod.log"; then
	diag_file "debuginfod log" "$WORKDIR/debuginfod.log" 40
	fail "DEBUGINFOD_URLS=$url: debuginfod got no request for build-id $bid"
fi
[ -s "$WORKDIR/cache/$bid/debuginfo" ] || {
	find "$WORKDIR/cache" | head | sed 's/^/  | /'
	fail "no $WORKDIR/cache/$bid/debuginfo after the fetch"
}
dbg_expect_resolved on "$fx"
info "DEBUGINFOD_URLS=$url: $((after - before)) debuginfo requests (build-id $bid among them), $DBG_RESULT"
pass "debuginfod used only with DEBUGINFOD_URLS"
