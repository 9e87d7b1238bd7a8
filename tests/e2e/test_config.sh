#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# record --config FILE: a YAML file of record's long options, overridden by
# the command line; a bad file is bad input with its line number.
#
# Ground truth: sys_pipe prints how many reads it made (reads=N); the file
# says what was asked (freq 199, only read traced, min-duration 0).
# Checks:
#   - freq_hz is 199 and syscalls is "read" in the profile's metadata; the
#     syscall table has only read, and sys_pipe's read count >= its reads;
#   - `-F 99` after --config wins: freq_hz 99;
#   - an unknown key, bad YAML and a flag that is not true/false exit 2
#     naming FILE:LINE, write no output and run nothing.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe

cfg=$WORKDIR/record.yaml
cat >"$cfg" <<'YAML'
# what to record
freq: 199
syscalls: [read]
min-duration: 0
requests: false
YAML
record_or_fail cfg --config "$cfg" -- "$FIXTURES/sys_pipe" 5 10
reads=$(kv "$WORKDIR/cfg.out" "sys_pipe " reads)
[ -n "$reads" ] || fail "sys_pipe printed no reads="
json=$WORKDIR/cfg.json
export_or_fail "$WORKDIR/cfg.pb.gz" "$json" --format json
got=$(json_py "$json" '
m = j["metadata"]
names = sorted({s["name"] for s in j["syscalls"]})
pipe = sum(s["count"] for s in j["syscalls"] if s["comm"] == "sys_pipe" and s["name"] == "read")
print(m.get("freq_hz"), m.get("syscalls"), ",".join(names), pipe)')
read -r freq sys names pipe <<<"$got"
info "config: freq_hz $freq, syscalls $sys, traced $names, sys_pipe reads $pipe (fixture: $reads)"
[ "$freq" = 199 ] || fail "--config freq: 199 gave freq_hz $freq"
[ "$sys" = read ] && [ "$names" = read ] || fail "--config syscalls: [read] gave metadata '$sys' and syscalls '$names'"
[ "$pipe" -ge "$reads" ] || fail "sys_pipe made $reads reads, the profile counts $pipe"

record_or_fail over --config "$cfg" -F 99 -- "$FIXTURES/sys_pipe" 2 5
export_or_fail "$WORKDIR/over.pb.gz" "$WORKDIR/over.json" --format json
freq=$(json_py "$WORKDIR/over.json" 'print(j["metadata"].get("freq_hz"))')
[ "$freq" = 99 ] || fail "-F 99 after --config (freq: 199) gave freq_hz $freq"

mkdir -p "$WORKDIR/bad"
bad_config()
{
	local name=$1 want=$2
	printf '%b' "$3" >"$WORKDIR/bad/$name.yaml"
	lp_record "$WORKDIR/bad/$name.out" "$WORKDIR/bad/$name.err" --config "$WORKDIR/bad/$name.yaml" \
		-o "$WORKDIR/bad/$name.pb.gz" -- touch "$WORKDIR/bad/ran"
	local rc=$?
	[ $rc = 2 ] || fail "--config $name: exit $rc, expected 2"
	grep -q "$name.yaml:$want" "$WORKDIR/bad/$name.err" ||
		{ diag_file stderr "$WORKDIR/bad/$name.err"; fail "--config $name: the message does not name $name.yaml:$want"; }
}
bad_config unknown "2: unknown key 'bogus'" 'freq: 99\nbogus: 1\n'
bad_config yaml "3: bad YAML" 'freq: 99\nmode: [cpu,\n'
bad_config flag "1: requests is a flag" 'requests: maybe\n'
[ ! -e "$WORKDIR/bad/ran" ] || fail "a bad --config still ran the command"
ls "$WORKDIR/bad"/*.pb.gz >/dev/null 2>&1 && fail "a bad --config left an output file"
pass "--config: freq 199, only read traced ($pipe reads >= $reads), -F overrides, 3 bad files refused with their line"
