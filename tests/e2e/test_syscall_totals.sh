#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One recording, every output adds up to the same syscall totals.
#
# Ground truth: the outputs of one profile must agree exactly (they are the
# same data), and the fixture fixes some counts: sys_mix's main thread
# nanosleeps 5 ms 20 times (mix_sleep) and 3 ms 30 times (mix_feed), 50
# clock_nanosleep calls all >= 1 ms; thread A polls an empty pipe with a
# 7 ms timeout 15 times (mix_poll); thread B reads 30 bytes main writes 3 ms
# apart (mix_read); everyone makes fast syscalls too.
# Checks, `record -- sys_mix`:
#   - --weight latency: folded total = JSON "total" = JSON stacks' sum =
#     the pprof latency/nanoseconds column's sum (decoded independently of
#     latprof; and `go tool pprof -raw` agrees: go is required);
#   - --weight syscalls: the same with the syscalls/count column;
#   - and the same totals from the other exports: the speedscope weights, and
#     the column of `export --format pprof` (decoded independently);
#   - the folded lines and the JSON stacks are the same stacks and values;
#   - --weight syscalls counts exactly 50 syscall:clock_nanosleep and 15
#     syscall:poll for sys_mix, below mix_sleep/mix_feed and mix_poll.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_mix
require_cmd go golang-go "go tool pprof -raw summing the columns"

record_or_fail mix -- "$FIXTURES/sys_mix"
prof=$WORKDIR/mix.pb.gz
[ -n "$(kv "$WORKDIR/mix.out" "sys_mix " pid)" ] ||
	{ diag_file "command stdout" "$WORKDIR/mix.out"; fail "sys_mix did not complete"; }
pprof_sums "$prof" >"$WORKDIR/mix.sums" 2>&1 ||
	{ diag_file "pprof_sums" "$WORKDIR/mix.sums"; fail "cannot decode $prof as a pprof profile"; }
info "pprof columns: $(tr '\n' ' ' <"$WORKDIR/mix.sums")"

# go tool pprof -raw: the "Samples:" header names the columns, each sample
# line starts with its values, then ": locations".
go_raw_sum()
{
	local g=$WORKDIR/go
	mkdir -p "$g/home" "$g/cache" "$g/path" "$g/tmp"
	HOME=$g/home GOCACHE=$g/cache GOPATH=$g/path GOTMPDIR=$g/tmp PPROF_TMPDIR=$g/tmp \
		GOFLAGS= GOTOOLCHAIN=local GOPROXY=off \
		timeout -k 5 40 go tool pprof -raw -symbolize=none "$1" >"$WORKDIR/mix.raw" 2>&1 || return 1
	awk -v t="$2" '
		/^Samples:/ { hdr = 1; next }
		hdr == 1 { for (i = 1; i <= NF; i++) if (index($i, t "/") == 1) col = i; hdr = 2; next }
		hdr == 2 && /^Locations/ { hdr = 3 }
		hdr == 2 && col && $0 ~ /^ *[0-9-]+ .*:/ { sum += $col }
		END { if (col) printf "%.0f\n", sum }' "$WORKDIR/mix.raw"
}

for w in latency:latency syscalls:syscalls; do
	weight=${w%%:*} col=${w#*:}
	folded=$WORKDIR/mix.$weight.folded
	json=$WORKDIR/mix.$weight.json
	export_or_fail "$prof" "$folded" --format folded --weight "$weight"
	export_or_fail "$prof" "$json" --format json --weight "$weight"
	json_check "$json"
	f_total=$(folded_sum "$folded")
	j_total=$(json_py "$json" 'print(j["total"])')
	p_total=$(pprof_sum "$prof" "$col")
	export_or_fail "$prof" "$WORKDIR/mix.$weight.speedscope.json" --format speedscope --weight "$weight"
	export_or_fail "$prof" "$WORKDIR/mix.$weight.pb.gz" --format pprof --weight "$weight"
	s_total=$(json_py "$WORKDIR/mix.$weight.speedscope.json" 'print(sum(sum(p["weights"]) for p in j["profiles"]))')
	e_total=$(pprof_sum "$WORKDIR/mix.$weight.pb.gz" "$col")
	g_total=-
	g_total=$(go_raw_sum "$prof" "$col")
	[ "$weight" = latency ] && lat_total=$f_total
	info "--weight $weight: folded $f_total, json $j_total, pprof $col column $p_total, go tool pprof -raw ${g_total:-?}, speedscope $s_total, pprof export $e_total"
	[ "$f_total" -gt 0 ] || { folded_top "$folded" "" 10; fail "--weight $weight: empty folded output"; }
	[ -n "$p_total" ] || { sed 's/^/  | /' "$WORKDIR/mix.sums"; fail "the pprof file has no $col/... value column"; }
	if [ "$f_total" != "$j_total" ] || [ "$f_total" != "$p_total" ] ||
	   [ "$f_total" != "$s_total" ] || [ "$f_total" != "$e_total" ]; then
		fail "--weight $weight totals differ: folded $f_total, json $j_total, pprof $p_total, speedscope $s_total, pprof export $e_total"
	fi
	if [ "$g_total" != - ] && [ "$g_total" != "$p_total" ]; then
		diag_file "go tool pprof -raw" "$WORKDIR/mix.raw" 12
		fail "--weight $weight: go tool pprof -raw sums the $col column to '$g_total', latprof's own total is $p_total"
	fi
	# the same stacks: JSON frames joined with ";" as folded lines, sorted
	json_py "$json" '
for s in j["stacks"]:
    print(";".join(s["frames"]) + " " + str(s["value"]))' | sort >"$WORKDIR/mix.$weight.fromjson"
	sort "$folded" >"$WORKDIR/mix.$weight.sorted"
	if ! cmp -s "$WORKDIR/mix.$weight.fromjson" "$WORKDIR/mix.$weight.sorted"; then
		diff "$WORKDIR/mix.$weight.sorted" "$WORKDIR/mix.$weight.fromjson" | head -n 10 | sed 's/^/  | /'
		fail "--weight $weight: the JSON stacks are not the folded stacks (diff folded json above)"
	fi
done

cnt=$WORKDIR/mix.syscalls.folded
sleeps=$(( $(folded_sum_leaf "$cnt" sys_mix "main;mix_sleep" syscall:clock_nanosleep) + \
	   $(folded_sum_leaf "$cnt" sys_mix "main;mix_feed" syscall:clock_nanosleep) ))
polls=$(folded_sum_leaf "$cnt" sys_mix "mix_poll" syscall:poll)
info "slow calls: clock_nanosleep $sleeps below mix_sleep/mix_feed (truth 50), poll $polls below mix_poll (truth 15)"
if [ "$sleeps" != 50 ] || [ "$polls" != 15 ]; then
	folded_top "$cnt" sys_mix 15
	fail "--weight syscalls: $sleeps clock_nanosleep (expected 50) and $polls poll (expected 15) for sys_mix"
fi
pass "latency total $lat_total ns, $f_total slow calls"
