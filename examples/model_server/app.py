# SPDX-License-Identifier: GPL-2.0-only
"""FastAPI model server under uvicorn (asyncio loop, h11 parser: Debian ships
neither uvloop nor httptools).

At start-up it trains the digits RandomForest, saves it with joblib and loads
it back (model.py), then serves:

  /predict         CPU: predicts all 1797 digits PREDICT_ROUNDS times (~20 ms).
                   A plain `def`, so FastAPI runs it on its worker-thread pool,
                   not on the event-loop thread that reads and writes the socket.
  /predict_async   the same work as an `async def`: the CPU runs on the loop
                   thread and blocks every other connection meanwhile.
  /predict_file    reads the feature file from disk (np.load), predicts once.
  /predict_remote  awaits the slow backend (backend.py, ~30 ms) over a new
                   loopback connection, on the loop thread, then answers.
  /healthz         "ok", no work.

Prints "app pid=N port=N model=PATH model_bytes=N features=PATH
features_bytes=N" once the model is loaded, before it listens.

Usage: /usr/bin/python3 app.py [--port 8000] [--backend-port 8001]
                               [--data-dir /tmp/latprof_model_server]
"""

import argparse
import asyncio
import os
import sys

import uvicorn
from fastapi import FastAPI

import model as mdl


def build_app(model, features, feat_path, backend_port):
    app = FastAPI()

    @app.get("/healthz")
    async def healthz():
        return {"status": "ok"}

    @app.get("/predict")
    def predict():
        return mdl.predict(model, features)

    @app.get("/predict_async")
    async def predict_async():
        return mdl.predict(model, features)

    @app.get("/predict_file")
    def predict_file():
        return mdl.predict_file(model, feat_path)

    @app.get("/predict_remote")
    async def predict_remote():
        # One HTTP/1.0 exchange per request: connect, send, read to EOF.
        reader, writer = await asyncio.open_connection("127.0.0.1", backend_port)
        writer.write(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        reply = await reader.read()
        writer.close()
        await writer.wait_closed()
        status = reply.split(b" ", 2)[1].decode() if reply else "none"
        return {"backend_status": status, "backend_bytes": len(reply)}

    return app


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--backend-port", type=int, default=8001)
    ap.add_argument("--data-dir", default="/tmp/latprof_model_server")
    args = ap.parse_args()
    model, features, paths = mdl.prepare(args.data_dir)
    print(f"app pid={os.getpid()} port={args.port} model={paths['model']} "
          f"model_bytes={paths['model_bytes']} features={paths['features']} "
          f"features_bytes={paths['features_bytes']}", flush=True)
    app = build_app(model, features, paths["features"], args.backend_port)
    # No access log: a line per request would add its own writes to stdout.
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning",
                access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
