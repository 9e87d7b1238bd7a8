#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every option the docs give a verb exists: the long options of the man page
# (docs/latprof.1: each verb's SYNOPSIS line, the RECORD OPTIONS and EXPORT
# OPTIONS items, the SERVE section) and of every `latprof VERB ...` command
# in README.md and docs/*.md must appear in `latprof VERB --help`
# (tests/e2e/docs_options_check.py). Ground truth: the program's own --help.
# A man page with one option misspelt must be refused (the check can fail).
# No root needed.
. "$(dirname "$0")/lib.sh"
top=$(cd "$_lib_dir/../.." && pwd)
check=$_lib_dir/docs_options_check.py
[ -x "$LATPROF" ] || fail "no latprof binary at $LATPROF"

/usr/bin/python3 "$check" "$LATPROF" "$top/docs/latprof.1" "$top/README.md" "$top"/docs/*.md \
	>"$WORKDIR/check.out" 2>&1
rc=$?
sed 's/^/  | /' "$WORKDIR/check.out"
[ $rc = 0 ] || fail "options in the docs that latprof does not have (above)"

# the check can fail: --min-duration misspelt in the man page's RECORD OPTIONS
sed 's/^\.BR \\-\\-min\\-duration /.BR \\-\\-min\\-durations /' "$top/docs/latprof.1" \
	>"$WORKDIR/bad.1"
cmp -s "$top/docs/latprof.1" "$WORKDIR/bad.1" && fail "could not make a broken man page"
/usr/bin/python3 "$check" "$LATPROF" "$WORKDIR/bad.1" >"$WORKDIR/bad.out" 2>&1 &&
	fail "a man page documenting record --min-durations passed the check"
grep -q -- 'latprof record --min-durations' "$WORKDIR/bad.out" ||
	fail "the broken man page failed for another reason: $(tail -n 1 "$WORKDIR/bad.out")"
pass "$(tail -n 1 "$WORKDIR/check.out")"
