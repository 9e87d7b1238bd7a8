#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Mutual TLS (issue 34, item 3): `serve --tls-client-ca FILE` requires a
# client certificate signed by FILE's CA. Certificates made here by openssl:
# a CA, the server's, a client's signed by the CA, a client's signed by
# another CA. curl with the right client certificate gets 200 (/healthz,
# /metrics); with none, or the other CA's, the TLS handshake fails (TLS 1.2:
# curl's handshake error 35; TLS 1.3, where a client sends its certificate
# after its own handshake is done: no HTTP answer at all), so no handler
# ran. Bad usage: --tls-client-ca without --tls-cert exits 2, and so does a
# CA file with no certificate in it (GnuTLS would take it as an empty list).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_cmd curl curl "the HTTPS checks"
require_cmd openssl openssl "the test's CAs and certificates"

tls=$WORKDIR/tls
mkdir -p "$tls"
tls_ca "$tls" ca
tls_ca "$tls" otherca
tls_cert "$tls" server ca 127.0.0.1 'subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth'
tls_cert "$tls" client ca "latprof client" 'extendedKeyUsage=clientAuth'
tls_cert "$tls" rogue otherca "latprof client" 'extendedKeyUsage=clientAuth'

port=$(free_port)
start_bg "$WORKDIR/serve.log" "$LATPROF" serve --listen "127.0.0.1:$port" --comm latprof-none \
	--history 0 --tls-cert "$tls/server.crt" --tls-key "$tls/server.key" \
	--tls-client-ca "$tls/ca.crt"
SERVE_PID=$BG_PID
wait_for_line "$WORKDIR/serve.log" "serving on https.*client certificates required" 15 ||
	{ diag_file "serve log" "$WORKDIR/serve.log"; fail "serve with --tls-client-ca did not start"; }
base=https://127.0.0.1:$port
ca=(--cacert "$tls/ca.crt")

for path in /healthz /metrics; do
	c=$(http_code "$base$path" "${ca[@]}" --cert "$tls/client.crt" --key "$tls/client.key")
	[ "$c" = 200 ] || fail "$path with the CA's client certificate: HTTP $c, expected 200"
done

# the checks can fail: the same connection without a client certificate, or with another CA's
for who in none rogue; do
	cert=()
	[ $who = rogue ] && cert=(--cert "$tls/rogue.crt" --key "$tls/rogue.key")
	curl -sS -o /dev/null --max-time 10 --tls-max 1.2 "${ca[@]}" "${cert[@]}" "$base/healthz" \
		2>"$WORKDIR/$who.12.err"
	rc=$?
	[ $rc = 35 ] || { diag_file "curl" "$WORKDIR/$who.12.err"; fail "TLS 1.2, client certificate: $who: curl exited $rc, expected 35 (the handshake failed)"; }
	c=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --tlsv1.3 "${ca[@]}" "${cert[@]}" \
		"$base/healthz" 2>"$WORKDIR/$who.13.err")
	rc=$?
	[ "$c" = 000 ] && [ $rc != 0 ] || { diag_file "curl" "$WORKDIR/$who.13.err"; fail "TLS 1.3, client certificate: $who: HTTP $c (curl $rc), expected no answer"; }
	info "client certificate $who: TLS 1.2 handshake failed (curl 35), TLS 1.3 no answer (curl $rc)"
done
# and the right one still works after them
c=$(http_code "$base/healthz" "${ca[@]}" --cert "$tls/client.crt" --key "$tls/client.key")
[ "$c" = 200 ] || fail "the right client certificate after refused ones: HTTP $c, expected 200"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
[ $rc = 0 ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "serve exited $rc after SIGTERM"; }

"$LATPROF" serve --listen 127.0.0.1:0 --tls-client-ca "$tls/ca.crt" >"$WORKDIR/usage.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "--tls-client-ca without --tls-cert exited $rc, expected 2"
check_one_line_error "$WORKDIR/usage.out" "tls-client-ca" "--tls-client-ca without --tls-cert"
printf 'not a certificate\n' >"$tls/bad.crt"
timeout 20 "$LATPROF" serve --listen "127.0.0.1:$(free_port)" --comm latprof-none --history 0 \
	--tls-cert "$tls/server.crt" --tls-key "$tls/server.key" --tls-client-ca "$tls/bad.crt" \
	>"$WORKDIR/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || { diag_file "serve" "$WORKDIR/bad.out"; fail "a client CA that is no certificate: exit $rc, expected 2"; }
check_one_line_error "$WORKDIR/bad.out" "tls-client-ca.*no PEM certificate" "a client CA file without a certificate"
pass "the CA's client certificate: 200; none or another CA's: handshake refused"
