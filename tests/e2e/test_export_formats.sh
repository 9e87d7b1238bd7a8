#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every export format of one real recording, read back by the tools the
# format was made for, adds up to the folded totals and to the fixtures.
#
# Ground truth (not latprof): sys_pipe reads 20 bytes a forked child writes
# 50 ms apart: 20 reads in [32 ms, 64 ms) (bpftrace agrees), about 1.0 s in
# read(), which the fixture times itself (read_ns); the child makes 20
# clock_nanosleep calls of 50 ms. hot_ab burns 0.5 s of CPU and prints it
# (getrusage). Parsers: go tool pprof, promtool, python3's json.
# Checks:
#   - pprof, --weight latency and cpu: `go tool pprof -top` totals = folded
#     totals; the sample types are the weight's (syscalls+latency,
#     samples+cpu) with the weight as default; -lines shows
#     wait_on_pipe at sys_pipe.c:LINE; cpu samples = hot_ab's CPU x 499 Hz
#     within [0.7, 1.1];
#   - pprof --weight wall: cpu, offcpu and wall columns, wall shown;
#   - prometheus: `promtool check metrics` passes without a word; for
#     sys_pipe's read, the [32.768 ms, 65.536 ms] bucket holds exactly 20
#     calls, _count >= 20 and = the JSON count, _sum = read_ns +-5% and
#     1.0 s +-5%; the child's clock_nanosleep _count is 20; sys_pipe's
#     blocked off-CPU seconds cover its reads (read_ns -5%, at most 1.5x),
#     less one read (max_read_ns) per interval the profile counts as lost
#     in lost.offcpu_unmatched (a switch-in the kernel fired no
#     sched_switch for: a CI run under ASan lost one, 0.956 s blocked for
#     1.009 s of reads, docs/troubleshooting.md);
#   - speedscope, latency and cpu: valid per the file-format schema's
#     required fields, indexes in range, weights per profile = endValue,
#     all weights = folded total, unit nanoseconds / none, one profile per
#     process, frame names = folded frame names, wait_on_pipe has file
#     sys_pipe.c and a line;
#   - json: "lost" has every lost.* key, top_stacks obeys --top;
#   - record -o X.folded/.json/.speedscope.json/.prom/.svg writes that
#     format (a short sys_pipe run; the SVG passes xmllint and draws
#     wait_on_pipe and syscall:read); -o X.bogus, --weight latency without
#     --mode syscall and export --format bogus
#     exit 2 naming what is valid, leave no file, and record runs nothing.
# The upper bound on samples over CPU time x frequency is raised by the
# CPUs' share of time in interrupts or stolen while recording (away_hi in
# lib.sh): cpu-clock samples fire on wall time, the task's CPU time leaves
# that share out.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe hot_ab
have_go || fail "go (golang-go) not installed: cannot read the pprof export"
command -v promtool >/dev/null || fail "promtool (prometheus) not installed"

record_or_fail pipe --mode cpu,syscall,offcpu -- "$FIXTURES/sys_pipe"
prof=$WORKDIR/pipe.pb.gz
pid=$(kv "$WORKDIR/pipe.out" "sys_pipe " pid)
child=$(kv "$WORKDIR/pipe.out" "sys_pipe " child)
read_ns=$(kv "$WORKDIR/pipe.out" "sys_pipe " read_ns)
[ -n "$pid" ] && [ -n "$read_ns" ] || { diag_file "command stdout" "$WORKDIR/pipe.out"; fail "sys_pipe did not complete"; }
record_or_fail hot -F 499 -- "$FIXTURES/hot_ab" 0.5
hot=$WORKDIR/hot.pb.gz
cpu_ns=$(kv "$WORKDIR/hot.out" "hot_ab " cpu_ns)

# go_total PPROF OUT: the total `go tool pprof -top -unit=ns` prints.
go_total()
{
	go_pprof_top_unit "$1" "$2" || { diag_file "go tool pprof" "$2"; fail "go tool pprof -top $1 failed"; }
	awk '/^Showing nodes accounting for/ {
		for (i = 1; i <= NF; i++) if ($i == "total") { v = $(i - 1); gsub(/[^0-9]/, "", v); print v }
	}' "$2"
}

go_pprof_top_unit()
{
	local g=$WORKDIR/go
	mkdir -p "$g/home" "$g/cache" "$g/path" "$g/tmp"
	HOME=$g/home GOCACHE=$g/cache GOPATH=$g/path GOTMPDIR=$g/tmp PPROF_TMPDIR=$g/tmp \
		GOFLAGS= GOTOOLCHAIN=local GOPROXY=off \
		timeout -k 5 40 go tool pprof -top -unit=ns -symbolize=none ${3:-} "$1" >"$2" 2>&1
}

# --- pprof ---
for case in pipe:latency:syscalls/count,latency/nanoseconds hot:cpu:samples/count,cpu/nanoseconds \
	    pipe:wall:cpu/nanoseconds,offcpu/nanoseconds,wall/nanoseconds; do
	IFS=: read -r name weight types <<<"$case"
	src=$WORKDIR/$name.pb.gz
	out=$WORKDIR/$name.$weight.pb.gz
	export_or_fail "$src" "$WORKDIR/$name.$weight.folded" --format folded --weight "$weight"
	export_or_fail "$src" "$out" --format pprof --weight "$weight"
	f_total=$(folded_sum "$WORKDIR/$name.$weight.folded")
	g_total=$(go_total "$out" "$WORKDIR/$name.$weight.top")
	got_types=$(pprof_sums "$out" | awk '{ printf "%s%s", n++ ? "," : "", $1 }')
	default=$(awk '/^Type:/ { print $2 }' "$WORKDIR/$name.$weight.top")
	info "pprof --weight $weight: columns $got_types (shown: $default), go tool pprof total $g_total, folded $f_total"
	[ "$got_types" = "$types" ] || fail "pprof --weight $weight: columns $got_types, expected $types"
	want_default=$([ "$weight" = cpu ] && echo samples || echo "$weight")
	[ "$default" = "$want_default" ] || fail "pprof --weight $weight: go tool pprof shows '$default' first, expected $want_default"
	[ "$f_total" -gt 0 ] && [ "$g_total" = "$f_total" ] ||
		fail "pprof --weight $weight: go tool pprof total '$g_total', folded total $f_total"
done
lat_total=$(folded_sum "$WORKDIR/pipe.latency.folded")
cpu_total=$(folded_sum "$WORKDIR/hot.cpu.folded")
want=$(awk -v c="$cpu_ns" 'BEGIN { printf "%.0f", c * 499 / 1e9 }')
in_range "$(ratio "$cpu_total" "$want")" 0.7 "$(away_hi 1.1)" ||
	fail "pprof --weight cpu: $cpu_total samples of hot_ab, its CPU time says $want at 499 Hz"
go_pprof_top_unit "$WORKDIR/pipe.latency.pb.gz" "$WORKDIR/pipe.lines" -lines
if ! grep -Eq ' wait_on_pipe [^ ]*sys_pipe\.c:[0-9]+' "$WORKDIR/pipe.lines"; then
	grep -v '^latprof:' "$WORKDIR/pipe.lines" | head -n 15 | sed 's/^/  | /'
	fail "go tool pprof -lines shows no wait_on_pipe at sys_pipe.c:LINE in the latency export"
fi

# --- prometheus ---
prom=$WORKDIR/pipe.prom
export_or_fail "$prof" "$prom" --format prometheus
promtool check metrics <"$prom" >"$WORKDIR/promtool.out" 2>&1
rc=$?
if [ $rc != 0 ] || [ -s "$WORKDIR/promtool.out" ]; then
	diag_file "promtool check metrics" "$WORKDIR/promtool.out"
	fail "promtool check metrics exited $rc on the prometheus export"
fi
# prom_value NAME LABELS: the value of the series NAME{LABELS} (labels in order)
prom_value()
{
	awk -v s="$1{$2}" 'index($0, s " ") == 1 { print $NF }' "$prom"
}
series="pid=\"$pid\",comm=\"sys_pipe\",syscall=\"read\""
lo=$(prom_value latprof_syscall_duration_seconds_bucket "$series,le=\"0.032768\"")
hi=$(prom_value latprof_syscall_duration_seconds_bucket "$series,le=\"0.065536\"")
count=$(prom_value latprof_syscall_duration_seconds_count "$series")
sum=$(prom_value latprof_syscall_duration_seconds_sum "$series")
sleeps=$(prom_value latprof_syscall_duration_seconds_count "pid=\"$child\",comm=\"sys_pipe\",syscall=\"clock_nanosleep\"")
export_or_fail "$prof" "$WORKDIR/pipe.json" --format json --weight latency --top 1
j_count=$(json_syscall "$WORKDIR/pipe.json" "$pid" read count)
info "prometheus: read le=0.065536 $hi - le=0.032768 $lo, _count $count (json $j_count), _sum $sum s (truth $read_ns ns); child clock_nanosleep _count $sleeps"
if [ -z "$hi" ] || [ -z "$lo" ] || [ $((hi - lo)) != 20 ]; then
	grep -F "$series" "$prom" | grep -v ' 0$' | sed 's/^/  | /'
	fail "prometheus: $((${hi:-0} - ${lo:-0})) reads of sys_pipe in (32.768, 65.536] ms, expected 20"
fi
[ "$count" -ge 20 ] && [ "$count" = "$j_count" ] || fail "prometheus: read _count $count, expected >= 20 and the JSON count $j_count"
in_range "$(calc "$sum * 1e9 / $read_ns")" 0.95 1.05 && in_range "$sum" 0.95 1.05 ||
	fail "prometheus: read _sum $sum s, expected 1.0 s +-5% and read_ns $read_ns +-5%"
[ "$sleeps" = 20 ] || fail "prometheus: the child's clock_nanosleep _count is '$sleeps', expected 20"
blocked=$(prom_value latprof_offcpu_seconds_total "pid=\"$pid\",comm=\"sys_pipe\",state=\"blocked\"")
unmatched=$(json_py "$WORKDIR/pipe.json" 'print(j["lost"]["offcpu_unmatched"])')
max_read_ns=$(kv "$WORKDIR/pipe.out" "sys_pipe " max_read_ns)
covered_ns=$((read_ns - ${unmatched:-0} * ${max_read_ns:-0}))
info "prometheus: sys_pipe blocked off CPU $blocked s (its reads alone $read_ns ns; $unmatched off-CPU intervals lost, the reads less as many of the longest $covered_ns ns)"
[ -n "$unmatched" ] && [ -n "$max_read_ns" ] || fail "no lost.offcpu_unmatched in the JSON export, or no max_read_ns from sys_pipe"
in_range "$(calc "${blocked:-0} * 1e9 / $covered_ns")" 0.95 1.5 ||
	fail "prometheus: sys_pipe blocked off CPU '$blocked' s, expected at least its reads' $covered_ns ns (-5%)"

# --- json additions ---
err=$(json_py "$WORKDIR/pipe.json" '
e = []
lost = j.get("lost")
keys = [k[5:] for k in j.get("metadata", {}) if k.startswith("lost.")]
if not isinstance(lost, dict) or sorted(lost) != sorted(keys): e.append("lost %r vs metadata %r" % (lost, keys))
elif j.get("lost_total") != sum(lost.values()): e.append("lost_total %r" % j.get("lost_total"))
top = j.get("top_stacks", [])
best = max((s["value"] for s in j["stacks"]), default=0)
if len(top) != 1 or top[0]["value"] != best: e.append("top_stacks %r, heaviest %d" % (top, best))
print("; ".join(e))')
[ -z "$err" ] || fail "json: $err"

# --- speedscope ---
# ss_check FILE FOLDED UNIT NPROFILES: prints what is wrong, nothing if all is well.
ss_check()
{
	json_py "$1" '
folded, unit, nprof = sys.argv[2], sys.argv[3], int(sys.argv[4])
e = []
for k in ("$schema", "shared", "profiles"):
    if k not in j: e.append("no %r" % k)
if j.get("$schema") != "https://www.speedscope.app/file-format-schema.json": e.append("$schema %r" % j.get("$schema"))
frames = j["shared"]["frames"]
if any(not isinstance(f.get("name"), str) or not f["name"] for f in frames): e.append("a frame without a name")
profs = j["profiles"]
if len(profs) != nprof: e.append("%d profiles, expected %d" % (len(profs), nprof))
if not 0 <= j.get("activeProfileIndex", 0) < len(profs): e.append("activeProfileIndex out of range")
total = 0
for p in profs:
    if p.get("type") != "sampled" or p.get("unit") != unit: e.append("profile %r: type %r unit %r" % (p.get("name"), p.get("type"), p.get("unit")))
    if len(p["samples"]) != len(p["weights"]): e.append("samples and weights differ in length")
    if any(not 0 <= i < len(frames) for s in p["samples"] for i in s): e.append("frame index out of range")
    if sum(p["weights"]) != p["endValue"] - p["startValue"]: e.append("weights of %r add up to %d, endValue %r" % (p["name"], sum(p["weights"]), p["endValue"]))
    total += sum(p["weights"])
ftotal, fnames = 0, set()
for line in open(folded):
    stack, w = line.rstrip("\n").rsplit(" ", 1)
    ftotal += int(w)
    fnames.update(stack.split(";")[1:])
if total != ftotal: e.append("weights add up to %d, folded total %d" % (total, ftotal))
used = {frames[i]["name"] for p in profs for s in p["samples"] for i in s}
if used != fnames: e.append("frame names differ from folded: %r" % sorted(used ^ fnames)[:5])
w = [f for f in frames if f["name"] == "wait_on_pipe"]
if folded.endswith("latency.folded") and (len(w) != 1 or not w[0].get("file", "").endswith("sys_pipe.c") or not w[0].get("line", 0) > 0):
    e.append("wait_on_pipe frame %r, expected file sys_pipe.c and a line" % w)
print("; ".join(e))' "$2" "$3" "$4"
}
export_or_fail "$prof" "$WORKDIR/pipe.speedscope.json" --format speedscope --weight latency
err=$(ss_check "$WORKDIR/pipe.speedscope.json" "$WORKDIR/pipe.latency.folded" nanoseconds 2)
[ -z "$err" ] || { diag_file speedscope "$WORKDIR/pipe.speedscope.json" 8; fail "speedscope --weight latency: $err"; }
export_or_fail "$hot" "$WORKDIR/hot.speedscope.json" --format speedscope --weight cpu
err=$(ss_check "$WORKDIR/hot.speedscope.json" "$WORKDIR/hot.cpu.folded" none 1)
[ -z "$err" ] || { diag_file speedscope "$WORKDIR/hot.speedscope.json" 8; fail "speedscope --weight cpu: $err"; }

# --- record -o FORMAT ---
short=("$FIXTURES/sys_pipe" 5 10)
for ext in folded json speedscope.json prom svg; do
	out=$WORKDIR/rec.$ext
	lp_record "$out.out" "$out.err" --weight latency -o "$out" -- "${short[@]}"
	rc=$?
	[ $rc = 0 ] && [ -s "$out" ] || { diag_file "record stderr" "$out.err"; fail "record -o rec.$ext exited $rc or wrote nothing"; }
	case $ext in
	folded)
		check_folded_syntax "$out"
		grep -q ';wait_on_pipe;read;syscall:read [0-9]*$' "$out" ||
			{ diag_file folded "$out"; fail "record -o rec.folded: no latency stack ending wait_on_pipe;read;syscall:read"; } ;;
	json)
		json_check "$out"
		[ "$(json_py "$out" 'print(j["weight"])')" = latency ] || fail "record -o rec.json: weight is not latency" ;;
	speedscope.json)
		[ "$(json_py "$out" 'print(j["profiles"][0]["unit"], j["$schema"].rsplit("/", 1)[1])')" = \
			"nanoseconds file-format-schema.json" ] || fail "record -o rec.speedscope.json is no speedscope file" ;;
	prom)
		promtool check metrics <"$out" >"$out.check" 2>&1 || { diag_file promtool "$out.check"; fail "record -o rec.prom: promtool check metrics failed"; }
		grep -q '^latprof_syscall_duration_seconds_count{.*syscall="read"} ' "$out" || fail "record -o rec.prom: no read histogram" ;;
	svg)
		xmllint --noout "$out" 2>"$out.check" || { diag_file xmllint "$out.check"; fail "record -o rec.svg: not well-formed XML"; }
		grep -q 'data-name="wait_on_pipe"' "$out" && grep -q 'data-name="syscall:read"' "$out" ||
			fail "record -o rec.svg: no wait_on_pipe or syscall:read frame" ;;
	esac
done

# --- bad usage: exit 2, a message naming what is valid, no file, nothing run ---
mkdir -p "$WORKDIR/bad"
for ext in bogus; do
	lp_record "$WORKDIR/bad/$ext.out" "$WORKDIR/bad/$ext.err" -o "$WORKDIR/bad/x.$ext" -- touch "$WORKDIR/bad/ran"
	rc=$?
	[ $rc = 2 ] || fail "record -o x.$ext exited $rc, expected 2"
	grep -Eq "x\.$ext.*(\.pb\.gz|flamegraph)" "$WORKDIR/bad/$ext.err" || { diag_file stderr "$WORKDIR/bad/$ext.err"; fail "record -o x.$ext: the message names neither the file nor what is valid"; }
done
lp_record "$WORKDIR/bad/w.out" "$WORKDIR/bad/w.err" --mode cpu --weight latency -o "$WORKDIR/bad/x.folded" -- touch "$WORKDIR/bad/ran"
rc=$?
[ $rc = 2 ] || fail "record --mode cpu --weight latency -o x.folded exited $rc, expected 2"
grep -q "mode syscall" "$WORKDIR/bad/w.err" || { diag_file stderr "$WORKDIR/bad/w.err"; fail "record --mode cpu --weight latency: the message does not say which --mode is needed"; }
lp_export "$prof" "$WORKDIR/bad/x.out" --format bogus
rc=$?
[ $rc = 2 ] || fail "export --format bogus exited $rc, expected 2"
grep -q "folded, speedscope, pprof, json, prometheus or svg" "$WORKDIR/bad/x.out.err" ||
	{ diag_file stderr "$WORKDIR/bad/x.out.err"; fail "export --format bogus does not name the valid formats"; }
lp_export "$prof" "$WORKDIR/bad/x.txt"
[ $? = 2 ] || fail "export -o x.txt without --format: expected exit 2"
left=$(ls -A "$WORKDIR/bad" | grep -v '\.\(out\|err\)$')
[ -z "$left" ] || fail "bad usage left files behind or ran the command: $left"
pass "latency $lat_total ns, $cpu_total cpu samples; read _sum $sum s, 20 reads in the 65.536 ms bucket"
