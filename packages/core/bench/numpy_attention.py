"""The NumPy side of the issue-14 attention rows of `bench` (packages/core/bench/run.mjs): exact
softmax attention N x 64 (the literal formula: S = QK^T/sqrt(d), S -= row max, exp, / row sum, S V)
in float64 and float32 on the BLAS threads the environment sets (OPENBLAS_NUM_THREADS).

    python3 numpy_attention.py N [cpu]     (a server: one request per line in, one answer per line out)

It builds Q, K, V (default_rng(1)) in both dtypes, runs each once untimed, answers
{"numpy": version, "blas": name, "optimized": bool} (blas_in_use.py) and then times ONE call per
request line ("float64" or "float32"), answering its seconds (perf_counter, or process_time with `cpu`). One call per request
lets the caller alternate its own calls with NumPy's, so both sides see the same moments of a
host whose throughput drifts by tens of per cent (bench before stop 20 compared best-of runs taken
seconds apart)."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blas_in_use import blas_in_use, optimized  # noqa: E402


def att(q, k, v):
    s = (q @ k.T) / np.sqrt(np.asarray(q.shape[1], q.dtype))
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v


def main():
    n = int(sys.argv[1])
    clock = time.process_time if len(sys.argv) > 2 and sys.argv[2] == "cpu" else time.perf_counter
    rng = np.random.default_rng(1)
    data = {}
    for dt in (np.float64, np.float32):
        data[np.dtype(dt).name] = tuple(rng.standard_normal((n, 64)).astype(dt) for _ in range(3))
        att(*data[np.dtype(dt).name])
    blas = blas_in_use()["name"]
    print(json.dumps({"numpy": np.__version__, "blas": blas, "optimized": optimized(blas)}), flush=True)
    for line in sys.stdin:
        q, k, v = data[line.strip()]
        t0 = clock()
        att(q, k, v)
        print(clock() - t0, flush=True)


if __name__ == "__main__":
    main()
