#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A readiness wait is on the path of work or idle by what the program is
# doing when it begins (bpf/waits.bpf.h, docs/syscalls.md "Idle waits"),
# not by the syscall's name: the same poll and epoll_wait are both.
#
#   - a synchronous client with a socket timeout (tests/fixtures/py_wait.py:
#     CPython polls before recv) waiting 100 ms per call for its backend:
#     the poll and recvfrom under call_backend_timeout are on the path
#     (>= 85% of the time the fixture measured around the call), none idle;
#   - an asyncio service (tests/fixtures/py_asyncio_waits.py) whose requests
#     await a backend, two open at a time, then none for 2 x 0.5 s: the
#     service's epoll_wait on the path >= 85% of the time it measured with
#     a request open less its own CPU time then (the time it waited: 1% of
#     it natively, a quarter under qemu's emulation), and no more than the
#     time with a request open (its idle waits stay out),
#     its epoll_wait decided idle >= 85% of the time it measured with none
#     open;
#   - a client that sent a call and execs before its reply: the new
#     image's epoll_wait (300 ms, no connection of its own) is idle, not
#     on the path of the old image's call;
#   - a thread reads a file, another closes it and puts a connection at
#     the same number (connect, or dup2): the first thread's call on it and
#     its poll for the reply are on the path (>= 85% of the poll time it
#     measured), not left to a note that the number is a file;
#   - with --syscalls read (poll left out) and --mode offcpu, the 300 ms a
#     program sleeps in poll is still off-CPU time;
#   - the recording says wait_rule=state; report and JSON agree.
#
# Ground truth: the fixtures' own monotonic clocks. ~15 s.
TEST_BUDGET_S=${TEST_BUDGET_S:-90}
. "$(dirname "$0")/lib.sh"
require_root_bpf
require_tools
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
PY=/usr/bin/python3

# sum_of FOLDED PID PATTERN: latency of the stacks of process PID (first
# frame COMM-PID) whose frames match the awk regex PATTERN
sum_of()
{
	awk -v pid="$2" -v pat="$3" '{
		n = split($0, f, ";"); first = f[1]
		if (first !~ ("-" pid "$") || $0 !~ pat)
			next
		s += $NF
	} END { printf "%.0f", s }' "$1"
}

# the synchronous client
record_or_fail sync -- $PY "$FIX/py_wait.py" 5 0.1
truth=$(kv "$WORKDIR/sync.out" "" call_timeout_ns)
[ -n "$truth" ] || { diag_file "stdout" "$WORKDIR/sync.out"; fail "py_wait.py printed no call_timeout_ns"; }
for w in path idle readiness; do
	export_or_fail "$WORKDIR/sync.pb.gz" "$WORKDIR/sync.$w.folded" --format folded \
		--weight latency:$w
done
pat='call_backend_timeout \(py_wait\.py\);.*syscall:(poll|recvfrom) [0-9]+$'
sum_all()
{
	awk -v pat="$2" '$0 ~ pat { s += $NF } END { printf "%.0f", s }' "$1"
}
path=$(sum_all "$WORKDIR/sync.path.folded" "$pat")
idle=$(sum_all "$WORKDIR/sync.idle.folded" "$pat")
ready=$(sum_all "$WORKDIR/sync.readiness.folded" "$pat")
info "sync client: call_backend_timeout path $path ns, idle $idle, readiness $ready; it measured $truth ns"
sync_ratio=$(ratio "$path" "$truth")
if [ "$(calc "($path >= 0.85 * $truth)")" != 1.000 ] || [ "$idle" != 0 ]; then
	for w in path idle readiness; do
		grep -h "call_backend_timeout" "$WORKDIR/sync.$w.folded" | sed "s/^/  $w | /" >&2
	done
	fail "sync client: its waits for the backend are not on the path"
fi

# the asyncio service
record_or_fail aio -- $PY "$FIX/py_asyncio_waits.py" 4 0.2 0.5
line=$(grep -m1 '^service=' "$WORKDIR/aio.out")
[ -n "$line" ] || { diag_file "stdout" "$WORKDIR/aio.out"; fail "py_asyncio_waits.py printed nothing"; }
svc=$(kv "$WORKDIR/aio.out" "" service)
busy=$(kv "$WORKDIR/aio.out" "" busy_ns)
busy_cpu=$(kv "$WORKDIR/aio.out" "" busy_cpu_ns)
quiet=$(kv "$WORKDIR/aio.out" "" idle_ns)
for w in path idle readiness; do
	export_or_fail "$WORKDIR/aio.pb.gz" "$WORKDIR/aio.$w.folded" --format folded --per-pid \
		--weight latency:$w
done
epoll='syscall:epoll_wait [0-9]+$'
path=$(sum_of "$WORKDIR/aio.path.folded" "$svc" "$epoll")
idle=$(sum_of "$WORKDIR/aio.idle.folded" "$svc" "$epoll")
ready=$(sum_of "$WORKDIR/aio.readiness.folded" "$svc" "$epoll")
info "asyncio service $svc: epoll_wait path $path ns (it measured $busy with a request open," \
	"$busy_cpu of it on CPU)," \
	"idle $idle (it measured $quiet with none), readiness $ready"
ok=$(calc "($path >= 0.85 * ($busy - $busy_cpu) && $path <= 1.02 * $busy + 10000000 && $idle >= 0.85 * $quiet)")
if [ "$ok" != 1.000 ]; then
	for w in path idle readiness; do
		grep -h -- "-$svc;" "$WORKDIR/aio.$w.folded" | grep epoll_wait |
			sed "s/^/  $w | /" | cut -c1-200 >&2
	done
	fail "asyncio service: its loop's waits are not split by requests open"
fi

# an exec starts the counts over: the call the old image sent is not the
# new image's (its socket is closed at exec, unseen; before, a file the new
# image read at the same descriptor "answered" it)
cat >"$WORKDIR/exec_wait.py" <<'PYEOF'
import os, select, socket, sys
if sys.argv[1] == "call":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname())
    # a call, never answered, on a descriptor the new image will not reuse
    os.dup2(c.fileno(), 200, inheritable=False)
    os.write(200, b"q")
    os.execv(sys.executable, [sys.executable, sys.argv[0], "wait"])
select.epoll().poll(0.3)
PYEOF
record_or_fail exec -- $PY "$WORKDIR/exec_wait.py" call
for w in path idle; do
	export_or_fail "$WORKDIR/exec.pb.gz" "$WORKDIR/exec.$w.folded" --format folded --weight latency:$w
done
xpath=$(sum_all "$WORKDIR/exec.path.folded" "$epoll")
xidle=$(sum_all "$WORKDIR/exec.idle.folded" "$epoll")
info "after an exec: epoll_wait path $xpath ns, idle $xidle ns (it waited 300 ms)"
[ "$xpath" = 0 ] && [ "$(calc "($xidle >= 0.28e9)")" = 1.000 ] ||
	fail "the new image's wait is not idle after the old image's call"

# a descriptor a thread read as a file, closed by another thread and made a
# connection at the same number: the reading thread's note that it is no
# conversation ends with the close, so its write is a call and its poll for
# the reply is on the path, not an undecided wait on a client connection.
# Half the rounds connect at the number; the others connect first, at
# another number, and dup2 the connection onto it, where only the close
# says the number changed
cat >"$WORKDIR/fd_reuse.py" <<'PYEOF'
import os, select, socket, sys, threading, time
rounds, delay = int(sys.argv[1]), float(sys.argv[2])
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(8)
addr = lsock.getsockname()
child = os.fork()
if child == 0:
    while True:     # the backend: answers each call after the delay
        c, _ = lsock.accept()
        while c.recv(64):
            time.sleep(delay)
            c.sendall(b"ok")
        c.close()
lsock.close()
total = 0
for r in range(rounds):
    early = socket.create_connection(addr) if r % 2 else None
    fd = os.open("/dev/zero", os.O_RDONLY)
    for _ in range(50):
        os.read(fd, 1)
    box = {}
    def reopen():
        os.close(fd)
        if early:
            os.dup2(early.fileno(), fd)
        else:
            box["s"] = socket.create_connection(addr)
            if box["s"].fileno() != fd:
                sys.exit("the connection did not get the file's number")
    t = threading.Thread(target=reopen)
    t.start()
    t.join()
    os.write(fd, b"call")
    t0 = time.monotonic_ns()
    p = select.poll()
    p.register(fd, select.POLLIN)
    p.poll()
    total += time.monotonic_ns() - t0
    os.read(fd, 64)
    os.close(fd)
    if early:
        early.close()
    else:
        box["s"].detach()
os.kill(child, 9)
os.waitpid(child, 0)
print(f"fd_reuse poll_ns={total}")
PYEOF
record_or_fail reuse -- $PY "$WORKDIR/fd_reuse.py" 6 0.1
rtruth=$(kv "$WORKDIR/reuse.out" "" poll_ns)
[ -n "$rtruth" ] || { diag_file "stdout" "$WORKDIR/reuse.out"; fail "fd_reuse.py printed no poll_ns"; }
for w in path readiness; do
	export_or_fail "$WORKDIR/reuse.pb.gz" "$WORKDIR/reuse.$w.folded" --format folded \
		--weight latency:$w
done
rpath=$(sum_all "$WORKDIR/reuse.path.folded" 'syscall:poll [0-9]+$')
rready=$(sum_all "$WORKDIR/reuse.readiness.folded" 'syscall:poll [0-9]+$')
info "a file's number reused by a connection: poll path $rpath ns, readiness $rready ns" \
	"(it measured $rtruth ns)"
[ "$(calc "($rpath >= 0.85 * $rtruth)")" = 1.000 ] ||
	fail "a call on a descriptor that was a file is not seen: its reply's wait is not on the path"

# a poll --syscalls leaves out keeps its off-CPU time
record_or_fail offcpu --mode syscall,offcpu --syscalls read -- $PY -c 'import select; select.poll().poll(300)'
export_or_fail "$WORKDIR/offcpu.pb.gz" "$WORKDIR/offcpu.json" --format json --weight offcpu
off=$(json_py "$WORKDIR/offcpu.json" 'print(j["total"])')
info "poll left out by --syscalls read: $off ns off CPU (it slept 300 ms)"
[ "$(calc "($off >= 0.28e9)")" = 1.000 ] || fail "the off-CPU time of a poll left out by --syscalls is lost"

# the rule is named; the report lists the undecided and idle waits apart
meta=$(profile_meta "$WORKDIR/aio.pb.gz" | awk -F= '$1 == "wait_rule" { print $2 }')
[ "$meta" = state ] || fail "the recording's wait_rule is '$meta', not state"
lp_report "$WORKDIR/aio.pb.gz" "$WORKDIR/aio.report" || fail "report failed"
grep -q "idle waits, apart" "$WORKDIR/aio.report" ||
	{ diag_file report "$WORKDIR/aio.report" 60; fail "the report lists no idle waits apart"; }
grep -q "none on the path of work" "$WORKDIR/aio.report" &&
	fail "the report says no wait was on the path of work"
pass "sync client: $sync_ratio of its calls' time on the path; asyncio loop: path" \
	"$(ratio "$path" "$((busy - busy_cpu))") of its waits with a request open, idle" \
	"$(ratio "$idle" "$quiet") of its quiet time"
