#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve gives back what a profile pull took (issue 29: RSS after 1,000 pulls
# within 10% of after the first). Each pull is recorded and symbolized on
# the connection's thread, in a glibc arena of its own. Left to glibc's
# dynamic thresholds, a pull that allocates tens of MB raised the trim
# threshold past that arena's top, which then stayed resident for good:
# `serve --comm perf` pulled while `perf record -a -g` ran (perf embeds
# Python 3.11, whose 20 MB of compressed DWARF the pull decompresses) sat
# 12 MB above its start after the pulls. Here the agent's VmRSS after three
# quiet pulls must be within 6 MB of its VmRSS before the first pull, and a
# pull must have taken at least 20 MB beyond it (VmHWM), or the test could
# not tell. Left out of the sanitized run: ASan's allocator is not glibc's.
# The agent keeps no history (--history 0): its recorder symbolizes perf too
# and keeps what it loaded for the next window, which is not a pull's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_cmd perf linux-perf "perf record -a -g, the process the pulls symbolize"
require_cmd curl curl "the pulls"

# status_kb PID KEY: KEY (VmRSS:, VmHWM:) of PID in kB
status_kb()
{
	awk -v k="$2" '$1 == k { print $2 }' "/proc/$1/status"
}

# pull N: N one-second profiles, each fails the test unless it is 200
pull()
{
	local i c
	for ((i = 0; i < $1; i++)); do
		c=$(http_code "http://127.0.0.1:$port/debug/pprof/profile?seconds=1")
		[ "$c" = 200 ] || fail "pull: HTTP $c"
	done
}

port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --comm perf --history 0
base=$(status_kb "$SERVE_PID" VmRSS:)
start_bg "$WORKDIR/perf.out" perf record -a -g -o "$WORKDIR/perf.data" -- sleep 4
perf_pid=$BG_PID
sleep 0.5
pull 2
wait "$perf_pid" 2>/dev/null
pull 3
rss=$(status_kb "$SERVE_PID" VmRSS:)
hwm=$(status_kb "$SERVE_PID" VmHWM:)
info "serve VmRSS before the pulls $base kB, after $rss kB; VmHWM $hwm kB"
[ $((hwm - base)) -ge 20480 ] ||
	fail "the pulls took $((hwm - base)) kB beyond the start, not 20 MB: the workload is too small to tell"
[ $((rss - base)) -le 6144 ] ||
	fail "serve kept $((rss - base)) kB after the pulls (more than 6 MB above its $base kB before them)"
pass "$((rss - base)) kB kept of $((hwm - base)) kB taken"
