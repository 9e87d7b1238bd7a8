#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# serve counts its first processes' syscalls in blocks of a per-CPU array
# (no hash lookup a call) and hands a block back once its process is gone,
# zeroed, for the next (issue 30: serve on nginx). Here more processes than
# blocks run one after another, alternating two names; each makes a known
# number of getppid calls (sys_count: its own count is the ground truth).
# /metrics must hold each name's sum exactly: a block handed on unzeroed
# counts its last owner twice, one handed back before its last read loses
# calls. Every process must have had a block (the agent's debug log says
# which it handed back), so blocks were reused. With few blocks (many
# CPUs) a process waits for a block to come back before it starts. Run
# twice: the agent with its history (one session for the metrics and the
# windows, SESSION_KIND_RECORDER), and with --history 0 (counters only).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

require_root_bpf
require_fixture sys_count
require_cmd curl curl "GET /metrics"

# names of their own, so other tests' processes do not count
a=lpblka$$
b=lpblkb$$
a=${a:0:15}
b=${b:0:15}
cp "$FIXTURES/sys_count" "$WORKDIR/$a" && cp "$FIXTURES/sys_count" "$WORKDIR/$b" ||
	fail "cannot copy sys_count"
# run_blocks ARGS...: the whole check, serve started with ARGS
run_blocks()
{
	local port blocks n sum_a sum_b pids k i name calls released p got_a got_b
	port=$(free_port)
	start_serve "$WORKDIR/serve.log" "$port" -v -v --comm "$a" --comm "$b" "$@"
	blocks=$(sed -n 's/.*syscall stats: \([0-9]*\) blocks of the per-CPU array, handed back.*/\1/p' \
		"$WORKDIR/serve.log" | head -1)
	[ -n "$blocks" ] || { diag_file "serve log" "$WORKDIR/serve.log"; fail "serve logged no block count"; }
	[ "$blocks" -gt 0 ] || skip "no block of the per-CPU array fits this machine's CPUs"

	# handed_back PID: the agent has handed back the block of PID
	handed_back()
	{
		grep -q "syscall block [0-9]* of pid $1 handed back" "$WORKDIR/serve.log"
	}

	# blocks + 4 processes, 0.5 s apart; a block comes back 1-3 s after its
	# process exits (gone for a second, seen by once-a-second drains), so
	# process k, once every block has been taken, waits for the block of
	# process k - blocks (on 2 CPUs, 8 blocks, it finds it back already)
	n=$((blocks + 4))
	sum_a=0
	sum_b=0
	pids=()
	for ((k = 0; k < n; k++)); do
		name=$a
		((k % 2)) && name=$b
		if ((k >= blocks)); then
			for ((i = 0; i < 100; i++)); do
				handed_back "${pids[k - blocks]}" && break
				sleep 0.1
			done
			handed_back "${pids[k - blocks]}" || {
				diag_file "serve log" "$WORKDIR/serve.log"
				fail "the block of process $((k - blocks)) (pid ${pids[k - blocks]}) not handed back 10 s on"
			}
		fi
		"$WORKDIR/$name" $((2000 + k)) >"$WORKDIR/count.out" 2>&1 || fail "sys_count $k failed"
		calls=$(kv "$WORKDIR/count.out" sys_count getppid)
		pids+=("$(kv "$WORKDIR/count.out" sys_count pid)")
		[ "$calls" = $((2000 + k)) ] || fail "sys_count made $calls calls, asked $((2000 + k))"
		if ((k % 2)); then sum_b=$((sum_b + calls)); else sum_a=$((sum_a + calls)); fi
		sleep 0.5
	done

	# count NAME: getppid calls /metrics holds for NAME ("" when none)
	count()
	{
		awk -v sel="comm=\"$1\",syscall=\"getppid\"" '
			index($0, "latprof_syscall_duration_seconds_count{") == 1 && index($0, sel) { print $2 }' \
			"$WORKDIR/metrics.txt"
	}

	# every block handed back (its owner gone for a second), then read
	for ((i = 0; i < 60; i++)); do
		released=0
		for p in "${pids[@]}"; do
			handed_back "$p" && released=$((released + 1))
		done
		[ "$released" = "$n" ] && break
		sleep 0.5
	done
	curl -s --max-time 5 "http://127.0.0.1:$port/metrics" >"$WORKDIR/metrics.txt" || fail "GET /metrics failed"
	got_a=$(count "$a")
	got_b=$(count "$b")
	info "$n processes, $blocks blocks, $released handed back; getppid $a: $got_a of $sum_a, $b: $got_b of $sum_b"
	[ "$got_a" = "$sum_a" ] && [ "$got_b" = "$sum_b" ] || {
		diag_file "serve log" "$WORKDIR/serve.log"
		fail "/metrics counts getppid $got_a for $a and $got_b for $b, the processes made $sum_a and $sum_b"
	}
	[ "$released" = "$n" ] || {
		diag_file "serve log" "$WORKDIR/serve.log"
		fail "$released of the $n processes had a block handed back: blocks were not reused"
	}
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || fail "serve $* exited $? on SIGTERM"
	summary+=("serve${*:+ $*}: $n processes in $blocks blocks: getppid $got_a and $got_b, exact")
}

summary=()
run_blocks
run_blocks --history 0
pass "${summary[0]}; ${summary[1]}"
