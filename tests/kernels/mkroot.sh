#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the kernel-test guest (docs/kernels.md): a Debian 12 root made by
# debootstrap from the configured apt mirror, with Debian's own kernel
# (linux-image-amd64, 6.1) and what the e2e tests run (python3, elfutils,
# binutils, curl, prometheus, go, ...), written to DIR as
#   rootfs.img   ext4 image of the root (qemu opens it with snapshot=on: never written)
#   vmlinuz, initrd.img, kernel-release   the kernel the image carries
#   stamp        checksum of the recipe (suite, packages, init): a new recipe rebuilds
# The guest's /sbin/latprof-init mounts the host's tree and a results
# directory over 9p and runs tests/kernels/guest.sh from the tree, so a
# change to the tests or the build needs no new image. Needs root,
# debootstrap and mke2fs; 5 to 10 minutes and 2 GB of downloads and disk.
# usage: tests/kernels/mkroot.sh DIR
set -euo pipefail
dir=$1
suite=bookworm
kernel_pkg=linux-image-amd64
# KERNEL_DEB: a kernel package file (e.g. bookworm-backports' kernel) installed
# beside Debian 12's own and booted instead
kernel_deb=${KERNEL_DEB:-}
# The first Debian mirror apt uses here, unless MIRROR says otherwise.
mirror=${MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources \
	2>/dev/null | head -n 1)}
mirror=${mirror:-$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null)}
[ -n "$mirror" ] || { echo "mkroot: no Debian mirror in apt's sources; set MIRROR" >&2; exit 1; }

# What the e2e tests call besides latprof and its libraries; the browser
# tests (node, chromium) and the Python model servers (sklearn) are left out.
packages=(
	"$kernel_pkg" initramfs-tools kmod
	libbpf1 libdw1 libelf1 zlib1g libprotobuf-c1 libyaml-0-2 libmicrohttpd12 libstdc++6
	python3 python3.11 libpython3.11 python3.11-dbg libc6-dbg
	elfutils debuginfod binutils gcc libc6-dev bpftool strace time file xz-utils libxml2-utils
	procps util-linux mount iproute2 netcat-openbsd curl openssl
	prometheus golang-go
)
# PID 1: the tree (read-only) at the host's path, results read-write, then
# the guest script from the tree; if anything fails, power off at once.
init=$(cat <<'EOF'
#!/bin/sh
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
modprobe 9pnet_virtio && modprobe 9p
src=$(sed -n 's/.*latprof\.src=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p "$src" /latprof-out
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 src "$src" &&
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /latprof-out &&
	exec /bin/bash "$src/tests/kernels/guest.sh" "$src"
echo "latprof-init: cannot mount the tree $src" >&2
echo o >/proc/sysrq-trigger
sleep 60
EOF
)
sum=$(printf '%s\n' "$suite" "${kernel_deb##*/}" "${packages[*]}" "$init" | sha256sum | cut -c1-16)
if [ -s "$dir/rootfs.img" ] && [ -s "$dir/vmlinuz" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$sum" ]; then
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "mkroot: debootstrap needs root" >&2; exit 1; }
for tool in debootstrap mke2fs; do
	command -v $tool >/dev/null || { echo "mkroot: $tool not installed" >&2; exit 1; }
done
mkdir -p "$dir"
rm -f "$dir/stamp"

# Outside build/: the Makefile includes every *.d under build/, and a root
# has /etc/*.d directories. debootstrap mounts /proc and /sys inside while it
# runs; unmount whatever is left before removing anything.
stage=$(mktemp -d /var/tmp/latprof-kroot.XXXXXX)
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
echo "mkroot: debootstrap $suite from $mirror (log: $dir/debootstrap.log)"
if ! debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
	"$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1; then
	cat "$root/debootstrap/debootstrap.log" >>"$dir/debootstrap.log" 2>/dev/null
	tail -n 20 "$dir/debootstrap.log" >&2
	exit 1
fi

if [ -n "$kernel_deb" ]; then
	echo "mkroot: installing ${kernel_deb##*/}"
	cp "$kernel_deb" "$root/tmp/kernel.deb"
	mount -t proc proc "$root/proc"
	chroot "$root" dpkg -i /tmp/kernel.deb >>"$dir/debootstrap.log" 2>&1 ||
		{ umount "$root/proc"; echo "mkroot: cannot install $kernel_deb" >&2; exit 1; }
	umount "$root/proc"
	rm -f "$root/tmp/kernel.deb"
fi
echo latprof-guest >"$root/etc/hostname"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
printf '%s\n' "$init" >"$root/sbin/latprof-init"
chmod 755 "$root/sbin/latprof-init"

release=$(ls "$root/lib/modules" | sort -V | tail -n 1)
cp "$root/boot/vmlinuz-$release" "$dir/vmlinuz"
cp "$root/boot/initrd.img-$release" "$dir/initrd.img"
echo "$release" >"$dir/kernel-release"
rm -f "$root"/boot/*.dpkg-bak "$root"/boot/*.new
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
echo "mkroot: writing $dir/rootfs.img (kernel $release)"
rm -f "$dir/rootfs.img"
mke2fs -q -t ext4 -d "$root" -L latprof-root "$dir/rootfs.img" 6G >/dev/null
echo "$sum" >"$dir/stamp"
