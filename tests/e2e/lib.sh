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

# lp_record STDOUT STDERR ARGS...: run `latprof record ARGS` under a timeout,
# stdout and stderr to files; returns latprof's exit status (124 on timeout).
lp_record()
{
	local out=$1 err=$2
	shift 2
	timeout -k 5 30 "$LATPROF" record "$@" >"$out" 2>"$err"
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

# folded_sum FILE [COMM [FRAME]]: total COUNT of the stacks whose first frame
# is COMM (any when empty) and that contain FRAME as a whole frame anywhere
# (any when empty). A "comm-PID" first frame (--per-pid) matches COMM too.
folded_sum()
{
	awk -v comm="${2:-}" -v frame="${3:-}" '
		{
			i = length($0)
			while (i > 0 && substr($0, i, 1) != " ")
				i--
			cnt = substr($0, i + 1) + 0
			n = split(substr($0, 1, i - 1), f, ";")
			if (comm != "" && f[1] != comm &&
			    !(index(f[1], comm "-") == 1 &&
			      substr(f[1], length(comm) + 2) ~ /^[0-9]+$/))
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
	awk -v comm="$2" -v seq="$3" '
		{
			i = length($0)
			while (i > 0 && substr($0, i, 1) != " ")
				i--
			stack = substr($0, 1, i - 1)
			split(stack, f, ";")
			if (f[1] != comm && !(index(f[1], comm "-") == 1 &&
					      substr(f[1], length(comm) + 2) ~ /^[0-9]+$/))
				next
			if (index(";" stack ";", ";" seq ";"))
				sum += substr($0, i + 1)
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
# shell does not make it ignore SIGINT), send SIG after AFTER_S seconds and
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
