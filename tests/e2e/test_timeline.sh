#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The timeline and memory of a model-loading workload: a loading phase
# (files, rising RSS) before a CPU-bound inference phase.
#
# Ground truth (not from latprof): examples/model_server/load_model.py
# prints its phases with CLOCK_MONOTONIC start/end times (the clock of the
# timeline's "timeline_start_monotonic_ns") and its own VmRSS before and
# after each. The model is trained and saved before the recording.
# Checks, `record --interval 0.5 --mode cpu,syscall -- python3 load_model.py`,
# export --format json and `latprof timeline`:
#   - loading: the intervals that begin before the inference phase opened
#     >= 100 files and spent file syscall time; the RSS at the end of the
#     interval where loading ends is >= 90% of the script's RSS after load;
#   - inference: every interval wholly inside it opens no file and is CPU
#     dominated (CPU > twice all syscall time); their CPU adds up to the
#     script's own: the phase's process CPU time (time.process_time_ns) over
#     its wall time, times the intervals' length, in samples at the default
#     99 Hz, N, within 3 sqrt(N) + 3 samples (sampling's spread, plus a
#     sample at each end of the span); RSS rises through it by >= half of
#     what the script reports;
#   - the last loading interval ends within one interval of the inference
#     phase's start;
#   - the process's peak RSS is within 10% of the script's RSS after inference;
#   - `latprof timeline` writes a well-formed SVG with one bar group per
#     interval, each titled with the JSON's interval: its start, its CPU in
#     s/s (3 decimals) and its files opened.
. "$(dirname "$0")/lib.sh"
require_root_bpf
/usr/bin/python3 -c 'import sklearn, joblib' 2>/dev/null || skip "needs python3-sklearn and python3-joblib"
script=$(cd "$(dirname "$0")/../../examples/model_server" && pwd)/load_model.py
model=$WORKDIR/model/digits_rf_big.joblib

# train and save outside the recording (its output is not the test's)
timeout -k 5 40 /usr/bin/python3 "$script" --model "$model" --seconds 0.1 --grow-mb 1 \
	>"$WORKDIR/train.out" 2>&1 || { diag_file "training" "$WORKDIR/train.out"; fail "load_model.py could not train the model"; }
record_or_fail tl --interval 0.5 --mode cpu,syscall -- /usr/bin/python3 "$script" \
	--model "$model" --seconds 3
grep -q 'phase=infer' "$WORKDIR/tl.out" || { diag_file "command stdout" "$WORKDIR/tl.out"; fail "load_model.py printed no infer phase"; }
export_or_fail "$WORKDIR/tl.pb.gz" "$WORKDIR/tl.json" --format json

res=$(json_py "$WORKDIR/tl.json" '
ph = {}
for line in open(sys.argv[2]):
    w = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    if "phase" in w: ph[w["phase"]] = {k: int(v) for k, v in w.items() if v.isdigit()}
pid = [int(x.split("=")[1]) for x in open(sys.argv[2]).read().split() if x.startswith("pid=")][0]
t0, I = j["timeline_start_monotonic_ns"], j["timeline_interval_ns"]
tl = j["timeline"]
load_end = ph["load"]["end_ns"] - t0
inf_start, inf_end = ph["infer"]["start_ns"] - t0, ph["infer"]["end_ns"] - t0
e = []
def sys_ns(v): return sum(v[k + "_ns"] for k in ("file", "network", "sync", "sleep", "other"))
def end(v): return v["start_ns"] + v["duration_ns"]
rows = " ".join("[%.2f cpu %.2f file %.3f opens %d rss %dM]" % (v["start_ns"] / 1e9,
                v["cpu_ns"] / v["duration_ns"], v["file_ns"] / 1e9, v["opens"], v["rss_kb"] >> 10) for v in tl)
before = [v for v in tl if v["start_ns"] < inf_start]
opens, file_ns = sum(v["opens"] for v in before), sum(v["file_ns"] for v in before)
if opens < 100 or file_ns <= 0:
    e.append("loading: %d opens, %d ns in file syscalls before inference" % (opens, file_ns))
at_load = [v for v in tl if v["start_ns"] <= load_end < end(v)]
if not at_load or at_load[0]["rss_kb"] < 0.9 * ph["load"]["rss_kb_after"]:
    e.append("RSS where loading ends: %s kB, script says %d" % (at_load[0]["rss_kb"] if at_load else None, ph["load"]["rss_kb_after"]))
inside = [v for v in tl if v["start_ns"] >= inf_start and end(v) <= inf_end]
if len(inside) < 3:
    e.append("only %d intervals inside the inference phase" % len(inside))
for v in inside:
    cpu = v["cpu_ns"] / v["duration_ns"]
    if v["opens"] or v["cpu_ns"] <= 2 * sys_ns(v):
        e.append("inference interval at %.2fs: cpu %.2f s/s, syscalls %.3f s, %d opens" % (v["start_ns"] / 1e9, cpu, sys_ns(v) / 1e9, v["opens"]))
period = 1e9 / 99
cpu_note = ""
if inside:
    rate = ph["infer"]["cpu_ns"] / (inf_end - inf_start)
    want = rate * sum(v["duration_ns"] for v in inside) / period
    got = sum(v["cpu_ns"] for v in inside) / period
    cpu_note = "inference CPU %.0f samples, the script CPU time gives %.1f" % (got, want)
    if abs(got - want) > 3 * want ** 0.5 + 3:
        e.append(cpu_note + " (want within 3 sqrt(N) + 3)")
grow = ph["infer"]["rss_kb_after"] - ph["infer"]["rss_kb_before"]
if inside and inside[-1]["rss_kb"] - inside[0]["rss_kb"] < grow / 2 * (end(inside[-1]) - end(inside[0])) / (inf_end - inf_start):
    e.append("RSS through inference %d -> %d kB, the script grew %d kB" % (inside[0]["rss_kb"], inside[-1]["rss_kb"], grow))
load_iv = [v for v in before if v["opens"] or v["file_ns"] > 1000000]
last = end(load_iv[-1]) if load_iv else None
if last is None or abs(last - inf_start) > I:
    e.append("last loading interval ends at %s, inference starts at %.3fs (interval %.2fs)" % (last and "%.3fs" % (last / 1e9), inf_start / 1e9, I / 1e9))
proc = [p for p in j["processes"] if p["pid"] == pid]
peak, truth = (proc[0]["peak_rss_kb"] if proc else 0), ph["infer"]["rss_kb_after"]
if not 0.9 <= peak / truth <= 1.1:
    e.append("peak RSS %d kB, the script says %d kB after inference" % (peak, truth))
if e:
    print("FAIL " + "; ".join(e) + " | timeline: " + rows)
else:
    print("OK %d intervals; loading ends in the interval ending %.2fs (inference from %.3fs); peak RSS %d kB vs %d kB (%+.1f%%); inference CPU %s s/s; %s" % (
          len(tl), last / 1e9, inf_start / 1e9, peak, truth, 100.0 * (peak - truth) / truth,
          ",".join("%.2f" % (v["cpu_ns"] / v["duration_ns"]) for v in inside), cpu_note))
' "$WORKDIR/tl.out")
case "$res" in
OK*) info "${res#OK }" ;;
*)
	diag_file "command stdout" "$WORKDIR/tl.out"
	fail "${res#FAIL }" ;;
esac

timeout -k 5 30 "$LATPROF" timeline "$WORKDIR/tl.pb.gz" -o "$WORKDIR/tl.svg" 2>"$WORKDIR/tl.svg.err" ||
	{ diag_file "stderr" "$WORKDIR/tl.svg.err"; fail "latprof timeline exited $?"; }
xmllint --noout "$WORKDIR/tl.svg" 2>"$WORKDIR/tl.xmllint" ||
	{ diag_file "xmllint" "$WORKDIR/tl.xmllint"; fail "xmllint rejects the timeline SVG"; }
svg=$(/usr/bin/python3 - "$WORKDIR/tl.svg" "$WORKDIR/tl.json" <<'EOF'
import json, re, sys
svg, j = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
tl = j["timeline"]
groups = re.findall(r'<g class="iv" data-start="([0-9.]+)"><title>([^<]*)</title>', svg)
bad = []
if len(groups) != len(tl):
    bad.append("%d interval groups, the JSON has %d intervals" % (len(groups), len(tl)))
for (start, title), v in zip(groups, tl):
    m = re.search(r"cpu ([0-9.]+) s/s.*files opened (\d+)", title)
    cpu = v["cpu_ns"] / v["duration_ns"]
    if (abs(float(start) - v["start_ns"] / 1e9) > 0.0015 or not m or
            abs(float(m.group(1)) - cpu) > 0.0015 or int(m.group(2)) != v["opens"]):
        bad.append("group at %s: %r, JSON: start %.3f cpu %.3f opens %d" %
                   (start, title[:120], v["start_ns"] / 1e9, cpu, v["opens"]))
print("FAIL " + "; ".join(bad[:3]) if bad else "OK %d groups match the JSON" % len(groups))
EOF
)
case "$svg" in
OK*) info "svg: ${svg#OK }" ;;
*) fail "timeline SVG: ${svg#FAIL }" ;;
esac
pass "${res#OK }"
