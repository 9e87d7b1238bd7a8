# SPDX-License-Identifier: GPL-2.0-only
# Helpers of the `latprof serve` tests (test_serve_*.sh), sourced after lib.sh.

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port()
{
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_serve LOG PORT ARGS...: start `latprof serve --listen 127.0.0.1:PORT
# ARGS` in the background (stderr and stdout in LOG) and wait until it
# listens; sets SERVE_PID. Fails the test if it does not come up.
start_serve()
{
	local log=$1 port=$2
	shift 2
	start_bg "$log" "$LATPROF" serve --listen "127.0.0.1:$port" "$@"
	SERVE_PID=$BG_PID
	if ! wait_for_line "$log" "serving on http" 15; then
		diag_file "latprof serve log" "$log"
		fail "latprof serve $* did not start listening on port $port"
	fi
}

# http_code URL [CURL ARGS...]: the HTTP status of GET URL (000: no answer).
http_code()
{
	local url=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$@" "$url"
}

# bpf_prog_ids PID: the ids of the BPF programs process PID holds, one a line.
bpf_prog_ids()
{
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u
}
