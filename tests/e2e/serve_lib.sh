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

# tls_ca DIR NAME: a self-signed CA, DIR/NAME.crt and DIR/NAME.key, made by
# openssl (its output in DIR/openssl.log); fails the test if it cannot.
tls_ca()
{
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/$2.key" -out "$1/$2.crt" -days 1 \
		-subj "/CN=latprof test $2" >>"$1/openssl.log" 2>&1 ||
		{ diag_file openssl "$1/openssl.log"; fail "openssl cannot make the CA $2"; }
}

# tls_cert DIR NAME CA CN EXT: a certificate DIR/NAME.crt (key DIR/NAME.key)
# for common name CN with the x509v3 extensions EXT (lines), signed by CA
# (tls_ca DIR CA).
tls_cert()
{
	printf '%s\n' "$5" >"$1/$2.ext"
	openssl req -newkey rsa:2048 -nodes -keyout "$1/$2.key" -out "$1/$2.csr" \
		-subj "/CN=$4" >>"$1/openssl.log" 2>&1 &&
		openssl x509 -req -in "$1/$2.csr" -CA "$1/$3.crt" -CAkey "$1/$3.key" \
			-CAcreateserial -days 1 -extfile "$1/$2.ext" -out "$1/$2.crt" \
			>>"$1/openssl.log" 2>&1 ||
		{ diag_file openssl "$1/openssl.log"; fail "openssl cannot make the certificate $2"; }
}
