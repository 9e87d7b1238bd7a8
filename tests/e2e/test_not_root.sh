#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Without privileges, record fails at once with exit 1 and a one-line message
# naming the missing capability (CAP_BPF and/or CAP_PERFMON); it starts no
# command and leaves no file. Reading a profile needs no privilege: report
# and export work as an unprivileged user.
#
# Ground truth: the user is nobody (uid 65534, no capabilities), set with
# setpriv; the profile read as nobody was recorded as root from hot_ab.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture hot_ab
command -v setpriv >/dev/null || fail "setpriv (util-linux) not installed"

# as_nobody ARGS...: run ARGS as uid/gid 65534 with no groups or capabilities.
as_nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
}

# nobody needs to reach its directories and the binary
chmod 711 "$WORKDIR"
N=$WORKDIR/nobody
mkdir -p "$N"
chmod 1777 "$N"
lp=$LATPROF
if ! as_nobody test -x "$lp"; then
	mkdir -p "$N/bin"
	cp "$LATPROF" "$N/bin/latprof"
	chmod 755 "$N/bin" "$N/bin/latprof"
	lp=$N/bin/latprof
	info "$LATPROF is not reachable by nobody: using a copy in $lp"
fi

# denied NAME ARGS...: `latprof record ARGS` as nobody in the empty dir N/NAME
denied()
{
	local name=$1 rc
	shift
	local d=$N/$name
	mkdir -p "$d"
	chmod 777 "$d"
	(cd "$d" && as_nobody timeout -k 5 20 "$lp" record "$@") \
		>"$WORKDIR/$name.stdout" 2>"$WORKDIR/$name.stderr"
	rc=$?
	info "$name: latprof record $* as nobody -> $rc: $(head -c 300 "$WORKDIR/$name.stderr" | tr '\n' ' ')"
	if [ "$rc" != 1 ]; then
		diag_file "stderr" "$WORKDIR/$name.stderr"
		fail "$name: latprof record $* as nobody exited $rc, expected 1"
	fi
	check_one_line_error "$WORKDIR/$name.stderr" "CAP_BPF|CAP_PERFMON" \
		"$name: latprof record $* as nobody"
	[ -e "$d/ran" ] && fail "$name: the command was started although record could not trace it"
	check_dir_empty "$d" "$name: latprof record $* as nobody"
}

denied cmd -F 99 -o "$N/cmd/out.pb.gz" -- touch "$N/cmd/ran"
denied all -a -d 1 -o "$N/all/out.pb.gz"
as_nobody sleep 30 &
sleeper=$!	# its own process: only the capabilities are missing
BG_PIDS="$BG_PIDS $sleeper"
denied pid -p "$sleeper" -d 1 -o "$N/pid/out.pb.gz"

# Reading needs no privilege.
prof=$WORKDIR/root.pb.gz
lp_record "$WORKDIR/root.out" "$WORKDIR/root.err" -F 99 -o "$prof" -- "$FIXTURES/hot_ab" 0.5 ||
	{ diag_file "record stderr" "$WORKDIR/root.err"; fail "setup: record as root failed"; }
mkdir -p "$N/read"
cp "$prof" "$N/read/in.pb.gz"
chmod 777 "$N/read"
chmod 644 "$N/read/in.pb.gz"
(cd "$N/read" && as_nobody timeout -k 5 20 "$lp" report in.pb.gz) >"$WORKDIR/report.out" 2>&1 ||
	{ diag_file "report as nobody" "$WORKDIR/report.out"; fail "report as nobody failed"; }
grep -q hot_a "$WORKDIR/report.out" ||
	{ diag_file "report as nobody" "$WORKDIR/report.out"; fail "report as nobody does not show hot_a"; }
(cd "$N/read" && as_nobody timeout -k 5 20 "$lp" export in.pb.gz --format folded -o -) \
	>"$WORKDIR/export.out" 2>"$WORKDIR/export.err" ||
	{ diag_file "export as nobody" "$WORKDIR/export.err"; fail "export as nobody failed"; }
[ "$(folded_sum "$WORKDIR/export.out" hot_ab hot_a)" -gt 0 ] ||
	{ diag_file "export as nobody" "$WORKDIR/export.out"; fail "export as nobody has no hot_a"; }
pass
