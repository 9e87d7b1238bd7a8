#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# latprof's own priority (docs/troubleshooting.md, "A busy machine"): started
# at the default niceness, it records at nice -10, so on a saturated machine
# its reader keeps up with the kernel and its deadline holds; a niceness the
# user gave it is kept; a command it runs gets the niceness latprof was
# started with, never the one latprof took.
# Ground truth: field 19 of /proc/PID/stat, read by the command itself for
# its parent (latprof) and for itself.
. "$(dirname "$0")/lib.sh"
require_root_bpf

# run NICE: latprof started at NICE records a command that prints both values
run()
{
	nice -n "$1" "$LATPROF" record -q -o "$WORKDIR/n$1.pb.gz" -- \
		sh -c 'echo "$(cut -d" " -f19 /proc/$PPID/stat) $(cut -d" " -f19 /proc/self/stat)"' \
		2>"$WORKDIR/n$1.err"
}

got=$(run 0) || { diag_file "record stderr" "$WORKDIR/n0.err"; fail "record at nice 0 failed"; }
[ "$got" = "-10 0" ] || fail "started at nice 0: latprof and its command at '$got', want '-10 0'"
got=$(run 5) || { diag_file "record stderr" "$WORKDIR/n5.err"; fail "record at nice 5 failed"; }
[ "$got" = "5 5" ] || fail "started at nice 5: latprof and its command at '$got', want '5 5'"
pass "latprof at -10 and its command at 0 when started at 0; both at 5 when started at 5"
