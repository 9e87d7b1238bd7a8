#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Regression: a CPU sample taken while a tracepoint program copies a slow
# syscall's stack must not clobber that copy. Both used to share one scratch
# record per CPU, and the timer-driven sampler could land inside sys_exit's
# copy: 1 run in 3 at -F 4999 lost one of the child's 20 sleeps without any
# loss counter going up.
#
# Ground truth (from the fixture): sys_pipe's forked child sleeps 50 ms 20
# times in writer_loop (20 clock_nanosleep calls, each >= 1 ms), the parent
# reads 20 times in wait_on_pipe. Three recordings at -F 4999 (the sampler
# fires every 200 us per CPU): each must show exactly 20 slow
# clock_nanosleep below writer_loop and 20 slow reads below wait_on_pipe.
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_fixture sys_pipe

for run in 1 2 3; do
	record_or_fail race$run -F 4999 -- "$FIXTURES/sys_pipe" 20 50
	counts=$WORKDIR/race$run.folded
	export_or_fail "$WORKDIR/race$run.pb.gz" "$counts" --format folded --weight syscalls
	n_sleep=$(folded_sum_leaf "$counts" sys_pipe "main;writer_loop" syscall:clock_nanosleep)
	n_read=$(folded_sum_leaf "$counts" sys_pipe "main;reader_loop;wait_on_pipe" syscall:read)
	info "run $run: $n_sleep slow clock_nanosleep, $n_read slow reads (truth 20, 20)"
	if [ "$n_sleep" != 20 ] || [ "$n_read" != 20 ]; then
		folded_top "$counts" sys_pipe 10
		fail "run $run at -F 4999: $n_sleep sleeps and $n_read reads with stacks, expected 20 and 20"
	fi
done
pass "3 runs at -F 4999: every slow syscall kept its stack"
