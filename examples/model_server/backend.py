# SPDX-License-Identifier: GPL-2.0-only
"""The slow dependency behind /predict_remote: an HTTP server on 127.0.0.1
that sleeps a known time (--delay-ms, default 30) before answering any GET.

A thread per connection (ThreadingHTTPServer), so concurrent callers each
wait the full delay instead of queueing behind one another: the servers in
front then spend a known ~30 ms per request blocked on a loopback socket.
Prints "backend pid=N port=N delay_ms=N" once listening, and on SIGTERM
"backend requests=N".

Usage: /usr/bin/python3 backend.py [--port 8001] [--delay-ms 30]
"""

import argparse
import os
import http.server
import signal
import sys
import threading
import time


def make_handler(delay_s, counter):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive when the caller wants it

        def do_GET(self):
            time.sleep(delay_s)
            with counter["lock"]:
                counter["n"] += 1
            body = b'{"backend":"ok","delay_ms":%d}' % int(delay_s * 1000)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            pass  # one line per request would dominate the profile

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--delay-ms", type=int, default=30)
    args = ap.parse_args()
    counter = {"n": 0, "lock": threading.Lock()}
    srv = http.server.ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(args.delay_ms / 1000, counter))
    srv.daemon_threads = True

    # serve_forever() must be stopped from another thread; SIGTERM does it.
    signal.signal(signal.SIGTERM,
                  lambda *_: threading.Thread(target=srv.shutdown).start())
    print(f"backend pid={os.getpid()} port={srv.server_address[1]} "
          f"delay_ms={args.delay_ms}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    print(f"backend requests={counter['n']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
