#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# C++ names are demangled; pprof keeps the mangled one as system_name.
#
# Ground truth: cxx_template spends its CPU in the member function of a class
# template in a namespace; its symbol, read with nm, demangled by binutils'
# c++filt, is the name latprof must show (e.g.
# "ns::Accumulator<int>::spin(unsigned long) [clone .isra.0]").
# Checks, `record -F 499 -- cxx_template 1`:
#   - the folded stacks have that frame, with >= 50% of cxx_template's samples;
#   - no frame of the process is still mangled (_Z...);
#   - go tool pprof -raw shows the function with system_name = nm's symbol.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture cxx_template
require_cmd go golang-go "go tool pprof -raw showing system_name"
command -v nm >/dev/null && command -v c++filt >/dev/null || fail "nm and c++filt (binutils) are needed for the ground truth"

sym=$(nm "$FIXTURES/cxx_template" | awk '$3 ~ /^_ZN2ns11AccumulatorIiE4spin/ { print $3; exit }')
[ -n "$sym" ] || fail "nm finds no ns::Accumulator<int>::spin symbol in cxx_template"
want=$(c++filt "$sym")
info "symbol $sym, c++filt: $want"

record_or_fail cxx -F 499 -- "$FIXTURES/cxx_template" 1
folded=$WORKDIR/cxx.folded
export_or_fail "$WORKDIR/cxx.pb.gz" "$folded" --format folded
total=$(folded_sum "$folded" cxx_template)
got=$(awk -v w="$want" "$FOLDED_AWK"'{ v = folded_parse(); for (i = 1; i <= n; i++) if (f[i] == w) { s += v; break } } END { print s + 0 }' "$folded")
info "samples: $got of $total under '$want'"
if [ "$total" -le 0 ] || ! in_range "$(ratio "$got" "$total")" 0.5 1; then
	folded_top "$folded" cxx_template 5
	fail "'$want' has $got of $total samples, expected >= 50%"
fi
if grep -E '(^|;)_Z[A-Za-z0-9_]+' "$folded" | grep -q '^cxx_template'; then
	grep -E '(^|;)_Z' "$folded" | head -3 | sed 's/^/  | /'
	fail "cxx_template stacks still have mangled frames"
fi
go tool pprof -raw "$WORKDIR/cxx.pb.gz" >"$WORKDIR/raw.txt" 2>&1 ||
	{ diag_file "go tool pprof -raw" "$WORKDIR/raw.txt"; fail "go tool pprof -raw failed"; }
grep -F "$want" "$WORKDIR/raw.txt" | grep -qF "($sym)" || {
	grep -F 'Accumulator' "$WORKDIR/raw.txt" | head -3 | sed 's/^/  | /'
	fail "pprof has no function '$want' with system_name $sym"
}
pass "$got of $total samples in $want (system_name $sym)"
