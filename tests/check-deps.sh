#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Include rules (STYLE.md): symbolize/ and flamegraph/ include nothing from
# src/ but the leaves util.h, strtab.h and hashmap.h; only src/collect.c sees the skeleton.
set -u
cd "$(dirname "$0")/.."
bad=0
for f in symbolize/*.[ch] flamegraph/*.[ch]; do
	[ -e "$f" ] || continue
	if grep -nE '#include "src/' "$f" | grep -vE 'src/(util|strtab|hashmap)\.h"'; then
		echo "check-deps: $f includes from src/ beyond util.h/strtab.h/hashmap.h"; bad=1
	fi
done
if grep -ln 'skel.h' src/*.c | grep -v '^src/collect.c$'; then
	echo "check-deps: only src/collect.c may include the BPF skeleton"; bad=1
fi
exit $bad
