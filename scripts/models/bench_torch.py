#!/usr/bin/python3
"""The torch side of `pnpm bench:models` (scripts/models/bench.mjs): prefill and cached decoding of a
shipped checkpoint with the torch model code of arch.py, on ONE thread, in float32 (the checkpoint's
dtype) and float64.

    /usr/bin/python3 scripts/models/bench_torch.py MODEL_DIR   (a server: JSON lines in, JSON lines out)

It loads both precisions, answers {"ready": true, "torch": ..., "threads": 1, "blas": {"name", "paths", "optimized"}}
(packages/core/bench/blas_in_use.py), then times ONE call per
request, so the caller can alternate its own runs with torch's and compare runs made seconds apart
(this host's throughput drifts by up to ±25 % over tens of seconds; two medians taken minutes apart
compared that drift, not the code). Requests, one JSON object per line:
  {"op": "ids", "ids": [...]}                                   the token ids of every later request
  {"op": "prefill", "dtype": "float64", "n": 128}               one forward over ids[:n], empty cache
  {"op": "decode", "dtype": ..., "prompt": 64, "decode": 64, "logits": false}
        per token: `decode` one-token cached steps after an untimed `prompt`-token prefill
  {"op": "logits", "dtype": ..., "n": 128}                      the last-token logits of a prefill
Times are {"wall", "cpu"} in seconds (perf_counter and process_time). Decoding is HF-style: the KV
cache holds post-RoPE keys and values (DeepSeek: per-head, as transformers' DeepseekV2 caches them),
grown by torch.cat per step, and the MoE runs only the routed experts (HF's dispatch).
"""
import json
import os
import sys
import time

import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../packages/core/bench"))
from arch import CausalLM, DeepseekV2MoE, load_safetensors  # noqa: E402
from blas_in_use import blas_in_use, optimized  # noqa: E402


def load(model_dir, dtype):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    m = CausalLM(cfg)
    m.load_from_disk(load_safetensors(os.path.join(model_dir, "model.safetensors")))
    m = m.to(dtype).eval()
    for mod in m.modules():
        if isinstance(mod, DeepseekV2MoE):
            mod.dispatch = True
    return m


def timed(fn):
    """Wall and CPU (process_time: every thread of this process) seconds of one call of fn."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}, result


def main():
    model_dir = sys.argv[1]
    models = {"float32": load(model_dir, torch.float32), "float64": load(model_dir, torch.float64)}
    ids = None
    # A product first, so the BLAS library is mapped when blas_in_use reads /proc/self/maps.
    torch.ones(8, 8, dtype=torch.float64) @ torch.ones(8, 8, dtype=torch.float64)
    blas = blas_in_use()
    blas["optimized"] = optimized(blas["name"])
    reply({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas})
    with torch.inference_mode():
        for line in sys.stdin:
            req = json.loads(line)
            op = req["op"]
            if op == "ids":
                ids = torch.tensor([req["ids"]], dtype=torch.long)
                reply({"ok": True})
                continue
            m = models[req["dtype"]]
            if op == "prefill":
                n = req["n"]
                t, _ = timed(lambda: m(ids[:, :n]))
                reply(t)
            elif op == "decode":
                # Per token: the mean of `decode` one-token cached steps after a `prompt`-token
                # prefill that is not timed (teacher-forced: the same ids RandAttn steps through).
                p, d = req["prompt"], req["decode"]
                cache = {}
                m(ids[:, :p], cache=cache)

                def steps():
                    for i in range(p, p + d):
                        logits = m(ids[:, i : i + 1], cache=cache)
                    return logits

                t, logits = timed(steps)
                reply({"wall": t["wall"] / d, "cpu": t["cpu"] / d, "lastLogits": logits[0, -1].tolist() if req.get("logits") else None})
            elif op == "logits":
                reply({"lastLogits": m(ids[:, : req["n"]])[0, -1].tolist()})
            else:
                raise ValueError(f"unknown op {op!r}")


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
