# SPDX-License-Identifier: GPL-2.0-only
"""Bounded HTTP load: exactly --requests GETs of --path, over --concurrency
keep-alive connections (one thread and one http.client connection each),
stdlib only, so it runs under /usr/bin/python3 anywhere.

A fixed count rather than a duration, so a test knows how many requests the
server must have seen. Prints one summary line:

  load path=P requests=N errors=N concurrency=N connections=N wall_s=F
       rps=F mean_ms=F p50_ms=F p95_ms=F p99_ms=F max_ms=F

With --out FILE, one line per request, in completion order:
"start_ns latency_ns status local_port", start_ns on CLOCK_MONOTONIC (the
clock BPF's ktime uses) and local_port naming the client's connection, so a
test can match each request to the server-side connection that served it.
connections counts the TCP connections opened: --concurrency with
keep-alive, one per request against a server that closes (Werkzeug). A
failed request has status 0; the next one goes out on a new connection.

Usage: /usr/bin/python3 load.py [--host 127.0.0.1] [--port 8000]
           [--path /predict] [--requests 300] [--concurrency 4] [--out FILE]
"""

import argparse
import http.client
import itertools
import sys
import threading
import time


def worker(args, next_index, results, lock):
    conn = http.client.HTTPConnection(args.host, args.port, timeout=args.timeout)
    mine, opened = [], 0
    while next(next_index) < args.requests:
        t0, port = time.monotonic_ns(), 0
        try:
            # http.client drops the socket when the server says "Connection:
            # close" (Werkzeug's dev server always does): open a new one,
            # its connect counted in this request's latency.
            if conn.sock is None:
                conn.connect()
                opened += 1
            port = conn.sock.getsockname()[1]
            conn.request("GET", args.path)
            resp = conn.getresponse()
            resp.read()
            status = resp.status
        except (OSError, http.client.HTTPException):
            conn.close()  # the next request gets a new connection
            status = 0
        mine.append((t0, time.monotonic_ns() - t0, status, port))
    conn.close()
    with lock:
        results["rows"].extend(mine)
        results["connections"] += opened


def percentile(sorted_ns, pct):
    """Nearest-rank percentile, in ms."""
    k = max(0, -(-len(sorted_ns) * pct // 100) - 1)
    return sorted_ns[int(k)] / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--path", default="/predict")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--out")
    args = ap.parse_args()

    # itertools.count's next() is atomic under the GIL: each index is
    # handed out once, so exactly --requests requests are sent.
    next_index, lock = itertools.count(), threading.Lock()
    results = {"rows": [], "connections": 0}
    threads = [threading.Thread(target=worker, args=(args, next_index, results, lock))
               for _ in range(args.concurrency)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall_s = time.monotonic() - t0

    rows = results["rows"]
    ok = sorted(r[1] for r in rows if r[2] == 200)
    errors = len(rows) - len(ok)
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(f"{r[0]} {r[1]} {r[2]} {r[3]}\n" for r in rows)
    if not ok:
        print(f"load path={args.path} requests={len(rows)} errors={errors}: "
              "no successful request", file=sys.stderr)
        return 1
    print(f"load path={args.path} requests={len(rows)} errors={errors} "
          f"concurrency={args.concurrency} connections={results['connections']} "
          f"wall_s={wall_s:.3f} rps={len(rows) / wall_s:.1f} mean_ms={sum(ok) / len(ok) / 1e6:.2f} "
          f"p50_ms={percentile(ok, 50):.2f} p95_ms={percentile(ok, 95):.2f} "
          f"p99_ms={percentile(ok, 99):.2f} max_ms={ok[-1] / 1e6:.2f}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
