#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Symbolization agrees with elfutils' eu-addr2line -f -i.
#
# Ground truth: eu-addr2line, on 1,000 random addresses inside the functions
# of the .text of glibc (with libc6-dbg's separate debuginfo), libpython3.11
# (python3.11-dbg's debuginfo, which dwz compressed: there eu-addr2line -i
# drops every inline frame, so binutils' addr2line -f -i, which follows the
# dwz alternate file like gdb, is the reference) and latprof itself (DWARF with nested inlines; the padding
# between functions, never executed, once made up 5 of the disagreements
# and failed the bar at 993/998), compared frame by frame,
# innermost first, by tests/e2e/symbolize_compare.py (its header says what
# counts as the same name). Each file must agree on >= 99.5% of addresses.
# Before nested inline chains were walked through the concrete DIE tree,
# latprof agreed on 87% of its own addresses (parse_pids inlined into
# parse_record_args inlined into cmd_record lost the middle frame).
. "$(dirname "$0")/lib.sh"
require_tools
command -v eu-addr2line >/dev/null && command -v eu-readelf >/dev/null ||
	fail "eu-addr2line/eu-readelf (elfutils) are needed for the ground truth"
command -v addr2line >/dev/null || fail "addr2line (binutils) is needed for the ground truth"

libc=/lib/x86_64-linux-gnu/libc.so.6
libpython=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
for f in "$libc" "$libpython" "$LATPROF"; do
	[ -r "$f" ] || fail "$f is missing (make setup installs libc6-dbg and libpython3.11)"
	tool=eu
	[ "$f" = "$libpython" ] && tool=gnu
	/usr/bin/python3 "$_lib_dir/symbolize_compare.py" "$LATPROF" "$f" 1000 1 $tool \
		>"$WORKDIR/cmp.txt" 2>&1 || { diag_file "compare" "$WORKDIR/cmp.txt"; fail "comparing $f failed"; }
	read -r agree total < <(awk -F'[= ]' '/^agree=/ { print $2, $4 }' "$WORKDIR/cmp.txt")
	info "$(basename "$f"): $agree of $total addresses agree with eu-addr2line"
	if [ -z "$total" ] || [ "$total" -lt 900 ] || [ $((agree * 1000)) -lt $((total * 995)) ]; then
		diag_file "disagreements" "$WORKDIR/cmp.txt" 40
		fail "$(basename "$f"): $agree of $total agree, expected >= 99.5%"
	fi
done
pass "libc, libpython3.11 and latprof agree with eu-addr2line on >= 99.5% of 1,000 addresses each"
