#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Python frames for interpreters without debuginfo, as most production
# Pythons are: offsets from the generated table (one layout per minor
# version), checked against the process before use.
#
#   - each pyenv 3.8-3.13: its libpython copied and stripped, `strip
#     --strip-all` for every one, `--strip-debug` too for 3.8, 3.10 and 3.12
#     (3.8-3.10 have no Py_Version: their release is read through
#     Py_GetVersion), run by the prefix's own python with LD_LIBRARY_PATH on
#     the copy. The report must name the copy (the process maps it, not
#     pyenv's libpython with DWARF), the release sys.version_info gives,
#     and "offsets: table X.Y (checked)"; 3.13 reads its own
#     _Py_DebugOffsets first ("offsets: debug_offsets");
#   - Debian's /usr/bin/python3.11 (static, stripped) with its
#     python3.11-dbg DWARF out of reach: latprof runs in a mount namespace
#     with an empty tmpfs over /usr/lib/debug.
#
# Ground truth from tests/fixtures/py_names.py (its own thread CPU time per
# function and time in os.read), checks by tests/e2e/py_frames_check.py mix,
# -F 499 --mode cpu,syscall: >= 95% of the main thread's samples end in the
# right Python function and have the chain <module>;main;mix;run_main,
# burn_a's share within the binomial tolerance of the truth, >= 95% of the
# reader's read latency under wait_on_pipe, burn_a's lines in its body.
# Ten recordings of ~3 s: ~45 s on the 2-vCPU VM.
TEST_BUDGET_S=${TEST_BUDGET_S:-120}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
require_cmd strip binutils "stripping a copy of libpython"
require_cmd unshare util-linux "hiding python3.11-dbg in a mount namespace"
SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_names.py
CHECK="/usr/bin/python3 $(dirname "$0")/py_frames_check.py"
WAIT_SCRIPT=$(cd "$(dirname "$0")/../fixtures" && pwd)/py_wait.py
WAIT_CHECK="/usr/bin/python3 $(dirname "$0")/py_wait_check.py"
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")

# one_python NAME PYTHON LIBDIR SOURCE: record PYTHON running the mix with
# LIBDIR first on the library path (none: empty), check its frames, and that
# the report names its interpreter file under LIBDIR (or PYTHON itself), its
# release and "offsets: SOURCE".
one_python()
{
	local name=$1 py=$2 libdir=$3 source=$4 ver file line
	LD_LIBRARY_PATH=$libdir record_and_fold "$name" -v -F 499 --mode cpu,syscall -- \
		"$py" "$SCRIPT" mix 2
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lat.folded" --format folded \
		--weight latency
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.lines.folded" --format folded \
		--py-lines
	lp_report "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.report" || fail "$name: report failed"
	ver=$(LD_LIBRARY_PATH=$libdir "$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	line=$(grep -m1 " Python [0-9]" "$WORKDIR/$name.report")
	file=${libdir:-$py}
	case $line in
	*" Python $ver $file"*"(offsets: $source)") ;;
	*)
		diag_file "report" "$WORKDIR/$name.report" 40
		grep -A1 "unsupported" "$WORKDIR/$name.report" | sed 's/^/  | /'
		fail "$name: the report does not say Python $ver $file... (offsets: $source)"
		;;
	esac
	if ! $CHECK mix "$WORKDIR/$name.folded" "$WORKDIR/$name.lat.folded" \
		"$WORKDIR/$name.lines.folded" "$WORKDIR/$name.out" >"$WORKDIR/$name.check"; then
		diag_file "check" "$WORKDIR/$name.check"
		diag_file "record stderr" "$WORKDIR/$name.err"
		folded_top "$WORKDIR/$name.folded" "" 8 >&2
		fail "$name: Python frames wrong"
	fi
	info "$name: ${line#"${line%%Python*}"}"
	grep -m1 -A1 " Python [0-9]" "$WORKDIR/$name.report" | tail -n 1 | sed 's/^ */    /'
	sed "s/^/    /" "$WORKDIR/$name.check"
	# the program that only waits (test_python_waits.sh): its layout is
	# checked against a process whose threads are all in a wait
	LD_LIBRARY_PATH=$libdir record_and_fold "$name-wait" -- "$py" "$WAIT_SCRIPT" 2 0.1
	export_or_fail "$WORKDIR/$name-wait.pb.gz" "$WORKDIR/$name-wait.lat.folded" \
		--format folded --weight latency
	if ! $WAIT_CHECK "$WORKDIR/$name-wait.lat.folded" "$WORKDIR/$name-wait.out" \
		>"$WORKDIR/$name-wait.check"; then
		diag_file "check" "$WORKDIR/$name-wait.check"
		lp_report "$WORKDIR/$name-wait.pb.gz" "$WORKDIR/$name-wait.report"
		grep -A3 "^Python" "$WORKDIR/$name-wait.report" >&2
		folded_top "$WORKDIR/$name-wait.lat.folded" "" 8 >&2
		fail "$name: the waits of a program that only waits are not named"
	fi
	sed -n 's/^\(.*\): \([0-9]*\) ns of .* (\([0-9.]*\))$/    waits: \1 \3 of its own clock/p' \
		"$WORKDIR/$name-wait.check"
	NR_OK=$((NR_OK + 1))
}

NR_OK=0
for v in $(pyenv_minors); do
	lib=$(ls "$root"/versions/$v.*/lib/libpython$v.so.1.0 2>/dev/null | head -n 1)
	if [ -z "$lib" ]; then
		[ "${CI:-}" = true ] && fail "CI expects pyenv's $v"
		info "no pyenv $v: skipped"
		continue
	fi
	py=${lib%/lib/*}/bin/python$v
	source="table $v (checked)"
	[ $v = 3.13 ] && source=debug_offsets
	variants=all
	case $v in 3.8 | 3.10 | 3.12) variants="all debug" ;; esac
	for s in $variants; do
		dir=$WORKDIR/strip-$s-$v
		mkdir -p "$dir"
		strip --strip-$s -o "$dir/libpython$v.so.1.0" "$lib" || fail "strip --strip-$s $lib"
		# the copy has no DWARF left, so a report of "table" is no accident
		readelf -S "$dir/libpython$v.so.1.0" | grep -q debug_info &&
			fail "strip --strip-$s left .debug_info in $dir/libpython$v.so.1.0"
		one_python "py$v-strip-$s" "$py" "$dir" "$source"
	done
done

# Debian's python3.11 with python3.11-dbg hidden: latprof (and the traced
# command it starts) in a mount namespace where /usr/lib/debug is empty
if [ -x /usr/bin/python3.11 ]; then
	cat >"$WORKDIR/latprof-nodebug" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount -t tmpfs nodebug /usr/lib/debug && exec "\$0" "\$@"' "$LATPROF" "\$@"
EOF
	chmod +x "$WORKDIR/latprof-nodebug"
	real=$LATPROF
	LATPROF=$WORKDIR/latprof-nodebug
	one_python debian3.11 /usr/bin/python3.11 "" "table 3.11 (checked)"
	LATPROF=$real
	# and with it, the same interpreter's DWARF agrees with the table
	lp_record "$WORKDIR/dbg.out" "$WORKDIR/dbg.err" -F 99 --mode cpu -o "$WORKDIR/dbg.pb.gz" \
		-- /usr/bin/python3.11 -c 'import time; time.sleep(0.3)' || fail "record with DWARF failed"
	lp_report "$WORKDIR/dbg.pb.gz" "$WORKDIR/dbg.report" || fail "report failed"
	grep -q "(offsets: dwarf, table 3.11 agrees)" "$WORKDIR/dbg.report" || {
		grep " Python " "$WORKDIR/dbg.report" | sed 's/^/  | /'
		fail "python3.11 with its DWARF: the report does not say the table agrees"
	}
else
	[ "${CI:-}" = true ] && fail "CI expects Debian's python3.11"
fi
[ "$NR_OK" -gt 0 ] || skip "no CPython 3.8-3.13 on this machine"
pass "Python frames right for $NR_OK interpreters without debuginfo"
