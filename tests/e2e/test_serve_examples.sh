#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The scrape configurations of examples/serve ask `latprof serve` for what it
# serves. Neither Parca nor Grafana Alloy is packaged in Debian 12, so their
# files are checked without the programs (tests/e2e/serve_examples_check.py:
# prometheus.yml and parca.yaml through PyYAML, alloy.river through a small
# River parser; the Parca and Alloy snippets of docs/serve.md parse too and
# ask for the same paths). prometheus.yml also goes through Prometheus' own
# `promtool check config`. Then, ground truth from a running agent: every
# target's port is serve's default port (`latprof serve --help`) and the
# systemd unit's, and each path a config scrapes answers 200 with what the
# engine expects (/metrics: Prometheus text; pprof paths, with the
# ?seconds=N a delta profile adds: a gzip pprof) when asked with the bearer
# token the configs send. An alloy.river missing a brace must be refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
top=$(cd "$_lib_dir/../.." && pwd)
ex=$top/examples/serve

/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed"
command -v promtool >/dev/null || skip "promtool not installed (Debian's prometheus)"
command -v curl >/dev/null || skip "curl not installed"
require_root_bpf

check=$_lib_dir/serve_examples_check.py
/usr/bin/python3 "$check" "$ex" "$top/docs/serve.md" >"$WORKDIR/rows" 2>"$WORKDIR/check.err" ||
	fail "$(cat "$WORKDIR/check.err")"
sed 's/^/  | /' "$WORKDIR/rows"
for c in prometheus.yml parca.yaml alloy.river; do
	grep -q "^$c " "$WORKDIR/rows" || fail "$c scrapes nothing"
done

# the parser can fail: a block left open
mkdir "$WORKDIR/bad"
cp "$ex"/* "$WORKDIR/bad/"
sed -i '0,/^}$/s///' "$WORKDIR/bad/alloy.river"
/usr/bin/python3 "$check" "$WORKDIR/bad" "$top/docs/serve.md" >/dev/null 2>"$WORKDIR/bad.err" &&
	fail "an alloy.river with a block left open passed the check"
info "broken alloy.river refused: $(cat "$WORKDIR/bad.err")"

# Prometheus' own parser (it wants the token file to exist)
printf 'example-token\n' >"$WORKDIR/token"
sed "s#credentials_file: .*#credentials_file: $WORKDIR/token#" "$ex/prometheus.yml" >"$WORKDIR/prom.yml"
promtool check config "$WORKDIR/prom.yml" >"$WORKDIR/promtool.out" 2>&1 || {
	diag_file "promtool check config" "$WORKDIR/promtool.out"
	fail "promtool check config refuses examples/serve/prometheus.yml"
}

# the configs' port is serve's default, and the systemd unit's
def=$("$LATPROF" serve --help 2>&1 | sed -n 's/.*--listen ADDR:PORT.*default [0-9.]*:\([0-9]*\).*/\1/p')
[ -n "$def" ] || fail "no default port in 'latprof serve --help'"
unit=$(sed -n 's/.*--listen [0-9.]*:\([0-9]*\).*/\1/p' "$ex/latprof-serve.service")
[ "$unit" = "$def" ] || fail "latprof-serve.service listens on port '$unit', serve's default is $def"
while read -r conf target path kind auth; do
	[ "${target##*:}" = "$def" ] || fail "$conf scrapes $target, serve's default port is $def"
	[ "$auth" != - ] || fail "$conf scrapes $target without the bearer token serve asks for"
done <"$WORKDIR/rows"

# each path, from an agent with a token, as the engines ask for it
port=$(free_port)
start_serve "$WORKDIR/serve.log" "$port" --token-file "$WORKDIR/token" -F 49
auth=(-H "Authorization: Bearer example-token")
sort -u -k3,4 "$WORKDIR/rows" | while read -r conf target path kind auth_file; do
	url=http://127.0.0.1:$port$path
	[ "$kind" = delta ] && url="$url?seconds=1"
	out=$WORKDIR/$(echo "$conf$path" | tr -c 'a-z0-9\n' _)
	c=$(curl -s -o "$out" -w '%{http_code}' --max-time 30 "${auth[@]}" "$url")
	[ "$c" = 200 ] || fail "$conf: GET ${url#*"$port"} answered $c, expected 200"
	case $path in
	/metrics)
		grep -q '^# TYPE latprof_' "$out" || fail "$conf: $path is not latprof's Prometheus text" ;;
	*)
		pprof_sums "$out" | grep -q . || fail "$conf: $path ($url) is not a pprof profile" ;;
	esac
	info "$conf: GET ${url#*"$port"} -> 200"
done || exit 1
pass "examples/serve configs parse and scrape paths latprof serve answers on port $def"
