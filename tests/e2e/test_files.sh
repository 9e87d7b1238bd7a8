#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# File I/O per path: a model file loaded by examples/model_server/load_model.py.
#
# Ground truth (not from latprof): the model file's size (stat), which
# joblib.load reads once, whole, through one descriptor; load_model.py
# prints its pid and the model's bytes. The model (20 trees) is trained in a
# first, unrecorded run. The recorded run opens it by a relative path from
# its working directory.
# Checks, `record --files -- python3 load_model.py --model m.joblib`:
#   - json "files" has the model at its absolute path (resolved against the
#     process's cwd), opened once, with exactly its size as bytes read and
#     nothing written;
#   - report lists it in the Files section.
. "$(dirname "$0")/lib.sh"
require_root_bpf
/usr/bin/python3 -c 'import joblib, sklearn' 2>/dev/null || skip "python3-sklearn or python3-joblib missing"
script=$(cd "$(dirname "$0")/../../examples/model_server" && pwd)/load_model.py
cd "$WORKDIR" || fail "cannot cd to $WORKDIR"

timeout 60 /usr/bin/python3 "$script" --model m.joblib --trees 20 --seconds 0.2 --grow-mb 1 >train.out 2>&1 ||
	{ diag_file train train.out; fail "load_model.py could not train the model"; }
size=$(stat -c %s m.joblib)

record_or_fail files --files -- /usr/bin/python3 "$script" --model m.joblib --seconds 0.5 --grow-mb 4
out=$WORKDIR/files.out
printed=$(kv "$out" "load_model pid=" model_bytes)
[ "$printed" = "$size" ] || { diag_file "command stdout" "$out"; fail "load_model.py says model_bytes=$printed, stat says $size"; }

json=$WORKDIR/files.json
"$LATPROF" export files.pb.gz --format json -o "$json" 2>export.err || { diag_file export export.err; fail "export --format json failed"; }
got=$(json_py "$json" '
f = [x for x in j.get("files", []) if x["path"] == sys.argv[2]]
print(f[0]["opens"], f[0]["bytes_read"], f[0]["bytes_written"]) if f else print("none")' "$WORKDIR/m.joblib")
info "files: $WORKDIR/m.joblib opens/read/written = $got (truth 1 $size 0)"
if [ "$got" != "1 $size 0" ]; then
	json_py "$json" 'print("\n".join("  %s %d %d" % (x["path"], x["opens"], x["bytes_read"]) for x in j.get("files", [])[:15]))'
	fail "model file: opens/read/written '$got', expected '1 $size 0'"
fi
"$LATPROF" report files.pb.gz --no-color >report.txt 2>&1
grep -q "^Files " report.txt && grep -qF "$WORKDIR/m.joblib" report.txt ||
	{ diag_file report report.txt 80; fail "report's Files section does not list the model"; }
pass "model file read whole: $size bytes"
