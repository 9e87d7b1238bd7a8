#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Make, once, the container-like root that tests/e2e/test_python_chroot.sh
# runs Python in: Debian testing's minimal root (debootstrap minbase) with
# its stripped python3.13, python3.14 and python3.15, and the model server
# example's packages for its default python3 (3.14: FastAPI, uvicorn,
# scikit-learn; tests/e2e/test_model_async.sh), and nothing else: no -dev,
# no -dbg, so latprof has only what a container would give it (the
# interpreter's .dynsym and its _Py_DebugOffsets). Written to DIR/root, with
#   DIR/stamp   checksum of the recipe (suite, packages): a new recipe rebuilds
# and kept until the recipe changes, so only the first run waits (about a
# minute here). Prints DIR/root. Needs
# root and debootstrap. Two callers at once: the second waits for the first.
# usage: tests/pyroot/mkroot.sh [DIR]   (default /var/cache/latprof/pyroot)
set -euo pipefail
dir=${1:-/var/cache/latprof/pyroot}
suite=testing
packages=(python3.13 python3.14 python3.15 python3-fastapi python3-uvicorn python3-sklearn)
# The first Debian mirror apt uses here, unless MIRROR says otherwise.
mirror=${MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources \
	2>/dev/null | head -n 1)}
mirror=${mirror:-$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null)}
[ -n "$mirror" ] || { echo "mkroot: no Debian mirror in apt's sources; set MIRROR" >&2; exit 1; }

sum=$(printf '%s\n' "$suite" "${packages[*]}" | sha256sum | cut -c1-16)
ready()
{
	[ -x "$dir/root/usr/bin/python3.15" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$sum" ]
}
if ready; then
	echo "$dir/root"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "mkroot: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "mkroot: debootstrap not installed" >&2; exit 1; }
mkdir -p "$dir"
exec 9>"$dir/lock"
flock 9
if ready; then	# made by another caller while this one waited
	echo "$dir/root"
	exit 0
fi
rm -f "$dir/stamp"

# Staged outside build/ (the Makefile includes every *.d under build/, and a
# root has /etc/*.d directories) and moved into place only when complete.
# debootstrap mounts /proc and /sys inside while it runs; unmount whatever
# is left before removing anything.
stage=$(mktemp -d /var/tmp/latprof-pyroot.XXXXXX)
cleanup()
{
	local m
	for m in $(awk -v s="$stage/" 'index($2, s) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" || true
	done
	rm -rf --one-file-system "$stage"
}
trap cleanup EXIT

root=$stage/root
echo "mkroot: debootstrap $suite from $mirror (log: $dir/debootstrap.log)" >&2
if ! debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
	"$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1; then
	cat "$root/debootstrap/debootstrap.log" >>"$dir/debootstrap.log" 2>/dev/null
	tail -n 20 "$dir/debootstrap.log" >&2
	exit 1
fi
for m in $(awk -v s="$root/" 'index($2, s) == 1 { print $2 }' /proc/mounts | sort -r); do
	umount -l "$m"
done
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
rm -rf --one-file-system "$dir/root"
mv "$root" "$dir/root"
echo "$sum" >"$dir/stamp"
echo "$dir/root"
