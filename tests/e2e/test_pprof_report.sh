#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The recorded file is a real pprof profile and the text report is right.
#
# Ground truth: hot_ab spends 75% of its CPU in hot_a and 25% in hot_b (by
# construction; perf agrees). Records hot_ab with no -o in an empty dir, then:
#   - the default output latprof.pb.gz appears, and nothing else;
#   - `go tool pprof -top -symbolize=none` loads it, lists hot_a and hot_b, and
#     hot_a's cum% is in [65, 85];
#   - `latprof report` (default FILE) exits 0 and lists hot_a above hot_b;
#   - `export --format folded` to a file equals the export to stdout.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab
have_go || fail "go (golang-go) not installed: cannot check that go tool pprof reads the profile"

d=$WORKDIR/def
mkdir -p "$d"
(cd "$d" && exec timeout -k 5 50 "$LATPROF" record -F 499 -- "$FIXTURES/hot_ab" 1.5) \
	>"$WORKDIR/rec.out" 2>"$WORKDIR/rec.err"
rc=$?
[ $rc = 0 ] || { diag_file "record stderr" "$WORKDIR/rec.err"; fail "record without -o exited $rc"; }
left=$(ls -A "$d")
[ "$left" = latprof.pb.gz ] || fail "record without -o: expected latprof.pb.gz alone, found: $(echo $left)"
prof=$d/latprof.pb.gz

go_pprof_top "$prof" "$WORKDIR/top.txt"
rc=$?
if [ $rc != 0 ]; then
	diag_file "go tool pprof -top" "$WORKDIR/top.txt"
	fail "go tool pprof -top exited $rc"
fi
for fn in hot_a hot_b; do
	if ! awk -v fn=$fn '$NF == fn { ok = 1 } END { exit !ok }' "$WORKDIR/top.txt"; then
		diag_file "go tool pprof -top" "$WORKDIR/top.txt"
		fail "go tool pprof -top does not list $fn"
	fi
done
cum=$(awk '$NF == "hot_a" { sub(/%$/, "", $5); print $5; exit }' "$WORKDIR/top.txt")
info "pprof: hot_a cum%=$cum"
if ! in_range "${cum:-0}" 65 85; then
	diag_file "go tool pprof -top" "$WORKDIR/top.txt"
	fail "go tool pprof: hot_a cum% is '$cum', expected [65, 85] (truth 75)"
fi

(cd "$d" && exec timeout -k 5 20 "$LATPROF" report) >"$WORKDIR/report.txt" 2>"$WORKDIR/report.err"
rc=$?
if [ $rc != 0 ]; then
	diag_file "report stderr" "$WORKDIR/report.err"
	fail "latprof report exited $rc"
fi
la=$(grep -n -m1 -w hot_a "$WORKDIR/report.txt" | cut -d: -f1)
lb=$(grep -n -m1 -w hot_b "$WORKDIR/report.txt" | cut -d: -f1)
if [ -z "$la" ] || [ -z "$lb" ] || [ "$la" -ge "$lb" ]; then
	diag_file "report" "$WORKDIR/report.txt" 30
	fail "latprof report should list hot_a above hot_b (hot_a line '${la:-none}', hot_b line '${lb:-none}')"
fi

(cd "$d" && exec timeout -k 5 20 "$LATPROF" export --format folded -o -) >"$WORKDIR/a.folded" ||
	fail "export with the default FILE to stdout failed"
timeout -k 5 20 "$LATPROF" export "$prof" --format folded -o "$WORKDIR/b.folded" ||
	fail "export --format folded -o FILE failed"
cmp -s "$WORKDIR/a.folded" "$WORKDIR/b.folded" || fail "export to a file differs from export to stdout"
[ "$(folded_sum "$WORKDIR/b.folded" hot_ab hot_a)" -gt 0 ] || fail "exported folded stacks have no hot_a"
pass
