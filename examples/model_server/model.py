# SPDX-License-Identifier: GPL-2.0-only
"""The model both servers serve: a scikit-learn RandomForest trained on the
digits dataset that sklearn ships (1797 8x8 images, no download).

prepare() trains it, saves it with joblib and loads it back from the file, so
start-up does real file I/O (a ~2.7 MB model file). It also writes the
feature file that /predict_file reads on every request. Nothing here prints;
the servers say what they did.
"""

import os
import time

import joblib
import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

# 50 trees: one predict over the 1797 digits costs ~11 ms of CPU on the
# development VM, so PREDICT_ROUNDS=2 puts /predict at ~20 ms.
N_TREES = 50
PREDICT_ROUNDS = int(os.environ.get("PREDICT_ROUNDS", "2"))


def train(n_trees=N_TREES):
    """A fitted RandomForestClassifier; deterministic (random_state=0)."""
    x, y = load_digits(return_X_y=True)
    # n_jobs=1: inference stays on the calling thread, so the request
    # tracker sees the CPU on the thread that handles the request.
    model = RandomForestClassifier(n_estimators=n_trees, random_state=0, n_jobs=1)
    model.fit(x, y)
    return model


def save_atomic(path, write):
    """write(file object), then rename over path: a server starting at the
    same time never loads a half-written file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, path)


def prepare(data_dir):
    """Train, save and reload the model; write the feature file.

    Returns (model, features, paths), paths a dict with "model" and
    "features" file names and their sizes in bytes.
    """
    os.makedirs(data_dir, exist_ok=True)
    model_path = os.path.join(data_dir, "digits_rf.joblib")
    feat_path = os.path.join(data_dir, "features.npy")
    save_atomic(model_path, lambda f: joblib.dump(train(), f))
    model = joblib.load(model_path)
    features, _ = load_digits(return_X_y=True)
    save_atomic(feat_path, lambda f: np.save(f, features))
    paths = {
        "model": model_path,
        "model_bytes": os.path.getsize(model_path),
        "features": feat_path,
        "features_bytes": os.path.getsize(feat_path),
    }
    return model, features, paths


def predict(model, features, rounds=None):
    """Predict every row `rounds` times (CPU only); returns a small summary."""
    rounds = PREDICT_ROUNDS if rounds is None else rounds
    t0 = time.thread_time_ns()
    for _ in range(rounds):
        labels = model.predict(features)
    return {
        "rows": int(len(features)),
        "rounds": rounds,
        "label_sum": int(labels.sum()),
        "cpu_ms": (time.thread_time_ns() - t0) / 1e6,
    }


def predict_file(model, feat_path):
    """Read the feature file from disk (open + read per call), then predict once."""
    features = np.load(feat_path)
    return predict(model, features, rounds=1)
