# SPDX-License-Identifier: GPL-2.0-only
"""A model-loading workload with ground truth, for
"latprof record -- /usr/bin/python3 load_model.py": file I/O and RSS growing
while a ~22 MB model is read, then a CPU-bound inference phase whose RSS
keeps rising at a known rate.

Phases, each printed with CLOCK_MONOTONIC timestamps (the clock of BPF's
ktime) and VmRSS from /proc/self/status before and after:

  train  only if --model does not exist: fits a --trees RandomForest on the
         digits and saves it with joblib (400 trees: 22,263,577 bytes with
         Debian's sklearn 1.2.1, the same bytes every run; random_state=0)
  load   joblib.load(--model): reads the whole file through one descriptor
         (about 1,600 read() calls of varying size, the file's bytes in all)
  infer  predicts the 1797 digits in a loop for --seconds (default 3), and
         keeps --grow-mb (default 64) MB of touched memory, added in equal
         steps, so RSS climbs roughly linearly through the phase

Output (the train line only when it trained):

  load_model phase=train start_ns=N end_ns=N rss_kb_before=N rss_kb_after=N cpu_ns=N
  load_model pid=N model=PATH model_bytes=N
  load_model phase=load start_ns=N end_ns=N rss_kb_before=N rss_kb_after=N cpu_ns=N
  load_model phase=infer start_ns=N end_ns=N rss_kb_before=N rss_kb_after=N cpu_ns=N
             predictions=N grown_bytes=N

Usage: /usr/bin/python3 load_model.py [--model PATH] [--trees 400]
                                      [--seconds 3] [--grow-mb 64]
"""

import argparse
import os
import sys
import time

import joblib
from sklearn.datasets import load_digits

import model as mdl


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def phase(name, fn, extra=None):
    """Run fn(), print the phase line (plus extra(result)); returns fn's result."""
    rss0, c0, t0 = rss_kb(), time.process_time_ns(), time.monotonic_ns()
    result = fn()
    t1, c1, rss1 = time.monotonic_ns(), time.process_time_ns(), rss_kb()
    more = extra(result) if extra else ""
    print(f"load_model phase={name} start_ns={t0} end_ns={t1} rss_kb_before={rss0} "
          f"rss_kb_after={rss1} cpu_ns={c1 - c0}{more}", flush=True)
    return result


def infer(model, features, seconds, grow_bytes):
    """Predict until `seconds` pass, growing a kept list of buffers as we go."""
    kept, grown, n = [], 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        model.predict(features)
        n += 1
        # Grow in proportion to elapsed time, so the RSS ramp is linear.
        due = int(grow_bytes * min(1.0, 1 - (end - time.monotonic()) / seconds))
        if due > grown:
            # bytearray * n writes every byte, so the pages count in RSS
            # (a bare bytearray(n) could stay as untouched zero pages).
            kept.append(bytearray(b"\1") * (due - grown))
            grown = due
    return n, grown, kept


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="/tmp/latprof_model_server/digits_rf_big.joblib")
    ap.add_argument("--trees", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--grow-mb", type=int, default=64)
    args = ap.parse_args()

    if not os.path.exists(args.model):
        os.makedirs(os.path.dirname(args.model) or ".", exist_ok=True)
        phase("train", lambda: mdl.save_atomic(
            args.model, lambda f: joblib.dump(mdl.train(args.trees), f)))
    print(f"load_model pid={os.getpid()} model={args.model} "
          f"model_bytes={os.path.getsize(args.model)}", flush=True)
    model = phase("load", lambda: joblib.load(args.model))
    features, _ = load_digits(return_X_y=True)
    phase("infer", lambda: infer(model, features, args.seconds, args.grow_mb << 20),
          lambda r: f" predictions={r[0]} grown_bytes={r[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
