#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Include rules (STYLE.md): src/lib/ (util, strtab, hashmap) is the bottom
# layer and includes nothing else of the project; symbolize/ and flamegraph/
# include nothing from src/ but src/lib/; only the collect module sees the BPF
# skeleton: through src/collect/priv.h, which only src/collect/*.c include.
set -u
cd "$(dirname "$0")/.."
bad=0
for f in symbolize/*.[ch] flamegraph/*.[ch]; do
	[ -e "$f" ] || continue
	if grep -nE '#include "src/' "$f" | grep -vE '#include "src/lib/'; then
		echo "check-deps: $f includes from src/ beyond src/lib/"; bad=1
	fi
done
for f in src/lib/*.[ch]; do
	if grep -nE '#include "' "$f" | grep -vE '#include "src/lib/'; then
		echo "check-deps: $f (the bottom layer) includes from outside src/lib/"; bad=1
	fi
done
if grep -rnE --include='*.[ch]' '#include "([^"]*/)?\.\./' src symbolize flamegraph bpf; then
	echo "check-deps: an include through \"..\" goes around these rules"; bad=1
fi
if grep -rln --include='*.[ch]' 'skel.h' src symbolize flamegraph tests examples |
		grep -v '^src/collect/priv.h$'; then
	echo "check-deps: only src/collect/priv.h may include the BPF skeleton"; bad=1
fi
if grep -rln --include='*.[ch]' 'collect/priv.h' src symbolize flamegraph tests examples |
		grep -vE '^src/collect/[^/]+\.c$'; then
	echo "check-deps: only src/collect/*.c may include src/collect/priv.h"; bad=1
fi
exit $bad
