#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check-kernels`: the e2e tests on Debian 12's own kernel (6.1), booted
# under qemu with software emulation (TCG, no KVM needed) from the image that
# tests/kernels/mkroot.sh builds in KERNELS_DIR. The tree is shared with the
# guest read-only over 9p at its own path, so the guest runs this tree's
# latprof and fixtures (built on the host: same Debian, same libraries).
# Prints the guest's console (smoke records, then tests/run.sh's lines with
# each test's seconds) and exits with the guest's test status. docs/kernels.md.
#
# usage: tests/kernels/run.sh [all | TEST...]   (default: the list below;
#        all: every e2e, safety and kernel test, about 13 minutes)
# Environment: KERNEL (6.1: Debian 12's own, the default; backports: the
# newer one bookworm-backports has, 6.12 in 2026, run the same way as a
# control for what emulation itself does to the tests), LATPROF, FIXTURES
# (as for tests/run.sh; must be inside the tree), KERNELS_DIR (default
# build/kernels, build/kernels/backports), QEMU_SMP (2), QEMU_MEM (4G),
# QEMU_TCG_THREAD (multi, or single: see below),
# KERNEL_TIMEOUT_S (whole run, default 2700), KERNEL_LOGLEVEL (the guest's
# console log level, default 3: 7 shows a soft lockup's backtrace),
# TEST_TIMEOUT_S (per test, 480), TEST_BUDGET_S (lib.sh's watchdog, 300), CI.
# A guest that hangs can be looked at while it does through qemu's monitor
# at KERNELS_DIR/monitor.sock (docs/kernels.md).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${KERNELS_DIR:-$top/build/kernels}
[ "${KERNEL:-6.1}" = backports ] && dir=${KERNELS_DIR:-$top/build/kernels/backports}
LATPROF=${LATPROF:-$top/latprof}
FIXTURES=${FIXTURES:-$top/build/fixtures}

# Every BPF program and collector at least once, by tests whose checks hold
# under emulation on a quiet host (docs/kernels.md has what the others do
# there): syscalls (raw_tp), with DWARF and
# frame-pointer stacks; the in-flight iterator and threads parked since
# before attach; the pre-5.18 fallbacks, forced; CPU sampling with DWARF
# stacks; off-CPU with kernel stacks; fork/exec/exit; serve (/metrics
# scraped by Prometheus, /debug/pprof pulled by go tool pprof, the syscall
# array's blocks handed back); full maps.
# guest.sh's smoke records load every program once more, --requests,
# --files, --net and frame-pointer CPU sampling included. About 4 minutes.
default_tests=(
	tests/e2e/test_syscall_sleep.sh		# DWARF, fp, refused; the in-kernel aggregate
	tests/e2e/test_syscall_count.sh
	tests/e2e/test_syscall_inflight.sh	# iter.s/task: in-flight and parked syscalls
	tests/kernels/test_old_kernel.sh	# iter/task and sched_switch without prev_state
	tests/e2e/test_cpu_hot_ab.sh		# cpu sampling, DWARF stacks
	tests/e2e/test_unwind_threads.sh	# cpu sampling, DWARF, threads
	tests/e2e/test_offcpu_block.sh		# sched_switch, kernel stacks
	tests/e2e/test_offcpu_wall.sh
	tests/e2e/test_fork_exec.sh		# sched_process_fork/exec/exit
	tests/e2e/test_serve_prometheus.sh	# serve: /metrics
	tests/e2e/test_serve_pprof.sh		# serve: /debug/pprof/profile
	tests/e2e/test_serve_blocks.sh		# serve: per-CPU blocks read and handed back
	tests/e2e/test_tiny_maps.sh		# full maps: drops counted, never fatal
)

die()
{
	echo "check-kernels: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap; the guest runs the tests as its root)"
for f in "$LATPROF" "$FIXTURES"; do
	case $(realpath -m "$f") in
	"$top"/*) ;;
	*) die "$f is outside $top, which is all the guest sees" ;;
	esac
done
[ -x "$LATPROF" ] || die "no $LATPROF: run make first"
# qemu and debootstrap come from Debian, like every other tool (make setup)
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
	echo "check-kernels: installing ${need[*]}"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${need[@]}" >/dev/null || die "cannot install ${need[*]}"
fi

# Download the kernel package bookworm-backports' linux-image-amd64 points to
# into $dir/apt and print its path (apt's own configuration is untouched).
backports_kernel()
{
	local apt=$dir/apt mirror pkg
	mirror=$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources \
		2>/dev/null | head -n 1)
	mkdir -p "$apt/lists/partial"
	echo "deb ${MIRROR:-${mirror:-http://deb.debian.org/debian}} bookworm-backports main" >"$apt/sources.list"
	set -- -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$apt/lists"
	apt-get "$@" update -qq >/dev/null 2>&1 || return 1
	pkg=$(apt-cache "$@" depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	[ -n "$pkg" ] || return 1
	(cd "$apt" && apt-get "$@" download -qq "$pkg" >/dev/null 2>&1) || return 1
	ls "$apt/${pkg}"_*.deb | tail -n 1
}

start=$SECONDS
case ${KERNEL:-6.1} in
6.1) ;;
backports)
	KERNEL_DEB=$(backports_kernel) && [ -s "$KERNEL_DEB" ] ||
		die "cannot download bookworm-backports' kernel"
	export KERNEL_DEB ;;
*) die "KERNEL=$KERNEL: want 6.1 or backports" ;;
esac
"$top/tests/kernels/mkroot.sh" "$dir" || die "cannot build the guest image in $dir"
release=$(cat "$dir/kernel-release")

if [ "${1:-}" = all ]; then
	cd "$top" && tests=(tests/e2e/test_*.sh tests/safety/test_*.sh tests/kernels/test_*.sh)
elif [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=("${default_tests[@]}")
fi
out=$dir/out
rm -rf "$out"
mkdir -p "$out"
{
	printf 'TESTS=%q\n' "${tests[*]}"
	printf 'LATPROF=%q\nFIXTURES=%q\n' "$(realpath "$LATPROF")" "$(realpath "$FIXTURES")"
	# TCG runs code 5-40 times slower than the host: the per-test limits
	# grow; the tests' own checks are ratios and stay as they are
	printf 'TEST_TIMEOUT_S=%q\nTEST_BUDGET_S=%q\n' "${TEST_TIMEOUT_S:-480}" "${TEST_BUDGET_S:-300}"
	[ -n "${CI:-}" ] && printf 'CI=%q\n' "$CI"
} >"$out/env"

echo "check-kernels: booting Linux $release under qemu (TCG, ${QEMU_TCG_THREAD:-multi}-threaded, ${QEMU_SMP:-2} CPUs): ${#tests[@]} tests"
# -accel tcg,thread=multi: a host thread per guest CPU. It once hung within
# 20-50 records: a CPU kept executing an old translation of kernel text that
# another had just patched (the sys_enter tracepoint's static branch, as the
# hooks attach and detach), took the int3 no longer in memory, returned to
# it and took it again, forever (soft lockups of both CPUs at
# syscall_trace_enter, RIP in asm_exc_int3). guest.sh now keeps that code
# from changing; thread=single (QEMU_TCG_THREAD) cannot hang that way but
# runs each guest CPU at half speed, and 4 of the 12 default tests then fail
# on timing (docs/kernels.md). Serial console on stdout; the image is opened
# with snapshot=on, so every run starts clean.
timeout "${KERNEL_TIMEOUT_S:-2700}" qemu-system-x86_64 \
	-machine q35 -accel "tcg,thread=${QEMU_TCG_THREAD:-multi}" -cpu max -smp "${QEMU_SMP:-2}" -m "${QEMU_MEM:-4G}" \
	-nographic -no-reboot -nic none -monitor "unix:$dir/monitor.sock,server=on,wait=off" \
	-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 quiet loglevel=${KERNEL_LOGLEVEL:-3} panic=-1 init=/sbin/latprof-init latprof.src=$top" \
	-drive "file=$dir/rootfs.img,format=raw,if=virtio,snapshot=on" \
	-virtfs "local,path=$top,mount_tag=src,security_model=none,readonly=on" \
	-virtfs "local,path=$out,mount_tag=out,security_model=none" \
	</dev/null 2>&1 | sed -u 's/\r$//' | tee "$dir/console.log" |
	awk '!on && /guest:/ { on = 1; sub(/.*guest:/, "guest:") }
		on && !/^\[ *[0-9]+\.[0-9]+\]/ { print; fflush() }'
qrc=${PIPESTATUS[0]}
rc=$(cat "$out/rc" 2>/dev/null)
echo "check-kernels: Linux $release, $((SECONDS - start)) s in all (console: $dir/console.log)"
if [ -z "$rc" ]; then
	[ "$qrc" = 124 ] && die "the guest did not finish in ${KERNEL_TIMEOUT_S:-2700} s"
	die "the guest stopped without a result (qemu exit $qrc); see $dir/console.log"
fi
exit "$rc"
