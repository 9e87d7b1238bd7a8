#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz or replay the libFuzzer targets built by `make fuzz` (docs/fuzzing.md).
# usage: BUILD=build tests/fuzz/run.sh SECONDS TARGET...
#   SECONDS > 0: fuzz each target in turn for SECONDS from a copy of its seeds
#     in BUILD/fuzz/corpus/TARGET (which keeps growing across runs), then
#     replay that corpus once with full malloc stacks;
#   SECONDS = 0: replay the seeds only (`make check-fuzz`, a few seconds).
# Findings go to BUILD/fuzz/artifacts/ (crash-*, leak-*, timeout-*, oom-*);
# the first one stops the run with a non-zero status. Extra libFuzzer flags
# in FUZZ_FLAGS.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/${BUILD:-build}
seconds=${1:?usage: run.sh SECONDS TARGET...}
shift
art=$build/fuzz/artifacts/
mkdir -p "$art"
# Leaks inside libdw: see "Leaks inside libdw" in docs/fuzzing.md.
fast_supp=$top/tests/fuzz/lsan-libdw.supp
full_supp=$top/tests/fuzz/lsan.supp

seeds_of()
{
	if [ "$1" = symbolize ]; then
		echo "$build/fuzz/seeds"
	else
		echo "$top/tests/fuzz/corpus/$1"
	fi
}

for t in "$@"; do
	bin=$build/fuzz/fuzz_$t
	seeds=$(seeds_of "$t")
	if [ "$seconds" -eq 0 ]; then
		n=$(find "$seeds" -type f | wc -l)
		ASAN_OPTIONS=fast_unwind_on_malloc=0 \
			LSAN_OPTIONS=suppressions=$full_supp:print_suppressions=0 \
			"$bin" -runs=0 -timeout=10 -artifact_prefix="$art" "$seeds" \
			> "$build/fuzz/replay-$t.log" 2>&1 ||
			{ tail -n 40 "$build/fuzz/replay-$t.log"; echo "fuzz: $t: replay failed"; exit 1; }
		echo "fuzz: $t: $n seeds replayed, no finding"
		continue
	fi
	corpus=$build/fuzz/corpus/$t
	mkdir -p "$corpus"
	cp -f "$seeds"/* "$corpus"/
	echo "fuzz: $t for $seconds s"
	# shellcheck disable=SC2086
	LSAN_OPTIONS=suppressions=$fast_supp:print_suppressions=0 \
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$art" ${FUZZ_FLAGS:-} "$corpus"
	ASAN_OPTIONS=fast_unwind_on_malloc=0 \
		LSAN_OPTIONS=suppressions=$full_supp:print_suppressions=0 \
		"$bin" -runs=0 -timeout=10 -artifact_prefix="$art" "$corpus"
done
