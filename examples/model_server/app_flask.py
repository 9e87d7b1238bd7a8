# SPDX-License-Identifier: GPL-2.0-only
"""The same model server on Flask: a thread per connection, no event loop.

Two ways to run it, both with the endpoints of app.py (except
/predict_async, which only means something on an event loop):

  /usr/bin/python3 app_flask.py [--port 8000] [--backend-port 8001]
      Werkzeug's threaded dev server (threaded=True): a new thread per
      connection. Werkzeug 2.2 answers every response with "Connection:
      close", so each request comes on its own connection (no keep-alive).
  gunicorn --threads 4 -w 1 -b 127.0.0.1:8000 'app_flask:create_app()'
      gunicorn's gthread worker: a poll loop plus a pool of 4 threads;
      keep-alive connections (idle ones closed after --keep-alive, 2 s).

/predict_remote calls backend.py with http.client on the request's own
thread (a blocking connect/send/recv), unlike app.py's asyncio call.
Settings for the gunicorn form come from the environment: BACKEND_PORT,
DATA_DIR.
"""

import argparse
import http.client
import logging
import os
import sys

from flask import Flask, jsonify

import model as mdl


def create_app(backend_port=None, data_dir=None):
    backend_port = backend_port or int(os.environ.get("BACKEND_PORT", "8001"))
    data_dir = data_dir or os.environ.get("DATA_DIR", "/tmp/latprof_model_server")
    model, features, paths = mdl.prepare(data_dir)
    print(f"app_flask pid={os.getpid()} model={paths['model']} "
          f"model_bytes={paths['model_bytes']} features={paths['features']} "
          f"features_bytes={paths['features_bytes']}", flush=True)
    app = Flask(__name__)

    @app.get("/healthz")
    def healthz():
        return jsonify(status="ok")

    @app.get("/predict")
    def predict():
        return jsonify(mdl.predict(model, features))

    @app.get("/predict_file")
    def predict_file():
        return jsonify(mdl.predict_file(model, paths["features"]))

    @app.get("/predict_remote")
    def predict_remote():
        conn = http.client.HTTPConnection("127.0.0.1", backend_port, timeout=10)
        conn.request("GET", "/")
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        return jsonify(backend_status=resp.status, backend_bytes=len(body))

    return app


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--backend-port", type=int, default=8001)
    ap.add_argument("--data-dir", default="/tmp/latprof_model_server")
    args = ap.parse_args()
    app = create_app(args.backend_port, args.data_dir)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log
    app.run(host="127.0.0.1", port=args.port, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
