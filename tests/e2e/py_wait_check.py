# SPDX-License-Identifier: GPL-2.0-only
"""Checks of a recording of tests/fixtures/py_wait.py (a Python program that
only waits) over latprof's latency-weighted folded stacks, against the wall
times the fixture measured itself. Prints one line per measure and exits 1
with the reason on the first failure.

usage: py_wait_check.py LAT.folded FIXTURE.out
"""
import re
import sys

CHAIN = ["<module> (py_wait.py)", "main (py_wait.py)", "timed (py_wait.py)"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def python_frames(frames):
    return [f for f in frames if re.search(r" \([^()]*\)$", f)]


def main(lat_path, out_path):
    truth = {k: int(v) for k, v in re.findall(r"(\w+)_ns=(\d+)", open(out_path).read())}
    if set(truth) != {"nap", "call", "call_timeout"}:
        fail("the fixture printed no times: %r" % truth)
    stacks = []
    for line in open(lat_path):
        stack, _, ns = line.rstrip("\n").rpartition(" ")
        stacks.append((stack.split(";"), int(ns)))
    # the exec's own stack lies in the image exec'd into, which may exec
    # again within a millisecond (chroot into python3.15): a latprof slowed
    # down (ASan, load) reads that image's maps too late, and leaves its
    # frame [unknown] rather than name it from the next program's files
    unknown = [s for s, _ in stacks if "[unknown]" in s and s[-1] != "syscall:execve"]
    print("%d latency stacks, %d with an [unknown] frame" % (len(stacks), len(unknown)))
    if unknown:
        fail("unnamed Python frames in: " + ";".join(unknown[0]))
    # each function's waits: its own frame innermost among the Python ones,
    # called from <module>;main;timed, ending in the syscalls it makes
    # time.sleep is clock_nanosleep from 3.11, select before
    sleeps = ["syscall:clock_nanosleep", "syscall:pselect6", "syscall:select"]
    for func, leaves in (("nap", sleeps),
                         ("call_backend", ["syscall:recvfrom"]),
                         ("call_backend_timeout", ["syscall:poll", "syscall:recvfrom"])):
        key = {"nap": "nap", "call_backend": "call",
               "call_backend_timeout": "call_timeout"}[func]
        want = CHAIN + ["%s (py_wait.py)" % func]
        got = sum(ns for frames, ns in stacks
                  if python_frames(frames)[-4:] == want and frames[-1] in leaves)
        share = got / truth[key]
        print("%s: %d ns of %s under %s, the fixture measured %d ns (%.3f)" %
              (func, got, "/".join(leaves), ";".join(want), truth[key], share))
        if not 0.95 <= share <= 1.05:
            fail("%s: %.3f of its measured wait under its Python chain (want 0.95-1.05)" %
                 (func, share))
    # the backend process (a fork of the same script): its threads' waits
    served = sum(ns for frames, ns in stacks
                 if "serve (py_wait.py)" in frames and frames[-1] in sleeps)
    print("backend: %d ns of sleeps under serve (py_wait.py)" % served)
    if served < 0.95 * (truth["call"] + truth["call_timeout"]) * 0.9:
        fail("the backend's sleeps are not under serve (py_wait.py)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
