#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Output disk full: every writer fails cleanly on a 64 KiB tmpfs.
#
# Ground truth: the tmpfs is filled with a file of zeros until fewer bytes
# are free than any output needs (df says how many). Then `record -o`,
# `export` (folded, json, speedscope, pprof), `flamegraph` and `timeline`
# into it must each exit 1 with one line on stderr naming the file and "No
# space left on device", and leave no file of their own (neither the output
# nor a .tmp) on the tmpfs. An earlier profile of the same name that was
# complete stays as it was (the rename never happened).
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab

full=$WORKDIR/full
mkdir -p "$full"
mount -t tmpfs -o size=64k latprof-full "$full" 2>"$WORKDIR/mount.err" ||
	skip "cannot mount a tmpfs: $(head -n 1 "$WORKDIR/mount.err")"
at_exit umount -l "$full"

record_or_fail real -F 499 -- "$FIXTURES/hot_ab" 0.3
real=$WORKDIR/real.pb.gz
# an earlier complete profile on the small disk, then fill what is left
cp "$real" "$full/old.pb.gz"
old_sum=$(md5sum <"$full/old.pb.gz")
dd if=/dev/zero of="$full/fill" bs=1k count=1024 2>/dev/null
free_kb=$(df -k --output=avail "$full" | tail -n 1 | tr -d ' ')
info "tmpfs: $(stat -c %s "$full/fill") bytes of filler, ${free_kb} KiB free, profile is $(stat -c %s "$real") bytes"
[ "$free_kb" -le 4 ] || fail "setup: $free_kb KiB still free on the tmpfs"

FAILED=""
NCASES=0
# full_case NAME OUT ARGS...: latprof ARGS (writing $full/OUT) exits 1,
# names OUT and the full disk, leaves nothing new on the tmpfs.
full_case()
{
	local name=$1 out=$2 rc left
	shift 2
	NCASES=$((NCASES + 1))
	timeout -k 5 30 "$LATPROF" "$@" >"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.err"
	rc=$?
	info "$name: latprof $1 -> $rc: $(tr '\n' ' ' <"$WORKDIR/$name.err" | head -c 200)"
	left=$(ls -A "$full" | grep -v -x -e fill -e old.pb.gz)
	if [ "$rc" != 1 ]; then
		FAILED="$FAILED $name(exit $rc)"
	elif ! grep -q "$out" "$WORKDIR/$name.err" ||
		! grep -qi "no space left on device" "$WORKDIR/$name.err"; then
		FAILED="$FAILED $name(message)"
	elif [ -n "$left" ]; then
		FAILED="$FAILED $name(left $(echo $left))"
	fi
	[ "$(grep -c '' "$WORKDIR/$name.err")" -le 2 ] || FAILED="$FAILED $name(stderr lines)"
}

# record: the command runs to its end, then the write fails
full_case record old.pb.gz record -F 499 -o "$full/old.pb.gz" -- "$FIXTURES/hot_ab" 0.3
[ "$(md5sum <"$full/old.pb.gz")" = "$old_sum" ] || FAILED="$FAILED record(old profile changed)"
full_case record_folded rec.folded record -F 499 -o "$full/rec.folded" -- "$FIXTURES/hot_ab" 0.3
for fmt in folded json speedscope pprof; do
	full_case "export_$fmt" "x.$fmt" export "$real" --format "$fmt" -o "$full/x.$fmt"
done
full_case flamegraph x.svg flamegraph "$real" -o "$full/x.svg"
full_case timeline t.svg timeline "$real" -o "$full/t.svg"

[ -z "$FAILED" ] || fail "$(grep -o "([^)]*)" <<<"$FAILED" | wc -l) of $NCASES cases failed:$FAILED"
pass "$NCASES writers exit 1 with 'No space left on device' and leave no file"
