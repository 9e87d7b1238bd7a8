#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Separate debuginfo: a binary stripped of every symbol (strip --strip-all)
# is symbolized from its debug file, found the standard ways, and a debug
# file of another build is refused.
#
# Ground truth: the unstripped fixtures, read with nm -S (where dbg_hot_loop
# is) and eu-addr2line -i (its dbg_hot.c lines); eu-readelf for build-ids
# and compressed sections. dbg_hot spends nearly all its CPU in dbg_hot_loop.
# Each case records `-F 499 -- COPY 0.5` of a stripped copy, then checks
# (lib.sh dbg_expect_*): resolved = dbg_hot_loop in >= 80% of the samples and
# >= 90% of those at a dbg_hot.c line of the truth; unresolved = no
# dbg_hot_loop, >= 80% of the samples at dbg_hot+0xOFFSET inside it.
#   a. build-id: the debug file at DIR/.build-id/xx/yyyy.debug with
#      --debug-dir DIR → resolved; without --debug-dir → unresolved;
#   b. .gnu_debuglink, the debug file next to the binary → resolved;
#   c. the .gnu_debuglink file replaced by another build's debug file →
#      unresolved; and, for a build without a build-id (so only the CRC can
#      tell), the right debug file in .debug/ → resolved, the same file with
#      an extra section (DWARF still matching, CRC not) → unresolved;
#   d. -gz (SHF_COMPRESSED debug sections, checked with eu-readelf), debug
#      file by build-id → resolved with lines;
#   e. MiniDebugInfo: only an xz-compressed .gnu_debugdata symbol table →
#      the name is resolved (no lines exist);
#   f. --debug-dir on a missing directory: exit 2, a message naming it.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture dbg_hot dbg_hot_gz dbg_hot_nobid
for t in objcopy strip nm eu-readelf eu-addr2line xz; do
	command -v $t >/dev/null || fail "$t is needed (binutils, elfutils, xz-utils)"
done
[ -z "${DEBUGINFOD_URLS:-}" ] || fail "DEBUGINFOD_URLS is set; this test needs local lookups only"
fx=$FIXTURES/dbg_hot

# a. build-id under --debug-dir
dbg_split bid "$fx"
bid=$(dbg_build_id "$fx")
[ -n "$bid" ] || fail "eu-readelf finds no build-id in $fx"
mkdir -p "$WORKDIR/dd/.build-id/${bid:0:2}"
mv "$WORKDIR/bid.debug" "$WORKDIR/dd/.build-id/${bid:0:2}/${bid:2}.debug"
dbg_record bid_nodir "$WORKDIR/bid/dbg_hot"
dbg_expect_unresolved bid_nodir "$fx"
info "a. build-id $bid, no --debug-dir: $DBG_RESULT"
dbg_record bid "$WORKDIR/bid/dbg_hot" --debug-dir "$WORKDIR/dd"
dbg_expect_resolved bid "$fx"
info "a. build-id, --debug-dir: $DBG_RESULT"

# b. .gnu_debuglink next to the binary
dbg_split link "$fx"
mv "$WORKDIR/link.debug" "$WORKDIR/link/dbg_hot.debug"
(cd "$WORKDIR/link" && objcopy --add-gnu-debuglink=dbg_hot.debug dbg_hot) ||
	fail "objcopy --add-gnu-debuglink failed"
dbg_record link "$WORKDIR/link/dbg_hot"
dbg_expect_resolved link "$fx"
info "b. .gnu_debuglink beside the binary: $DBG_RESULT"

# c. a debug file of another build under the linked name
dbg_split other "$fx"
(cd "$WORKDIR/link" && objcopy --add-gnu-debuglink=dbg_hot.debug "$WORKDIR/other/dbg_hot") ||
	fail "objcopy --add-gnu-debuglink failed"
objcopy --only-keep-debug "$FIXTURES/dbg_hot_gz" "$WORKDIR/other/dbg_hot.debug"
dbg_record other "$WORKDIR/other/dbg_hot"
dbg_expect_unresolved other "$fx"
info "c. another build's debug file (build-id $(dbg_build_id "$WORKDIR/other/dbg_hot.debug")): $DBG_RESULT"

# c. without a build-id only the CRC decides
nobid=$FIXTURES/dbg_hot_nobid
[ -z "$(dbg_build_id "$nobid")" ] || fail "$nobid has a build-id"
dbg_split crc "$nobid"
mkdir -p "$WORKDIR/crc/.debug"
mv "$WORKDIR/crc.debug" "$WORKDIR/crc/.debug/dbg_hot.debug"
(cd "$WORKDIR/crc/.debug" && objcopy --add-gnu-debuglink=dbg_hot.debug ../dbg_hot) ||
	fail "objcopy --add-gnu-debuglink failed"
dbg_record crc_ok "$WORKDIR/crc/dbg_hot"
dbg_expect_resolved crc_ok "$nobid"
info "c. no build-id, .debug/ file with the right CRC: $DBG_RESULT"
echo "changes the CRC, not the DWARF" >"$WORKDIR/note"
objcopy --add-section .note.latprof="$WORKDIR/note" "$WORKDIR/crc/.debug/dbg_hot.debug" ||
	fail "objcopy --add-section failed"
dbg_record crc_bad "$WORKDIR/crc/dbg_hot"
dbg_expect_unresolved crc_bad "$nobid"
info "c. no build-id, same debug file with another CRC: $DBG_RESULT"

# d. compressed debug sections
gz=$FIXTURES/dbg_hot_gz
eu-readelf -S "$gz" | awk '$2 == ".debug_info" && $0 ~ / C / { ok = 1 } END { exit !ok }' ||
	fail "$gz has no compressed (SHF_COMPRESSED) .debug_info"
dbg_split gz "$gz"
eu-readelf -S "$WORKDIR/gz.debug" | awk '$2 == ".debug_line" && $0 ~ / C / { ok = 1 } END { exit !ok }' ||
	fail "objcopy --only-keep-debug did not keep .debug_line compressed"
gbid=$(dbg_build_id "$gz")
mkdir -p "$WORKDIR/dd/.build-id/${gbid:0:2}"
mv "$WORKDIR/gz.debug" "$WORKDIR/dd/.build-id/${gbid:0:2}/${gbid:2}.debug"
dbg_record gz "$WORKDIR/gz/dbg_hot" --debug-dir "$WORKDIR/dd"
dbg_expect_resolved gz "$gz"
info "d. -gz debug file by build-id: $DBG_RESULT"

# e. MiniDebugInfo: the function symbols that .dynsym lacks, xz-compressed
dbg_split mini "$fx"
nm -D "$fx" --format=posix --defined-only | awk '{ print $1 }' | sort >"$WORKDIR/mini.dyn"
nm "$fx" --format=posix --defined-only | awk '$2 ~ /^[TtWw]$/ { print $1 }' | sort |
	comm -13 "$WORKDIR/mini.dyn" - >"$WORKDIR/mini.keep"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$WORKDIR/mini.keep" "$WORKDIR/mini.debug" "$WORKDIR/mini.symtab" &&
	xz -f "$WORKDIR/mini.symtab" &&
	objcopy --add-section .gnu_debugdata="$WORKDIR/mini.symtab.xz" "$WORKDIR/mini/dbg_hot" ||
	fail "cannot build the MiniDebugInfo copy"
dbg_record mini "$WORKDIR/mini/dbg_hot"
dbg_expect_resolved mini "$fx" nolines
info "e. MiniDebugInfo (.gnu_debugdata): $DBG_RESULT"

# f. a --debug-dir that does not exist
lp_record "$WORKDIR/baddir.out" "$WORKDIR/baddir.err" --debug-dir "$WORKDIR/nonexistent" \
	-o "$WORKDIR/baddir.pb.gz" -- "$fx" 0.1
rc=$?
if [ $rc != 2 ] || ! grep -q "debug-dir.*nonexistent" "$WORKDIR/baddir.err" || [ -e "$WORKDIR/baddir.pb.gz" ]; then
	diag_file "latprof record stderr" "$WORKDIR/baddir.err"
	fail "--debug-dir on a missing directory: exit $rc (expected 2, a message naming it, no profile)"
fi
info "f. --debug-dir missing: exit 2, $(head -n 1 "$WORKDIR/baddir.err")"
pass "build-id, debuglink, CRC, -gz and MiniDebugInfo cases as expected"
