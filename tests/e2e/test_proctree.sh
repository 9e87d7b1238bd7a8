#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The process tree of `record -- COMMAND`: parents, command lines, exit
# status and lifetimes.
#
# Ground truth (not from latprof): the command is
#   /usr/bin/time -f 'elapsed=%e status=%x' -o TIME sh -c 'sleep 0.2; /bin/true; sleep 0.3; exit 3'
# so the tree must be time -> sh -> (sleep 0.2, /bin/true, sleep 0.3), one
# after the other; GNU time measures sh's wall time and exit status itself,
# and each sleep lives at least as long as its argument.
# Checks, on `export --format json`:
#   - parents and command lines as above, children in start order, each
#     starting after the previous one ended;
#   - sh's lifetime within 50 ms of time's elapsed, its exit code 3 (time's
#     %x), /bin/true's 0;
#   - each sleep's lifetime in [ARG, ARG + 50 ms];
#   - report prints a Processes section with the children indented.
. "$(dirname "$0")/lib.sh"
require_root_bpf
[ -x /usr/bin/time ] || skip "needs GNU time (/usr/bin/time)"

script='sleep 0.2; /bin/true; sleep 0.3; exit 3'
record_or_fail tree -- /usr/bin/time -f 'elapsed=%e status=%x' -o "$WORKDIR/time.txt" sh -c "$script"
elapsed=$(kv "$WORKDIR/time.txt" "elapsed=" elapsed)
status=$(kv "$WORKDIR/time.txt" "elapsed=" status)
[ -n "$elapsed" ] || { diag_file "time output" "$WORKDIR/time.txt"; fail "GNU time wrote no elapsed="; }
info "GNU time: sh elapsed ${elapsed}s, status $status"
export_or_fail "$WORKDIR/tree.pb.gz" "$WORKDIR/tree.json" --format json

res=$(json_py "$WORKDIR/tree.json" '
elapsed, status, script = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ps = j["processes"]
e = []
def life(p): return (p["end_ns"] - p["start_ns"]) / 1e9 if p["end_ns"] is not None else None
def show(p): return "%s[%d] %r %.3fs exit %s" % (p["comm"], p["pid"], p["cmdline"], life(p) or -1, p["exit_code"])
roots = [i for i, p in enumerate(ps) if p["parent"] < 0]
if len(roots) != 1 or not ps[roots[0]]["cmdline"].startswith("/usr/bin/time "):
    e.append("expected one root /usr/bin/time, got %s" % [show(ps[i]) for i in roots])
sh = [i for i, p in enumerate(ps) if p["cmdline"] == "sh -c " + script]
if len(sh) != 1 or ps[sh[0]]["parent"] != roots[0]:
    e.append("expected sh -c SCRIPT under time, got %s" % [show(p) for p in ps])
else:
    s = sh[0]
    kids = [p for p in ps if p["parent"] == s]
    want = ["sleep 0.2", "/bin/true", "sleep 0.3"]
    if [k["cmdline"] for k in kids] != want:
        e.append("sh children %s, expected %s" % ([k["cmdline"] for k in kids], want))
    else:
        for a, b in zip(kids, kids[1:]):
            if b["start_ns"] < a["end_ns"]:
                e.append("%s started before %s ended" % (b["cmdline"], a["cmdline"]))
        for k, arg in ((kids[0], 0.2), (kids[2], 0.3)):
            if not arg <= life(k) <= arg + 0.05:
                e.append("%s lived %.3fs, expected [%.2f, %.2f]" % (k["cmdline"], life(k), arg, arg + 0.05))
        if kids[1]["exit_code"] != 0:
            e.append("/bin/true exit code %s" % kids[1]["exit_code"])
    shp = ps[s]
    if abs(life(shp) - elapsed) > 0.05:
        e.append("sh lived %.3fs, GNU time says %.2fs" % (life(shp), elapsed))
    if shp["exit_code"] != status or status != 3:
        e.append("sh exit code %s, GNU time says %d" % (shp["exit_code"], status))
    print("OK sh %.3fs (time %.2fs), children %s" % (life(shp), elapsed,
          ", ".join("%s %.3fs" % (k["cmdline"], life(k)) for k in kids)) if not e else "")
if e: print("FAIL " + "; ".join(e))
' "$elapsed" "$status" "$script")
case "$res" in
OK*) info "${res#OK }" ;;
*)
	json_py "$WORKDIR/tree.json" 'print("\n".join("  | %r" % p for p in j["processes"]))'
	fail "${res#FAIL }" ;;
esac

timeout -k 5 30 "$LATPROF" report "$WORKDIR/tree.pb.gz" --no-color >"$WORKDIR/report.txt" 2>&1 ||
	fail "latprof report exited $?"
if ! grep -q '^Processes (5;' "$WORKDIR/report.txt" ||
   ! grep -qE '^ .*   sleep 0\.3$' "$WORKDIR/report.txt"; then
	sed -n '/^Processes/,/^$/p' "$WORKDIR/report.txt" | sed 's/^/  | /'
	fail "report has no Processes section with the children indented"
fi
pass "${res#OK }"
