# SPDX-License-Identifier: GPL-2.0-only
"""Checks of the Python frame tests over latprof's folded output, against the
truth that tests/fixtures/py_names.py printed (its own thread CPU times, its
read times and its source line ranges). Prints one line per measure and exits
1 with the reason on the first failure.

usage: py_frames_check.py mix CPU.folded LAT.folded LINES.folded FIXTURE.out
       py_frames_check.py threads CPU.folded
"""
import re
import sys

PY = re.compile(r"^(.*) \(([^()]*?)(?::(\d+))?\)$")


def load(path):
    out = []
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        out.append((stack.split(";"), int(count)))
    return out


def py_name(frame):
    """(function, file, line) of a Python frame, or None."""
    m = PY.match(frame)
    return (m.group(1), m.group(2), int(m.group(3) or 0)) if m else None


def leaf_python(frames):
    for f in reversed(frames):
        p = py_name(f)
        if p:
            return p
    return None


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_mix(cpu_path, lat_path, lines_path, out_path):
    truth = dict(re.findall(r"(\w+)=(\S+)", open(out_path).read()))
    a_ns, b_ns = int(truth["burn_a_ns"]), int(truth["burn_b_ns"])
    cpu = [(f, c) for f, c in load(cpu_path) if f[0] == "pymain"]
    total = sum(c for _, c in cpu)
    if total < 100:
        fail("only %d CPU samples of the main thread (pymain)" % total)
    # run_main's own loop calls thread_ns (clock_gettime) between the burns
    named = {"burn_a": 0, "burn_b": 0, "run_main": 0, "thread_ns": 0}
    chain = 0
    for frames, c in cpu:
        leaf = leaf_python(frames)
        if leaf and leaf[1] == "py_names.py" and leaf[0] in named:
            named[leaf[0]] += c
        names = [p[0] for p in map(py_name, frames) if p]
        if names[:4] == ["<module>", "main", "mix", "run_main"]:
            chain += c
    right = sum(named.values())
    print("main thread: %d samples, %d (%.3f) end in burn_a/burn_b/run_main/thread_ns, "
          "%d (%.3f) under <module>;main;mix;run_main" %
          (total, right, right / total, chain, chain / total))
    if right < 0.95 * total:
        fail("%.3f of the main thread's samples end in the right Python function "
             "(want >= 0.95)" % (right / total))
    if chain < 0.95 * total:
        fail("%.3f of the samples have the whole Python chain (want >= 0.95)" %
             (chain / total))
    n_ab = max(1, named["burn_a"] + named["burn_b"])
    share = named["burn_a"] / n_ab
    want = a_ns / (a_ns + b_ns)
    # a sampled share spreads binomially: 3 sigma at N samples, plus 2
    # points (a call's edges); a busy machine leaves fewer samples (200
    # instead of 900: 0.12 instead of 0.065)
    tol = 3 * (want * (1 - want) / n_ab) ** 0.5 + 0.02
    print("burn_a share %.3f, truth (thread CPU time) %.3f, allowed +-%.3f at %d samples" %
          (share, want, tol, n_ab))
    if abs(share - want) > tol:
        fail("burn_a share %.3f, truth %.3f: more than %.3f apart" % (share, want, tol))

    lat = [(f, c) for f, c in load(lat_path) if f[0] == "pyreader" and f[-1] == "syscall:read"]
    read_total = sum(c for _, c in lat)
    under = sum(c for f, c in lat if any(
        (py_name(x) or ("",))[0] == "wait_on_pipe" for x in f))
    print("syscall:read latency of pyreader %.3f s, %.3f under wait_on_pipe; "
          "the script timed %.3f s in os.read" %
          (read_total / 1e9, under / max(1, read_total), int(truth["read_ns"]) / 1e9))
    if read_total < 0.5 * int(truth["read_ns"]):
        fail("syscall:read latency %d ns, the script spent %s ns in os.read" %
             (read_total, truth["read_ns"]))
    if under < 0.95 * read_total:
        fail("%.3f of the read latency is under wait_on_pipe (want >= 0.95)" %
             (under / read_total))

    ranges = {k: tuple(map(int, v.split("-"))) for k, v in
              re.findall(r"(burn_a|burn_b|wait_on_pipe)=(\d+-\d+)", open(out_path).read())}
    in_range = out_range = 0
    for frames, c in load(lines_path):
        for f in frames:
            p = py_name(f)
            if p and p[0] == "burn_a" and p[1] == "py_names.py":
                lo, hi = ranges["burn_a"]
                if lo < p[2] <= hi:
                    in_range += c
                else:
                    out_range += c
    print("burn_a frames by line: %d in its body (lines %d-%d), %d elsewhere" %
          (in_range, ranges["burn_a"][0] + 1, ranges["burn_a"][1], out_range))
    if in_range < 0.95 * (in_range + out_range) or not in_range:
        fail("burn_a's lines are not the script's")


def check_threads(cpu_path):
    per = {}
    for frames, c in load(cpu_path):
        if not re.match(r"^pyw\d$", frames[0]):
            continue
        names = {p[0] for p in map(py_name, frames) if p}
        d = per.setdefault(frames[0], {"own": 0, "other": 0, "all": 0})
        d["all"] += c
        own = "worker_" + frames[0][3]
        if own in names:
            d["own"] += c
        if any(n.startswith("worker_") and n != own for n in names):
            d["other"] += c
    if len(per) != 4:
        fail("samples of %d worker threads, want 4: %s" % (len(per), sorted(per)))
    for t, d in sorted(per.items()):
        print("%s: %d samples, %d in its own worker, %d in another's" %
              (t, d["all"], d["own"], d["other"]))
        if d["all"] < 20 or d["own"] < 0.95 * d["all"] or d["other"]:
            fail("thread %s: its samples do not name its own function" % t)


if __name__ == "__main__":
    if sys.argv[1] == "mix":
        check_mix(*sys.argv[2:6])
    else:
        check_threads(sys.argv[2])
    print("ok")
