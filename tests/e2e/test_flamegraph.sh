#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Flame graph SVGs of real recordings, and what bad input does.
#
# Ground truth (from the fixtures, not latprof): hot_ab spends 75% of its
# CPU in hot_a (3x the work of hot_b); sys_pipe spends read_ns (printed by
# itself, ~1 s) blocked in read(); sys_wall spins spin_ns then sleeps
# sleep_ns (~1 s each). The SVGs are read with Python's XML parser.
# Checks:
#   - cpu: `flamegraph` of hot_ab: well-formed (xmllint), hot_a's frames
#     weigh 0.68..0.82 of the hot_ab frame, and the root frame equals the
#     folded export's total (the graph drops nothing);
#   - latency: the syscall:read frames of sys_pipe weigh read_ns +-10%;
#   - wall: hot/cold mode; spin_phase is 0.5 +-0.1 of sys_wall's wall time;
#     its off-CPU part (data-w2) is the share of its wall time the fixture
#     did not get a CPU (1 - spin_cpu_ns / spin_ns: preemption on a busy
#     machine) +-0.1; sleep_phase is >= 90% off CPU;
#   - diff: BEFORE = hot_ab's folded stacks, AFTER = the same with hot_b
#     tripled (ground truth by construction): hot_b's frame is red, hot_a's
#     blue, data-w/data-w2 are AFTER/BEFORE; a profile against itself is
#     all white; `--inverted --colors mem --minwidth 1%` are accepted;
#   - bad input exits 2 with one line naming the file and line and leaves
#     no output: a folded file with a bad weight on line 3, --width 5,
#     --colors nope, a missing profile, diff with one profile.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab sys_pipe sys_wall
command -v xmllint >/dev/null || fail "xmllint not installed (make setup: libxml2-utils)"

# --- cpu ---
record_and_fold ab -F 499 -- "$FIXTURES/hot_ab" 2
lp_flame_or_fail "$WORKDIR/cpu.svg" "$WORKDIR/ab.pb.gz"
proc=$(svg_sum "$WORKDIR/cpu.svg" hot_ab)
a=$(svg_sum "$WORKDIR/cpu.svg" hot_a)
all=$(svg_sum "$WORKDIR/cpu.svg" all)
folded_total=$(folded_sum "$WORKDIR/ab.folded")
info "cpu: hot_ab $proc samples, hot_a $a ($(ratio "$a" "$proc")), all $all (folded $folded_total)"
[ "$proc" -gt 0 ] || fail "cpu: no hot_ab frame in the SVG"
in_range "$(ratio "$a" "$proc")" 0.68 0.82 || fail "cpu: hot_a is $(ratio "$a" "$proc") of hot_ab, expected 0.75 (0.68..0.82)"
[ "$all" = "$folded_total" ] || fail "cpu: the root frame weighs $all, the folded export $folded_total"
grep -q '<title>CPU flame graph</title>\|id="title"[^>]*>CPU flame graph<' "$WORKDIR/cpu.svg" ||
	fail "cpu: no default title 'CPU flame graph'"

# --- latency ---
record_or_fail pipe -- "$FIXTURES/sys_pipe"
read_ns=$(kv "$WORKDIR/pipe.out" "sys_pipe " read_ns)
[ -n "$read_ns" ] || { diag_file "command stdout" "$WORKDIR/pipe.out"; fail "sys_pipe printed no read_ns"; }
lp_flame_or_fail "$WORKDIR/lat.svg" "$WORKDIR/pipe.pb.gz" --weight latency
rd=$(svg_sum "$WORKDIR/lat.svg" syscall:read)
info "latency: syscall:read frames $rd ns, sys_pipe measured $read_ns ns"
in_range "$(ratio "$rd" "$read_ns")" 0.9 1.1 || fail "latency: syscall:read weighs $rd ns, expected read_ns $read_ns +-10%"
grep -q 'data-unit="nanoseconds"' "$WORKDIR/lat.svg" || fail "latency: unit is not nanoseconds"

# --- wall (hot/cold) ---
record_or_fail wall --mode cpu,offcpu -F 499 -- "$FIXTURES/sys_wall" 1000 1000
lp_flame_or_fail "$WORKDIR/wall.svg" "$WORKDIR/wall.pb.gz" --weight wall
grep -q 'data-mode="hotcold"' "$WORKDIR/wall.svg" || fail "wall: not in hot/cold mode"
read -r wproc spin spin_off slp slp_off < <(svg_py "$WORKDIR/wall.svg" '
s = lambda n, k: sum(f[k] for f in frames if f["name"] == n)
print(s("sys_wall", "w"), s("spin_phase", "w"), s("spin_phase", "w2"), s("sleep_phase", "w"), s("sleep_phase", "w2"))')
info "wall: sys_wall $wproc ns, spin_phase $spin (off-CPU $spin_off), sleep_phase $slp (off-CPU $slp_off)"
in_range "$(ratio "$spin" "$wproc")" 0.4 0.6 || fail "wall: spin_phase is $(ratio "$spin" "$wproc") of the wall time, expected 0.5 +-0.1"
spin_ns=$(kv "$WORKDIR/wall.out" "sys_wall " spin_ns)
spin_cpu_ns=$(kv "$WORKDIR/wall.out" "sys_wall " spin_cpu_ns)
[ -n "$spin_cpu_ns" ] || { diag_file "command stdout" "$WORKDIR/wall.out"; fail "sys_wall printed no spin_cpu_ns"; }
truth_off=$(calc "1 - $spin_cpu_ns / $spin_ns")
in_range "$(calc "$(ratio "$spin_off" "$spin") - $truth_off")" -0.1 0.1 ||
	fail "wall: spin_phase is $(ratio "$spin_off" "$spin") off CPU, expected $truth_off (1 - spin_cpu_ns/spin_ns) +-0.1"
in_range "$(ratio "$slp_off" "$slp")" 0.9 1 || fail "wall: sleep_phase is $(ratio "$slp_off" "$slp") off CPU, expected >= 0.9"

# --- diff ---
awk "$FOLDED_AWK"'{ c = folded_parse(); m = 1; for (j = 1; j <= n; j++) if (f[j] == "hot_b") m = 3; print stack, c * m }' \
	"$WORKDIR/ab.folded" >"$WORKDIR/after.folded"
timeout -k 5 30 "$LATPROF" diff "$WORKDIR/ab.folded" "$WORKDIR/after.folded" --inverted --colors mem \
	--minwidth 1% -o "$WORKDIR/diff.svg" 2>"$WORKDIR/diff.err" ||
	{ diag_file "stderr" "$WORKDIR/diff.err"; fail "latprof diff of two folded files failed"; }
svg_check "$WORKDIR/diff.svg" diff
res=$(svg_py "$WORKDIR/diff.svg" '
rgb = lambda c: (int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16))
a = [f for f in frames if f["name"] == "hot_a"]
b = [f for f in frames if f["name"] == "hot_b"]
e = []
if not a or not b: e.append("no hot_a or hot_b frame")
else:
    ra, rb = rgb(a[0]["fill"]), rgb(b[0]["fill"])
    if not rb[0] > rb[2]: e.append("hot_b (grew) is %s, not red" % b[0]["fill"])
    if not ra[2] > ra[0]: e.append("hot_a (shrank) is %s, not blue" % a[0]["fill"])
    if b[0]["w"] != 3 * b[0]["w2"]: e.append("hot_b after %d before %d" % (b[0]["w"], b[0]["w2"]))
print("; ".join(e))')
[ -z "$res" ] || fail "diff: $res"
timeout -k 5 30 "$LATPROF" diff "$WORKDIR/ab.pb.gz" "$WORKDIR/ab.pb.gz" -o "$WORKDIR/same.svg" 2>"$WORKDIR/same.err" ||
	{ diag_file "stderr" "$WORKDIR/same.err"; fail "latprof diff of a profile with itself failed"; }
svg_check "$WORKDIR/same.svg" "diff (same)"
notwhite=$(svg_py "$WORKDIR/same.svg" 'print(sum(1 for f in frames if f["fill"] != "#ffffff" or f["w"] != f["w2"]))')
[ "$notwhite" = 0 ] || fail "diff of a profile with itself: $notwhite frames changed"

# --- bad input: exit 2, one line, no output left ---
bad=$WORKDIR/bad
mkdir -p "$bad"
printf 'a;b 1\n\na;b x1\n' >"$WORKDIR/bad.folded"
expect_bad()
{
	local what=$1 pat=$2 rc
	shift 2
	(cd "$bad" && timeout -k 5 30 "$LATPROF" "$@" >"$WORKDIR/bad.out" 2>"$WORKDIR/bad.err")
	rc=$?
	[ $rc = 2 ] || { diag_file "stderr" "$WORKDIR/bad.err"; fail "$what: exit $rc, expected 2"; }
	check_one_line_error "$WORKDIR/bad.err" "$pat" "$what"
	check_dir_empty "$bad" "$what"
}
expect_bad "bad folded weight" "bad\.folded:3: weight 'x1' is not a number" \
	flamegraph --folded "$WORKDIR/bad.folded" -o out.svg
expect_bad "bad folded (diff)" "bad\.folded:3: weight 'x1' is not a number" \
	diff "$WORKDIR/ab.folded" "$WORKDIR/bad.folded" -o out.svg
expect_bad "bad width" "width" flamegraph "$WORKDIR/ab.pb.gz" --width 5 -o out.svg
expect_bad "bad palette" "palette 'nope'" flamegraph "$WORKDIR/ab.pb.gz" --colors nope -o out.svg
expect_bad "bad minwidth" "minwidth" flamegraph "$WORKDIR/ab.pb.gz" --minwidth 3x -o out.svg
expect_bad "missing profile" "nosuch\.pb\.gz" flamegraph "$WORKDIR/nosuch.pb.gz" -o out.svg
expect_bad "diff of one profile" "BEFORE and AFTER" diff "$WORKDIR/ab.pb.gz" -o out.svg
expect_bad "default output, bad input" "weight 'x1'" flamegraph --folded "$WORKDIR/bad.folded"
pass "hot_a $(ratio "$a" "$proc") of hot_ab, syscall:read $(ratio "$rd" "$read_ns") of read_ns, spin_phase $(ratio "$spin" "$wproc") of wall"
