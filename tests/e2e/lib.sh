# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers of the end-to-end tests, sourced by tests/e2e/test_*.sh.
#
# Environment (set by tests/run.sh; the defaults let a test run by hand from
# the repo root): LATPROF (the binary), FIXTURES (build/fixtures), WORKDIR (a
# fresh temp dir the test owns). Exit status: 0 pass, 1 fail, 77 skip.
#
# Every check compares latprof against ground truth that does not come from
# latprof: the CPU time a fixture measures for itself (getrusage), or
# /proc/PID/stat. Folded-stack helpers match a function name anywhere in a
# stack, never an exact chain: glibc has no frame pointers, so a sample in a
# frameless leaf may skip its caller.

set -u

LATPROF=${LATPROF:-$PWD/latprof}
FIXTURES=${FIXTURES:-$PWD/build/fixtures}
if [ -z "${WORKDIR:-}" ]; then
	WORKDIR=$(mktemp -d /tmp/latprof-e2e.XXXXXX)
fi
TEST_NAME=$(basename "$0" .sh)
# this directory: pprof_decode.py lives next to this file
_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Processes started with start_bg; killed on exit whatever happens.
BG_PIDS=""
# Commands added by at_exit, run on exit (after the processes are killed).
AT_EXIT=()

# at_exit CMD ARGS...: run CMD ARGS when the test exits, however it exits.
at_exit()
{
	AT_EXIT+=("$(printf '%q ' "$@")")
}

cleanup_bg()
{
	local p c
	for p in $BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $BG_PIDS; do
		wait "$p" 2>/dev/null
	done
	BG_PIDS=""
	for c in "${AT_EXIT[@]}"; do
		eval "$c"
	done
	AT_EXIT=()
	if [ -n "${WATCHDOG:-}" ]; then
		kill "$WATCHDOG" 2>/dev/null
		wait "$WATCHDOG" 2>/dev/null
	fi
}
trap cleanup_bg EXIT

# Watchdog: a test never runs past TEST_BUDGET_S (55 s) however many steps
# hang; each latprof call has its own shorter timeout too. The sleep gets no
# stdout, so a reader of the test's output never waits for it.
TEST_BUDGET_S=${TEST_BUDGET_S:-55}
(
	sleep "$TEST_BUDGET_S" >/dev/null 2>&1 </dev/null &
	wait $!
	echo "FAIL: $TEST_NAME: timed out after $TEST_BUDGET_S s"
	for p in $(ps -o pid= --ppid $$); do
		[ "$p" != "$BASHPID" ] && kill -TERM "$p" 2>/dev/null
	done
	kill -TERM $$
) &
WATCHDOG=$!

# fail MESSAGE...: one-line reason, then exit 1. Diagnostics go before it
# (see diag_file) so the reason is the last line a reader sees.
fail()
{
	echo "FAIL: $TEST_NAME: $*"
	exit 1
}

skip()
{
	echo "SKIP: $TEST_NAME: $*"
	exit 77
}

pass()
{
	echo "PASS: $TEST_NAME${1:+: $*}"
	exit 0
}

info()
{
	echo "  $TEST_NAME: $*"
}

# diag_file LABEL FILE [LINES]: print the head of FILE, indented.
diag_file()
{
	local n=${3:-20}
	echo "  --- $1 ($2, first $n lines) ---"
	if [ -e "$2" ]; then
		head -n "$n" "$2" | sed 's/^/  | /'
	else
		echo "  | (missing)"
	fi
}

# kernel_at_least MAJOR MINOR: is the running kernel MAJOR.MINOR or later?
kernel_at_least()
{
	local v maj min
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

# require_root_bpf: exit 77 unless root with BPF, BTF and perf events usable.
require_root_bpf()
{
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -e /proc/sys/kernel/unprivileged_bpf_disabled ] || skip "kernel has no bpf() syscall"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[ -e /proc/sys/kernel/perf_event_paranoid ] || skip "kernel has no perf events"
	require_tools
}

# require_tools: the binary and fixtures must exist; a missing one is a
# failure (the build is broken), not a reason to skip.
require_tools()
{
	[ -x "$LATPROF" ] || fail "latprof binary not found: $LATPROF"
	[ -d "$FIXTURES" ] || fail "fixtures dir not found: $FIXTURES"
	mkdir -p "$WORKDIR" || fail "cannot create WORKDIR $WORKDIR"
}

# require_fixture NAME...: each fixture binary must exist.
require_fixture()
{
	local f
	for f in "$@"; do
		[ -x "$FIXTURES/$f" ] || fail "fixture not built: $FIXTURES/$f"
	done
}

# pyenv_minors: the pyenv releases the interpreter matrices run, 3.8-3.13;
# under the sanitized suite (TEST_SANITIZED=1, the Makefile's SANITIZE=1) the
# oldest and the newest only, since that run checks latprof's memory and the
# normal one checks every CPython.
pyenv_minors()
{
	if [ "${TEST_SANITIZED:-}" = 1 ]; then
		echo 3.8 3.13
	else
		echo 3.8 3.9 3.10 3.11 3.12 3.13
	fi
}

# machine_pythons: the CPythons the Python tests run on, into the array
# `pythons`: Debian's python3.11 and each pyenv release of pyenv_minors (and
# `root`, pyenv's root). Skips the test when there is none; CI must have all
# seven (three in the sanitized suite).
machine_pythons()
{
	local v p want=7
	pythons=()
	[ -x /usr/bin/python3.11 ] && pythons+=(/usr/bin/python3.11)
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	for v in $(pyenv_minors); do
		for p in "$root"/versions/$v.*/bin/python$v; do
			[ -x "$p" ] && pythons+=("$p")
		done
	done
	[ "${TEST_SANITIZED:-}" = 1 ] && want=3
	[ ${#pythons[@]} -gt 0 ] || skip "no CPython 3.8-3.13 on this machine"
	if [ "${CI:-}" = true ] && [ ${#pythons[@]} -lt $want ]; then
		fail "CI expects Debian's python3.11 and pyenv 3.8-3.13, found: ${pythons[*]}"
	fi
}

# lp_record STDOUT STDERR ARGS...: run `latprof record ARGS` under a timeout
# (RECORD_TIMEOUT_S, default 30 s),
# stdout and stderr to files; returns latprof's exit status (124 on timeout).
# In the foreground it also sets AWAY, the CPUs' largest share of time in
# interrupts or stolen while it ran (cpu_away_frac; away_hi uses it).
AWAY=0
lp_record()
{
	local out=$1 err=$2 rc
	shift 2
	cpu_stat_snap "$WORKDIR/.stat0"
	timeout -k 5 "${RECORD_TIMEOUT_S:-30}" "$LATPROF" record "$@" >"$out" 2>"$err"
	rc=$?
	cpu_stat_snap "$WORKDIR/.stat1"
	AWAY=$(cpu_away_frac "$WORKDIR/.stat0" "$WORKDIR/.stat1")
	return $rc
}

# lp_folded PROFILE OUT: export PROFILE as folded stacks into OUT.
lp_folded()
{
	timeout -k 5 30 "$LATPROF" export "$1" --format folded -o - >"$2" 2>"$2.err"
}

# record_and_fold NAME ARGS...: `latprof record -o WORKDIR/NAME.pb.gz ARGS`
# then export to WORKDIR/NAME.folded; fails the test with diagnostics if
# either step fails. Leaves the command's stdout in WORKDIR/NAME.out.
record_and_fold()
{
	local name=$1 rc
	shift
	local prof=$WORKDIR/$name.pb.gz
	lp_record "$WORKDIR/$name.out" "$WORKDIR/$name.err" -o "$prof" "$@"
	rc=$?
	if [ $rc != 0 ]; then
		diag_file "latprof record stderr" "$WORKDIR/$name.err"
		diag_file "command stdout" "$WORKDIR/$name.out"
		fail "latprof record $* exited $rc (expected 0)"
	fi
	[ -s "$prof" ] || fail "latprof record $* exited 0 but wrote no $prof"
	lp_folded "$prof" "$WORKDIR/$name.folded"
	rc=$?
	if [ $rc != 0 ]; then
		diag_file "latprof export stderr" "$WORKDIR/$name.folded.err"
		fail "latprof export $prof --format folded exited $rc"
	fi
	check_folded_syntax "$WORKDIR/$name.folded"
}

# check_folded_syntax FILE: every line is "frame;...;frame COUNT" with a
# positive integer COUNT and no empty frame.
check_folded_syntax()
{
	local bad
	bad=$(awk '
		{
			n = split($0, w, " ")
			cnt = w[n]
			stack = substr($0, 1, length($0) - length(cnt) - 1)
			if (cnt !~ /^[0-9]+$/ || cnt == 0 || stack == "" ||
			    stack ~ /(^;|;;|;$)/) { print NR ": " $0; exit }
		}' "$1")
	if [ -n "$bad" ]; then
		diag_file "folded output" "$1"
		fail "malformed folded line $bad"
	fi
}

# Awk functions every folded-stack reader here prepends to its program:
# folded_parse() splits the current line into f[1..n] (comm first, leaf
# last) and stack (the text before the count), and returns the count;
# folded_is(c) is true when the comm frame f[1] is c or "c-PID" (--per-pid).
FOLDED_AWK='
function folded_parse(   i) {
	i = length($0)
	while (i > 0 && substr($0, i, 1) != " ")
		i--
	stack = substr($0, 1, i - 1)
	n = split(stack, f, ";")
	return substr($0, i + 1) + 0
}
function folded_is(c) {
	return f[1] == c ||
	       (index(f[1], c "-") == 1 && substr(f[1], length(c) + 2) ~ /^[0-9]+$/)
}
'

# folded_sum FILE [COMM [FRAME]]: total COUNT of the stacks whose first frame
# is COMM (any when empty) and that contain FRAME as a whole frame anywhere
# (any when empty). A "comm-PID" first frame (--per-pid) matches COMM too.
folded_sum()
{
	awk -v comm="${2:-}" -v frame="${3:-}" "$FOLDED_AWK"'
		{
			cnt = folded_parse()
			if (comm != "" && !folded_is(comm))
				next
			if (frame != "") {
				hit = 0
				for (j = 2; j <= n; j++)
					if (f[j] == frame) { hit = 1; break }
				if (!hit)
					next
			}
			sum += cnt
		}
		END { print sum + 0 }' "$1"
}

# folded_sum_seq FILE COMM SEQ: like folded_sum, for the stacks containing the
# consecutive frames SEQ ("caller;callee").
folded_sum_seq()
{
	awk -v comm="$2" -v seq="$3" "$FOLDED_AWK"'
		{
			cnt = folded_parse()
			if (!folded_is(comm))
				next
			if (index(";" stack ";", ";" seq ";"))
				sum += cnt
		}
		END { print sum + 0 }' "$1"
}

# folded_comms FILE: the distinct first frames, one a line.
folded_comms()
{
	awk '{ split($0, f, ";"); print f[1] }' "$1" | sort -u
}

# kv FILE PREFIX KEY: value of KEY=VALUE on the first line of FILE starting
# with PREFIX (the fixtures print "name key=value ..." lines).
kv()
{
	awk -v pfx="$2" -v key="$3" '
		index($0, pfx) == 1 {
			for (i = 1; i <= NF; i++)
				if (index($i, key "=") == 1) { print substr($i, length(key) + 2); exit }
		}' "$1"
}

# in_range VALUE LO HI: true when LO <= VALUE <= HI (floats).
in_range()
{
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# calc EXPR: evaluate a float expression with awk, 3 decimals.
calc()
{
	awk "BEGIN { printf \"%.3f\", $1 }"
}

# pyroot FILE...: make (once, cached) Debian testing's root with its stripped
# python3.13-3.15 (tests/pyroot/mkroot.sh; PYROOT_DIR) and copy FILEs into a
# directory of it removed at exit. Sets PYROOT (the root) and PYROOT_TMP (that
# directory as the chrooted interpreter sees it). Returns 1 when debootstrap
# is missing (a failure under CI, where make setup installs it).
pyroot()
{
	local mkroot sub
	if ! command -v debootstrap >/dev/null; then
		[ "${CI:-}" = true ] && fail "debootstrap not installed (make setup installs it)"
		return 1
	fi
	mkroot=$_lib_dir/../pyroot/mkroot.sh
	PYROOT=$("$mkroot" "${PYROOT_DIR:-/var/cache/latprof/pyroot}" 2>"$WORKDIR/mkroot.err") || {
		diag_file "mkroot" "$WORKDIR/mkroot.err"
		fail "cannot make the Debian testing root"
	}
	sub=$(mktemp -d "$PYROOT/tmp/latprof-e2e.XXXXXX")
	at_exit rm -rf "$sub"
	cp "$@" "$sub/" || fail "cannot copy $* into $sub"
	PYROOT_TMP=/tmp/${sub##*/}
}

# start_bg OUT CMD ARGS...: start CMD in the background with stdout in OUT;
# sets BG_PID. It is killed when the test exits.
start_bg()
{
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	BG_PID=$!
	BG_PIDS="$BG_PIDS $BG_PID"
}

# wait_for_line FILE PATTERN [TIMEOUT_S]: wait until FILE has a line matching
# the grep -E PATTERN.
wait_for_line()
{
	local i
	for ((i = 0; i < ${3:-5} * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# proc_cpu_ns PID: utime + stime of PID from /proc/PID/stat, in ns.
proc_cpu_ns()
{
	local hz
	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{
		# comm (field 2) may hold spaces: count fields after the last ")"
		sub(/^.*\) /, "")
		printf "%.0f\n", ($12 + $13) * 1000000000 / hz
	}' "/proc/$1/stat"
}

# check_one_line_error STDERR_FILE PATTERN WHAT: stderr is exactly one line,
# starting with "latprof: " and matching the grep -Ei PATTERN.
check_one_line_error()
{
	local f=$1 pat=$2 what=$3 n
	n=$(grep -c '' "$f")
	if [ "$n" != 1 ]; then
		diag_file "stderr" "$f"
		fail "$what: expected one line on stderr, got $n"
	fi
	if ! grep -q '^latprof: ' "$f"; then
		diag_file "stderr" "$f"
		fail "$what: stderr does not start with 'latprof: '"
	fi
	if ! grep -qEi -- "$pat" "$f"; then
		diag_file "stderr" "$f"
		fail "$what: message does not name the problem (expected /$pat/)"
	fi
}

# check_dir_empty DIR WHAT: a failed run left nothing behind.
check_dir_empty()
{
	local left
	left=$(ls -A "$1")
	[ -z "$left" ] || fail "$2: left files behind in $1: $(echo $left)"
}

# have_go: the go tool (golang-go) is installed.
have_go()
{
	command -v go >/dev/null 2>&1
}

# require_cmd CMD PACKAGE WHAT: the test needs CMD (Debian PACKAGE) for WHAT.
# `make setup` installs every PACKAGE named here (the Makefile's
# DEB_PACKAGES), so under CI=true a missing CMD fails the test; elsewhere it
# skips, and the skip names the tool. Never a silent "if installed".
require_cmd()
{
	command -v "$1" >/dev/null 2>&1 && return 0
	[ "${CI:-}" = true ] && fail "$1 ($2) not installed, needed for $3 (make setup installs it)"
	skip "$1 ($2) not installed, needed for $3"
}

# disk_workdir: set DISK_DIR to an empty directory on a disk file system (for
# I/O that tmpfs would skip, e.g. fsync): WORKDIR itself unless it is on
# tmpfs/ramfs, else a new directory under /var/tmp or, if that is tmpfs too,
# under the repo's build/. It is removed when the test exits. Fails when no
# candidate is a disk file system.
disk_workdir()
{
	local d fs
	for d in "$WORKDIR" /var/tmp "$_lib_dir/../../build"; do
		fs=$(stat -f -c %T "$d" 2>/dev/null) || continue
		case $fs in
		tmpfs|ramfs) continue ;;
		esac
		if [ "$d" = "$WORKDIR" ]; then
			DISK_DIR=$WORKDIR/disk
			mkdir -p "$DISK_DIR" || fail "cannot create $DISK_DIR"
		else
			DISK_DIR=$(mktemp -d "$d/latprof-$TEST_NAME.XXXXXX") || fail "cannot create a directory in $d"
			at_exit rm -rf "$DISK_DIR"
		fi
		DISK_FS=$fs
		return 0
	done
	fail "no disk file system for $TEST_NAME: $WORKDIR, /var/tmp and build/ are all tmpfs or missing"
}

# go_pprof_top PROFILE OUT: `go tool pprof -top` with every cache and home
# under WORKDIR (CI has no writable HOME) and no symbolization attempt.
go_pprof_top()
{
	local g=$WORKDIR/go
	mkdir -p "$g/home" "$g/cache" "$g/path" "$g/tmp"
	HOME=$g/home GOCACHE=$g/cache GOPATH=$g/path GOTMPDIR=$g/tmp PPROF_TMPDIR=$g/tmp \
		GOFLAGS= GOTOOLCHAIN=local GOPROXY=off \
		timeout -k 5 40 go tool pprof -top -symbolize=none "$1" >"$2" 2>&1
}

# signal_record SIG AFTER_S PROFILE ERR ARGS...: start `latprof record
# -o PROFILE ARGS` with default signal dispositions (job control on, so the
# shell does not make it ignore SIGINT), send SIG AFTER_S seconds after its
# BPF programs are loaded, and
# wait up to 30 s for it to exit. Returns its exit status (137 if it had to
# be killed); sets SIG_ELAPSED_S to the time from the signal to its exit.
signal_record()
{
	local sig=$1 after=$2 prof=$3 err=$4 lp i t0
	shift 4
	set -m
	"$LATPROF" record -o "$prof" "$@" >"$err.stdout" 2>"$err" &
	lp=$!
	set +m
	# AFTER counts from the programs' load (attached within milliseconds),
	# not from the start: a busy machine can take a second to get there
	for ((i = 0; i < 300; i++)); do
		grep -qs '^prog_id:' /proc/"$lp"/fdinfo/* && break
		kill -0 "$lp" 2>/dev/null || break
		sleep 0.05
	done
	sleep "$after"
	t0=$(date +%s.%N)
	kill -"$sig" "$lp" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$lp" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$lp" 2>/dev/null; then
		kill -KILL "$lp" 2>/dev/null
	fi
	wait "$lp"
	i=$?
	SIG_ELAPSED_S=$(calc "$(date +%s.%N) - $t0")
	return $i
}

# --- stack completeness (DWARF unwinding tests, test_unwind_*.sh) ---

# _folded_chain_awk: awk program behind folded_sum_chain and folded_missing.
# Variables: comm, chain, gap, invert (0: sum the counts of comm's lines
# containing the chain; 1: print comm's lines without it; 2: print those with it). CHAIN is ";"-separated, root first;
# an element "~RE" matches any frame matching the awk regex RE; "*" allows any
# frames at that place. Elsewhere only frames matching GAP may sit between
# two elements (default: inline frames "_[i]"); frames before the first and
# after the last element never matter.
_folded_chain_awk='
	function el_match(fr, e)
	{
		return substr(e, 1, 1) == "~" ? fr ~ substr(e, 2) : fr == e
	}
	# 1 if elements k.. match at frames j.., the frames skipped before
	# element k being allowed by free[k] or gap
	function chain_at(j, k,    jj)
	{
		if (k > nc)
			return 1
		for (jj = j; jj <= n; jj++) {
			if (el_match(f[jj], c[k]) && chain_at(jj + 1, k + 1))
				return 1
			if (!free[k] && f[jj] !~ gap)
				return 0
		}
		return 0
	}
	BEGIN {
		if (gap == "")
			gap = "_\\[i\\]$"
		m = split(chain, raw, ";")
		nc = 0
		star = 1
		for (i = 1; i <= m; i++) {
			if (raw[i] == "*") {
				star = 1
				continue
			}
			c[++nc] = raw[i]
			free[nc] = star
			star = 0
		}
	}
	{
		cnt = folded_parse()
		if (comm != "" && !folded_is(comm))
			next
		f[1] = ""	# the comm is not a frame
		hit = chain_at(2, 1)
		if ((invert == 1 && !hit) || (invert == 2 && hit))
			print
		else if (!invert && hit)
			sum += cnt
	}
	END {
		if (!invert)
			print sum + 0
	}'

# folded_sum_chain FILE COMM CHAIN [GAP]: total COUNT of COMM's stacks (any
# comm when COMM is empty) that contain CHAIN in order, root first: e.g.
# "main;mid_a;mid_b;leaf" (consecutive but for inline frames),
# "main;sort_path;*;cmp_mix" (anything between sort_path and cmp_mix),
# "main;plt_caller;~^__cos" (a regex element). GAP: awk regex of the frames
# allowed between two consecutive elements, default "_\[i\]$".
folded_sum_chain()
{
	awk -v comm="$2" -v chain="$3" -v gap="${4:-}" -v invert=0 "$FOLDED_AWK$_folded_chain_awk" "$1"
}

# folded_missing FILE COMM CHAIN [N]: the N (default 10) heaviest stacks of
# COMM that do not contain CHAIN, indented, for diagnostics.
folded_missing()
{
	awk -v comm="$2" -v chain="$3" -v gap= -v invert=1 "$FOLDED_AWK$_folded_chain_awk" "$1" |
		awk '{ i = length($0); while (i > 0 && substr($0, i, 1) != " ") i--
		       print substr($0, i + 1) "\t" $0 }' |
		sort -t"$(printf '\t')" -k1,1nr -s | awk -F'\t' -v max="${4:-10}" '
			{
				if (NR <= max)
					print "  | " $2
				left += $1
			}
			END { print "  | (" NR " stacks, " left + 0 " samples without the chain)" }'
}

# folded_with FILE COMM CHAIN: the lines of COMM's stacks that contain CHAIN
# (same syntax as folded_sum_chain), to narrow what folded_missing shows.
folded_with()
{
	awk -v comm="$2" -v chain="$3" -v gap= -v invert=2 "$FOLDED_AWK$_folded_chain_awk" "$1"
}

# lp_report PROFILE OUT: `latprof report PROFILE` (no colour) into OUT.
lp_report()
{
	timeout -k 5 30 "$LATPROF" report --no-color "$1" >"$2" 2>"$2.err"
}

# report_stacks_lines REPORT PID: the line of process PID in the "Stacks"
# section of a `latprof report` output, and any continuation lines after it
# (indented lines whose first field is not a number).
report_stacks_lines()
{
	awk -v pid="$2" '
		/^Stacks/ { in_sec = 1; next }
		in_sec && /^[^ ]/ { in_sec = 0 }
		!in_sec { next }
		$1 == pid { print; cont = 1; next }
		cont && NF && $1 !~ /^[0-9]+$/ { print; next }
		{ cont = 0 }' "$1"
}

# report_stacks REPORT PID KEY: a value from the "Stacks" section of a
# `latprof report` output, on the line of process PID:
#   "  1234 comm  dwarf  complete 980  truncated 20 (copy 3, depth 0,
#    no-unwind-info 17, bad-read 0)"
# KEY is unwind (the mode), complete, truncated, copy, depth, no-unwind-info
# or bad-read. Prints nothing when there is no such line or key; "-" stays
# "-" (fp mode does not measure completeness). A line wrapped onto
# continuation lines is read as one (the format check is the caller's).
report_stacks()
{
	report_stacks_lines "$1" "$2" | tr '\n' ' ' | awk -v key="$3" '
		{
			if (key == "unwind") {
				print $3
				exit
			}
			for (i = 4; i < NF; i++)
				if ($i == key || $i == "(" key) {
					v = $(i + 1)
					gsub(/[(),]/, "", v)
					print v
					exit
				}
		}'
}

# profile_meta PROFILE: the run metadata of a latprof profile, one KEY=VALUE
# a line (the pprof comments "latprof:KEY=VALUE", docs/formats.md), decoded
# by pprof_decode.py so no value is cut or glued to the next string.
profile_meta()
{
	/usr/bin/python3 "$_lib_dir/pprof_decode.py" meta "$1"
}

# ratio A B: A / B with 3 decimals; 0 when B is 0.
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'
}

# --- syscall latency and off-CPU (test_syscall_*.sh, test_offcpu_*.sh) ---

# lp_export PROFILE OUT ARGS...: `latprof export PROFILE ARGS -o OUT` (e.g.
# --format json --weight latency), stderr in OUT.err; returns its status.
lp_export()
{
	local prof=$1 out=$2
	shift 2
	timeout -k 5 30 "$LATPROF" export "$prof" "$@" -o "$out" 2>"$out.err"
}

# export_or_fail PROFILE OUT ARGS...: lp_export, failing the test with
# latprof's stderr when it does not exit 0; a folded OUT is syntax-checked.
export_or_fail()
{
	local prof=$1 out=$2 rc
	shift 2
	lp_export "$prof" "$out" "$@"
	rc=$?
	if [ $rc != 0 ]; then
		diag_file "latprof export stderr" "$out.err"
		fail "latprof export $prof $* exited $rc"
	fi
	case " $* " in
	*" --format folded "*) [ -s "$out" ] && check_folded_syntax "$out" ;;
	esac
	return 0
}

# record_or_fail NAME ARGS...: `latprof record -o WORKDIR/NAME.pb.gz ARGS`,
# stdout in WORKDIR/NAME.out, stderr in WORKDIR/NAME.err; fails the test
# with diagnostics unless it exits 0 and writes the profile.
record_or_fail()
{
	local name=$1 rc
	shift
	lp_record "$WORKDIR/$name.out" "$WORKDIR/$name.err" -o "$WORKDIR/$name.pb.gz" "$@"
	rc=$?
	if [ $rc != 0 ]; then
		diag_file "latprof record stderr" "$WORKDIR/$name.err"
		diag_file "command stdout" "$WORKDIR/$name.out"
		fail "latprof record $* exited $rc (expected 0)"
	fi
	[ -s "$WORKDIR/$name.pb.gz" ] || fail "latprof record $* exited 0 but wrote no $WORKDIR/$name.pb.gz"
}

# json_py FILE CODE [ARGS...]: run the Python CODE with j = the JSON document
# in FILE and sys.argv[2:] = ARGS (the system python, not whatever python3 is
# first on PATH).
json_py()
{
	local file=$1 code=$2
	shift 2
	/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
'"$code" "$file" "$@"
}

# json_check FILE: FILE is a latprof-json document: the header fields, and
# stacks whose values add up to "total". Prints nothing; fails the test.
json_check()
{
	local err
	err=$(json_py "$1" '
e = []
if j.get("format") != "latprof-json": e.append("format is %r" % j.get("format"))
if j.get("version") != 1: e.append("version is %r" % j.get("version"))
for k in ("weight", "unit", "total", "metadata", "stacks", "syscalls"):
    if k not in j: e.append("no key %r" % k)
st = j.get("stacks", [])
if any(not isinstance(s.get("frames"), list) or not isinstance(s.get("value"), int) for s in st):
    e.append("a stack without a frames list or an integer value")
elif sum(s["value"] for s in st) != j.get("total"):
    e.append("stack values add up to %d, total is %r" % (sum(s["value"] for s in st), j.get("total")))
print("; ".join(e))' 2>&1)
	if [ -n "$err" ]; then
		diag_file "json" "$1" 5
		fail "malformed latprof JSON $1: $err"
	fi
}

# json_syscall FILE PID NAME KEY: KEY of the "syscalls" entry of process PID
# for syscall NAME (empty when there is none).
json_syscall()
{
	json_py "$1" '
for s in j.get("syscalls", []):
    if s.get("pid") == '"$2"' and s.get("name") == sys.argv[2]:
        print(s.get(sys.argv[3], "")); break' "$3" "$4"
}

# json_syscalls_of FILE PID: the "syscalls" entries of process PID, one
# "name count total_ns in_flight" a line, for diagnostics.
json_syscalls_of()
{
	json_py "$1" '
for s in j.get("syscalls", []):
    if s.get("pid") == '"$2"':
        print("  | %s count=%s total_ns=%s max_ns=%s in_flight=%s" % (s.get("name"),
              s.get("count"), s.get("total_ns"), s.get("max_ns"), s.get("in_flight")))'
}

# pprof_sums PROFILE: the total of each value column of a pprof file, one
# "type/unit SUM" a line, decoded by pprof_decode.py, so the check does not
# depend on latprof's own reader.
pprof_sums()
{
	/usr/bin/python3 "$_lib_dir/pprof_decode.py" sums "$1"
}

# pprof_sum PROFILE TYPE: the total of the value column TYPE (e.g. latency).
pprof_sum()
{
	pprof_sums "$1" | awk -v t="$2" 'index($1, t "/") == 1 { print $2; found = 1 }
		END { if (!found) print "" }'
}

# folded_sum_leaf FILE COMM CHAIN LEAF: like folded_sum_chain, counting only
# the stacks whose last frame is LEAF (e.g. syscall:read).
folded_sum_leaf()
{
	awk -v leaf="$4" "$FOLDED_AWK"'{ folded_parse(); if (f[n] == leaf) print }' "$1" |
		folded_sum_chain /dev/stdin "$2" "$3"
}

# folded_top FILE [COMM] [N]: the N (default 10) heaviest stacks of COMM
# (any when empty), indented, for diagnostics.
folded_top()
{
	awk -v comm="${2:-}" "$FOLDED_AWK"'{ c = folded_parse(); if (comm == "" || folded_is(comm)) print c "\t" $0 }' "$1" |
		sort -t"$(printf '\t')" -k1,1nr | head -n "${3:-10}" | cut -f2- | sed 's/^/  | /'
}

# json_proc_sum FILE PID KEY: the sum of KEY over the "syscalls" entries of
# process PID.
json_proc_sum()
{
	json_py "$1" '
print(sum(s.get(sys.argv[2], 0) for s in j.get("syscalls", []) if s.get("pid") == '"$2"'))' "$3"
}

# --- separate debuginfo (test_debuginfo_*.sh) ---
# The fixture is dbg_hot (or a variant): main -> dbg_hot_loop, which spins.
# Ground truth comes from the unstripped binary, through binutils and
# elfutils, never through latprof.

# dbg_split NAME BIN: copy BIN to WORKDIR/NAME/dbg_hot (so the comm stays
# dbg_hot), its DWARF and symbols to WORKDIR/NAME.debug (objcopy
# --only-keep-debug), then strip the copy of every symbol (strip --strip-all:
# no .symtab, only .dynsym is left).
dbg_split()
{
	local dir=$WORKDIR/$1
	mkdir -p "$dir"
	cp "$2" "$dir/dbg_hot"
	objcopy --only-keep-debug "$2" "$WORKDIR/$1.debug" || fail "objcopy --only-keep-debug $2 failed"
	strip --strip-all "$dir/dbg_hot" || fail "strip --strip-all failed"
	if nm "$dir/dbg_hot" 2>/dev/null | grep -q dbg_hot_loop; then
		fail "$dir/dbg_hot still has a symbol table after strip --strip-all"
	fi
}

# dbg_build_id BIN: BIN's GNU build-id in lower-case hex (eu-readelf -n).
dbg_build_id()
{
	eu-readelf -n "$1" | awk '/Build ID:/ { print $NF; exit }'
}

# dbg_fn_range BIN: "START END" of dbg_hot_loop in BIN (nm -S), in decimal.
dbg_fn_range()
{
	local start size
	read -r start size < <(nm -S "$1" | awk '$4 == "dbg_hot_loop" { print $1, $2 }')
	[ -n "$start" ] && echo "$((0x$start)) $((0x$start + 0x$size))"
}

# dbg_truth_lines BIN: the lines of dbg_hot.c that eu-addr2line -i gives for
# the bytes of dbg_hot_loop in the unstripped BIN (the function's own lines
# and the call sites of what is inlined into it), one a line.
dbg_truth_lines()
{
	local r a
	r=$(dbg_fn_range "$1")
	[ -n "$r" ] || fail "nm finds no dbg_hot_loop in $1"
	for ((a = ${r% *}; a < ${r#* }; a++)); do
		printf '0x%x\n' "$a"
	done | eu-addr2line -i -e "$1" |
		awk -F: '{ n = split($1, p, "/"); if (p[n] == "dbg_hot.c") print $2 }' | sort -un
}

# dbg_record NAME BIN ARGS...: record_or_fail NAME -F 499 ARGS -- BIN 0.5,
# then export folded stacks to WORKDIR/NAME.folded and the source frames
# (pprof_decode.py lines) to WORKDIR/NAME.lines.
dbg_record()
{
	local name=$1 bin=$2
	shift 2
	record_or_fail "$name" -F 499 "$@" -- "$bin" 0.5
	export_or_fail "$WORKDIR/$name.pb.gz" "$WORKDIR/$name.folded" --format folded
	/usr/bin/python3 "$_lib_dir/pprof_decode.py" lines "$WORKDIR/$name.pb.gz" >"$WORKDIR/$name.lines" ||
		fail "pprof_decode.py lines $WORKDIR/$name.pb.gz failed"
}

# dbg_expect_resolved NAME UNSTRIPPED [LINES]: the recording NAME (see
# dbg_record) names dbg_hot_loop in >= 80% of dbg_hot's samples and, unless
# LINES is "nolines", >= 90% of those carry dbg_hot.c and a line that
# eu-addr2line gives for dbg_hot_loop in UNSTRIPPED. Sets DBG_RESULT.
dbg_expect_resolved()
{
	local name=$1 truth total fn lined good
	total=$(folded_sum "$WORKDIR/$name.folded" dbg_hot)
	fn=$(folded_sum "$WORKDIR/$name.folded" dbg_hot dbg_hot_loop)
	if [ "$total" -le 0 ] || ! in_range "$(ratio "$fn" "$total")" 0.8 1; then
		folded_top "$WORKDIR/$name.folded" dbg_hot 5
		fail "$name: dbg_hot_loop in $fn of $total dbg_hot samples, expected >= 80%"
	fi
	DBG_RESULT="$fn/$total samples in dbg_hot_loop"
	[ "${3:-}" = nolines ] && return 0
	truth=$(dbg_truth_lines "$2" | tr '\n' ' ')
	[ -n "$truth" ] || fail "eu-addr2line gives no dbg_hot.c line for dbg_hot_loop in $2"
	read -r lined good < <(awk -F'\t' -v truth=" $truth" '
		$2 == "dbg_hot_loop" {
			all += $1
			n = split($3, p, "/")
			if (p[n] == "dbg_hot.c" && index(truth, " " $4 " ")) ok += $1
		}
		END { print all + 0, ok + 0 }' "$WORKDIR/$name.lines")
	if [ "$lined" -le 0 ] || ! in_range "$(ratio "$good" "$lined")" 0.9 1; then
		grep -F dbg_hot_loop "$WORKDIR/$name.lines" | sed 's/^/  | /'
		fail "$name: $good of $lined dbg_hot_loop samples at dbg_hot.c:{$truth}, expected >= 90%"
	fi
	DBG_RESULT="$DBG_RESULT, $good/$lined at dbg_hot.c lines {${truth% }}"
}

# dbg_expect_unresolved NAME UNSTRIPPED: the recording NAME has no
# dbg_hot_loop frame, and >= 80% of dbg_hot's samples have a fallback frame
# dbg_hot+0xOFFSET with OFFSET inside dbg_hot_loop of UNSTRIPPED (nm -S).
# Sets DBG_RESULT.
dbg_expect_unresolved()
{
	local name=$1 total fn inside r
	r=$(dbg_fn_range "$2")
	total=$(folded_sum "$WORKDIR/$name.folded" dbg_hot)
	fn=$(folded_sum "$WORKDIR/$name.folded" dbg_hot dbg_hot_loop)
	inside=$(awk -v lo="${r% *}" -v hi="${r#* }" "$FOLDED_AWK"'
		function hex(s,   i, v) {
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		{
			cnt = folded_parse()
			if (!folded_is("dbg_hot"))
				next
			for (j = 2; j <= n; j++)
				if (f[j] ~ /^dbg_hot\+0x[0-9a-f]+$/) {
					o = hex(substr(f[j], 11))
					if (o >= lo + 0 && o <= hi + 0) { sum += cnt; break }
				}
		}
		END { print sum + 0 }' "$WORKDIR/$name.folded")
	if [ "$fn" != 0 ] || [ "$total" -le 0 ] || ! in_range "$(ratio "$inside" "$total")" 0.8 1; then
		folded_top "$WORKDIR/$name.folded" dbg_hot 5
		fail "$name: expected no dbg_hot_loop frame (got $fn) and >= 80% of $total samples at dbg_hot+$(printf '0x%x..0x%x' $r) (got $inside)"
	fi
	DBG_RESULT="unresolved: $inside/$total samples at dbg_hot+$(printf '0x%x..0x%x' $r) (dbg_hot_loop)"
}

# --- flame graph SVGs (test_flamegraph*.sh) ---
# Read with Python's XML parser, not latprof: frames are the <g class="f">
# elements, with data-name, data-w and (hot/cold, diff) data-w2.

# svg_py FILE CODE [ARGS...]: run the Python CODE with `frames` = a list of
# dicts {name, w, w2, fill} in document order, `root` = the parsed <svg>
# element and sys.argv[2:] = ARGS. A document that does not parse fails.
svg_py()
{
	local file=$1 code=$2
	shift 2
	/usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
frames = []
for g in root.iter(NS + "g"):
    if g.get("class") != "f":
        continue
    r = g.find(NS + "rect")
    frames.append(dict(name=g.get("data-name"), w=int(g.get("data-w")),
                       w2=int(g.get("data-w2") or 0), fill=r.get("fill"),
                       width=float(r.get("width"))))
'"$code" "$file" "$@"
}

# svg_sum FILE NAME [KEY]: the sum of KEY (w, default, or w2) over the frames
# named NAME (a function called from several places has several frames).
svg_sum()
{
	svg_py "$1" 'print(sum(f[sys.argv[3]] for f in frames if f["name"] == sys.argv[2]))' \
		"$2" "${3:-w}"
}

# svg_check FILE WHAT: FILE is well-formed XML (xmllint) and has frames.
svg_check()
{
	local n
	xmllint --noout "$1" 2>"$1.xmllint" || { diag_file "xmllint" "$1.xmllint"; fail "$2: xmllint rejects $1"; }
	n=$(svg_py "$1" 'print(len(frames))') || fail "$2: $1 does not parse"
	[ "$n" -gt 1 ] || fail "$2: $1 has $n frames"
}

# lp_flame OUT ARGS...: `latprof flamegraph ARGS -o OUT`, stderr in OUT.err;
# returns its status. lp_flame_or_fail: the same, failing unless it exits 0
# with a well-formed SVG.
lp_flame()
{
	local out=$1
	shift
	timeout -k 5 30 "$LATPROF" flamegraph "$@" -o "$out" 2>"$out.err"
}

lp_flame_or_fail()
{
	local out=$1 rc
	shift
	lp_flame "$out" "$@"
	rc=$?
	if [ $rc != 0 ]; then
		diag_file "latprof flamegraph stderr" "$out.err"
		fail "latprof flamegraph $* exited $rc"
	fi
	svg_check "$out" "flamegraph $*"
}

# cpu_poll_start FILE PID...: in the background until the test ends, append
# "WALL_NS PID CPU_NS" to FILE every 10 ms for each PID, CPU_NS being the
# task's time on CPU from /proc/PID/schedstat (nanoseconds, unlike the tick
# counts of /proc/PID/stat). With cpu_window, the CPU a process had during a
# recording's own window (the profile's time_ns + duration_ns).
cpu_poll_start()
{
	local file=$1 i
	shift
	start_bg "$file.err" /usr/bin/python3 -c '
import sys, time
out, pids = open(sys.argv[1], "a"), sys.argv[2:]
while True:
    for p in pids:
        try:
            cpu = open("/proc/%s/schedstat" % p).read().split()[0]
        except OSError:
            continue
        out.write("%d %s %s\n" % (time.time_ns(), p, cpu))
    out.flush()
    time.sleep(0.01)' "$file" "$@"
	# the first poll before anything is measured: python's start-up (tens
	# of ms) once came after a recording's start, and its window had no
	# poll before it (a CI run of test_sigint)
	for ((i = 0; i < 500; i++)); do
		[ -s "$file" ] && return 0
		sleep 0.01
	done
	fail "the CPU poller wrote nothing in 5 s ($file.err: $(head -c 200 "$file.err"))"
}

# cpu_window FILE PID START_NS END_NS: PID's CPU time (ns) between the two
# wall-clock times, interpolated linearly between the polls around each.
cpu_window()
{
	/usr/bin/python3 - "$@" <<'PYEOF'
import sys
path, pid, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pts = sorted((int(t), int(c)) for t, p, c in (l.split() for l in open(path)) if p == pid)
def at(t):
    for (t0, c0), (t1, c1) in zip(pts, pts[1:]):
        if t0 <= t <= t1:
            return c0 + (c1 - c0) * (t - t0) / max(1, t1 - t0)
    sys.exit("no polls around %d" % t)
print("%.0f" % (at(hi) - at(lo)))
PYEOF
}

# --- request tracking against wrk (test_requests_uvicorn, test_server_nginx) ---

# record_around_wrk PID PROFILE WRK_ARGS...: `latprof record -p PID
# --requests -o PROFILE` while `wrk --latency WRK_ARGS` runs, started once
# latprof says every program is attached and stopped half a second after
# wrk; wrk's output in WORKDIR/wrk.out, latprof's stderr in WORKDIR/rec.err.
record_around_wrk()
{
	local pid=$1 prof=$2 lp
	shift 2
	timeout -k 5 40 "$LATPROF" record -v -p "$pid" --requests -o "$prof" >"$WORKDIR/rec.out" \
		2>"$WORKDIR/rec.err" &
	lp=$!
	wait_for_line "$WORKDIR/rec.err" "attached after" 20 ||
		{ diag_file "record stderr" "$WORKDIR/rec.err"; fail "latprof record did not attach"; }
	wrk --latency "$@" >"$WORKDIR/wrk.out" 2>&1
	sleep 0.5
	kill -INT "$lp"
	wait "$lp" || { diag_file "record stderr" "$WORKDIR/rec.err"; fail "latprof record failed"; }
}

# requests_match_wrk PROFILE: latprof's requests against wrk's (WORKDIR/wrk.out):
# the count +-1% (wrk leaves out the requests still in flight when it stops;
# the server may answer them), p50 and p99 within REQ_P50_TOL and REQ_P99_TOL
# (fractions, 0.20 unless the caller sets them). Sets REQ_N, REQ_P50,
# REQ_P99, REQ_SHARED, REQ_CPU (average CPU ns) and WRK_N, WRK_P50, WRK_P99.
requests_match_wrk()
{
	local json=$WORKDIR/requests.json errors
	# wrk: "  1234 requests in 4.00s, ..." and "     50%   15.20ms" lines
	WRK_N=$(awk '/ requests in / { print $1 }' "$WORKDIR/wrk.out")
	WRK_P50=$(_wrk_ns 50%)
	WRK_P99=$(_wrk_ns 99%)
	errors=$(grep -c "Non-2xx\|Socket errors" "$WORKDIR/wrk.out")
	[ -n "$WRK_N" ] && [ -n "$WRK_P50" ] && [ "$errors" = 0 ] ||
		{ diag_file wrk "$WORKDIR/wrk.out"; fail "wrk failed or saw errors"; }
	export_or_fail "$1" "$json" --format json
	read -r REQ_N REQ_P50 REQ_P99 REQ_SHARED REQ_CPU <<<"$(json_py "$json" '
r = j["requests"]
print(r["count"], r["p50_ns"], r["p99_ns"], r["shared"], r["average"]["cpu_ns"])')"
	info "latprof: $REQ_N requests p50=$REQ_P50 p99=$REQ_P99 shared=$REQ_SHARED avg cpu=$REQ_CPU ns; wrk: $WRK_N requests p50=$WRK_P50 p99=$WRK_P99"
	in_range "$REQ_N" "$(calc "$WRK_N * 0.99")" "$(calc "$WRK_N * 1.01")" ||
		fail "latprof found $REQ_N requests, wrk completed $WRK_N (want +-1%)"
	local t50=${REQ_P50_TOL:-0.20} t99=${REQ_P99_TOL:-0.20}
	in_range "$(ratio "$REQ_P50" "$WRK_P50")" "$(calc "1 - $t50")" "$(calc "1 + $t50")" ||
		fail "p50 $REQ_P50 ns, wrk says $WRK_P50 ns (want +-$t50)"
	in_range "$(ratio "$REQ_P99" "$WRK_P99")" "$(calc "1 - $t99")" "$(calc "1 + $t99")" ||
		fail "p99 $REQ_P99 ns, wrk says $WRK_P99 ns (want +-$t99)"
}

# _wrk_ns Q: wrk's latency quantile Q ("50%") in WORKDIR/wrk.out, in ns
_wrk_ns()
{
	awk -v q="$1" '$1 == q {
		v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		print int(v * (u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : 1)) }' "$WORKDIR/wrk.out"
}

# --- time a CPU spends away from its tasks ---

# cpu_stat_snap FILE: the per-CPU lines of /proc/stat, for cpu_away_frac.
cpu_stat_snap()
{
	grep '^cpu[0-9]' /proc/stat >"$1"
}

# away_hi BOUND: the upper bound BOUND of a ratio of CPU samples to CPU time
# x frequency, raised for the time the CPUs spent away from their tasks
# during the last lp_record: BOUND / (1 - AWAY), AWAY capped at AWAY_MAX
# (0.15): the worst CPU's share is an upper limit of the target's, and
# uncapped, 40% stolen on one CPU turned a bound of 1.15 into 1.9.
AWAY_MAX=0.15
away_hi()
{
	calc "$1 / (1 - (${AWAY:-0} < $AWAY_MAX ? ${AWAY:-0} : $AWAY_MAX))"
}

# cpu_away_frac A B: the largest share, over the CPUs, of the time between
# snapshots A and B spent in hard and soft interrupts and stolen by the
# hypervisor (/proc/stat fields irq, softirq, steal). A cpu-clock sample
# fires on wall time and lands on the task that was current, while the
# task's own CPU time (getrusage, schedstat) leaves that time out: samples
# over CPU time x frequency can reach 1 / (1 - this share).
cpu_away_frac()
{
	awk 'NR == FNR { for (i = 2; i <= NF; i++) a[$1, i] = $i; next }
		{
			tot = 0
			for (i = 2; i <= 9 && i <= NF; i++) tot += $i - a[$1, i]
			away = ($7 - a[$1, 7]) + ($8 - a[$1, 8]) + ($9 - a[$1, 9])
			if (tot > 0 && away / tot > max) max = away / tot
		}
		END { printf "%.3f\n", max }' "$1" "$2"
}

# A terminal for a full-screen program (latprof top): a tmux server of this
# test alone (its own socket: two tests never share a name), killed at exit.
# tmux_start COLS ROWS CMD: run the shell command CMD in a new window of
# that size; the window stays after CMD ends, so its last screen can be read.
TMUX_SOCK=lp-$TEST_NAME-$$
tmux_start()
{
	require_cmd tmux tmux "the full-screen tests"
	at_exit tmux -L "$TMUX_SOCK" kill-server
	tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s t -x "$1" -y "$2" "$3; sleep 300" ||
		fail "cannot start tmux"
}

# tmux_screen: what the window shows now, one line a row.
tmux_screen()
{
	tmux -L "$TMUX_SOCK" capture-pane -p -t t
}

# tmux_keys KEY...: type KEYs into the window (tmux send-keys names: Enter, Escape, ...).
tmux_keys()
{
	tmux -L "$TMUX_SOCK" send-keys -t t "$@"
}

# tmux_wait PATTERN [TIMEOUT_S]: wait until the window shows a line
# matching the grep -E PATTERN; the screen is then in $WORKDIR/screen.
# A frame reaches tmux in several pieces, and a capture between two of them
# has the new title over the old rows and footer (seen: 6 captures in 600
# taken just after "1 Home Enter"): a screen counts once two captures 0.1 s
# apart are the same.
tmux_wait()
{
	local i
	rm -f "$WORKDIR/screen.last"
	for ((i = 0; i < ${2:-5} * 10; i++)); do
		tmux_screen >"$WORKDIR/screen" 2>/dev/null
		if grep -qE -- "$1" "$WORKDIR/screen"; then
			cmp -s "$WORKDIR/screen" "$WORKDIR/screen.last" && return 0
			cp "$WORKDIR/screen" "$WORKDIR/screen.last"
		fi
		sleep 0.1
	done
	return 1
}
