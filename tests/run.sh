#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run unit test binaries and e2e scripts; print one line per test and a final
# "N passed, M failed, K skipped". Exit 77 from a test means skipped; under
# CI=true a skipped test counts as failed (CI has root and BPF). LATPROF and
# FIXTURES, when set, name the program and fixture directory the e2e tests use
# (the Makefile sets them: build-san/ under SANITIZE=1). TEST_WRAPPER, when
# set, is a command the unit tests run under (`make check-valgrind`). Each
# test gets TEST_TIMEOUT_S seconds (default 120). A failed test's work
# directory (its profiles, folded files, logs) is kept in
# FAILED_DIR/NAME (default build/failed-tests), so a failure seen once in CI
# can be studied after the run. Each line gives the test's wall time, so
# what makes a slow CI run slow can be read from its log.
# usage: tests/run.sh SUITE TEST...
set -u
suite=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
limit=${TEST_TIMEOUT_S:-120}
failed_dir=${FAILED_DIR:-$top/build/failed-tests}
pass=0 fail=0 skip=0
failed=()
for t in "$@"; do
	name=${t#"$top"/}
	work=$(mktemp -d /tmp/latprof-test.XXXXXX)
	log=$work/log
	t0=$EPOCHREALTIME
	case $t in
	*.sh) LATPROF=${LATPROF:-$top/latprof} FIXTURES=${FIXTURES:-$top/build/fixtures} WORKDIR=$work \
		timeout "$limit" bash "$t" >"$log" 2>&1 ;;
	*) (cd "$work" && timeout "$limit" ${TEST_WRAPPER:-} "$top/$t") >"$log" 2>&1 ;;
	esac
	rc=$?
	took=$(LC_ALL=C awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }')
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS $name ($took)"
	elif [ $rc -eq 77 ] && [ "${CI:-}" != true ]; then
		skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")"
	else
		fail=$((fail + 1)); failed+=("$name")
		[ $rc -eq 77 ] && echo "FAIL $name (skipped, but CI=true requires it to run)" \
			|| echo "FAIL $name (exit $rc, $took)"
		sed 's/^/    | /' "$log" | tail -n 40
		keep=$failed_dir/$(basename "$name")
		# not where the tree is read-only (the kernels' guest)
		rm -rf "$keep" 2>/dev/null && mkdir -p "$failed_dir" 2>/dev/null &&
			cp -a "$work" "$keep" 2>/dev/null && echo "    | (work directory kept in $keep)"
	fi
	rm -rf "$work"
done
[ ${#failed[@]} -gt 0 ] && echo "failed ($suite): ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped in $SECONDS s"
[ $fail -eq 0 ]
