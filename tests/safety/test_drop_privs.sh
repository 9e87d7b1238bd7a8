#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The verbs that only read profiles drop every capability before reading
# (src/privs.h). Each one is given a FIFO as its input, so it blocks in open()
# with its start-up done; its capability sets are read from /proc/PID/status
# from outside, then a real profile is written into the FIFO and the verb
# must still work (uid 0 reads root's files). `record` keeps its capabilities.
# Needs root (exit 77 otherwise). Environment as for tests/e2e (tests/run.sh).
set -u
LATPROF=${LATPROF:-$PWD/latprof}
FIXTURES=${FIXTURES:-$PWD/build/fixtures}
WORKDIR=${WORKDIR:-$(mktemp -d /tmp/latprof-privs.XXXXXX)}
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root"; exit 77; }
cd "$WORKDIR" || exit 1
fail=0

# caps_of PID: "CapPrm CapEff CapBnd CapAmb NoNewPrivs" of a process
caps_of()
{
	awk '/^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):/ { printf "%s%s", sep, $2; sep = " " }
		END { print "" }' "/proc/$1/status"
}

# wait_blocked PID: until PID sleeps with its start-up done, i.e. in open() of
# the FIFO (5 s at most)
wait_blocked()
{
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "^NoNewPrivs:[[:space:]]*1" "/proc/$1/status" 2>/dev/null &&
			grep -q "^State:[[:space:]]*S" "/proc/$1/status" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

timeout 30 "$LATPROF" record -F 99 -d 1 -o real.pb.gz -- "$FIXTURES/spin" >record.log 2>&1 ||
	{ echo "FAIL: record"; cat record.log; exit 1; }

# check_verb NAME ARGS...: ARGS name in.pb.gz (the FIFO) once
check_verb()
{
	local name=$1 pid caps
	shift
	rm -f in.pb.gz && mkfifo in.pb.gz
	"$LATPROF" "$@" >"$name.out" 2>&1 &
	pid=$!
	if ! wait_blocked "$pid"; then
		echo "FAIL: $name did not block on its input"; fail=1
	fi
	caps=$(caps_of "$pid")
	timeout 10 sh -c 'cat real.pb.gz > in.pb.gz'
	if ! wait "$pid"; then
		echo "FAIL: $name failed after dropping capabilities:"; cat "$name.out"; fail=1
	fi
	if [ "$caps" != "0000000000000000 0000000000000000 0000000000000000 0000000000000000 1" ]; then
		echo "FAIL: $name kept capabilities: CapPrm CapEff CapBnd CapAmb NoNewPrivs = $caps"
		fail=1
	else
		echo "ok: $name: no capability left, no_new_privs"
	fi
}

check_verb report report in.pb.gz
check_verb export export in.pb.gz --format folded -o out.folded
check_verb flamegraph flamegraph in.pb.gz -o out.svg
check_verb timeline timeline in.pb.gz -o timeline.svg
# diff reads its inputs more than once: the same drop (main.c), checked working
timeout 30 "$LATPROF" diff real.pb.gz real.pb.gz -o diff.svg >diff.out 2>&1 ||
	{ echo "FAIL: diff:"; cat diff.out; fail=1; }

# record keeps what it needs to load BPF
"$LATPROF" record -F 99 -d 2 -o rec.pb.gz -- "$FIXTURES/spin" >rec.log 2>&1 &
pid=$!
sleep 0.5
caps=$(caps_of "$pid")
wait "$pid" || { echo "FAIL: record:"; cat rec.log; fail=1; }
case $caps in
"0000000000000000 0000000000000000 "*) echo "FAIL: record has no capability: $caps"; fail=1 ;;
*) echo "ok: record keeps its capabilities" ;;
esac
exit $fail
