#!/usr/bin/python3
"""The torch side of `pnpm bench:models` (scripts/models/bench.mjs): prefill and cached decoding of a
shipped checkpoint with the torch model code of arch.py, on ONE thread, in float32 (the checkpoint's
dtype) and float64.

    /usr/bin/python3 scripts/models/bench_torch.py MODEL_DIR SPEC.json   ->  one JSON object on stdout

SPEC.json (written by bench.mjs): {"ids": [...], "prefill": [128, 512], "prompt": 64, "decode": 64,
"reps": 7, "warmup": 2}. Times ({"wall", "cpu"}: perf_counter and process_time) are medians over `reps` after `warmup` untimed runs, in seconds:
prefill = one forward over the first N ids from an empty cache; decode = per token, the mean of
`decode` one-token cached steps (ids prompt … prompt+decode−1, teacher-forced so both sides do the
same work) after a `prompt`-token prefill that is not timed. Decoding is HF-style: the KV cache holds
post-RoPE keys and values (DeepSeek: per-head, as transformers' DeepseekV2 caches them), grown by
torch.cat per step, and the MoE runs only the routed experts (HF's dispatch). Also returned: the
last-token logits of the first prefill and of the last decode step (float64 run), so the caller can
check both sides ran the same checkpoint.
"""
import json
import os
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch import CausalLM, DeepseekV2MoE, load_safetensors  # noqa: E402


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


def median_time(fn, reps, warmup):
    """Median wall and CPU (process_time: every thread of this process) seconds."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}


def main():
    model_dir, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    ids = torch.tensor([spec["ids"]], dtype=torch.long)
    p, d = spec["prompt"], spec["decode"]
    reps, warmup = spec["reps"], spec["warmup"]
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "runs": {}}
    for name, dtype in (("float32", torch.float32), ("float64", torch.float64)):
        m = load(model_dir, dtype)
        r = {"prefill": {}}
        with torch.inference_mode():
            for n in spec["prefill"]:
                r["prefill"][str(n)] = median_time(lambda: m(ids[:, :n]), reps, warmup)

            def decode():
                cache = {}
                m(ids[:, :p], cache=cache)
                t0, c0 = time.perf_counter(), time.process_time()
                for i in range(p, p + d):
                    logits = m(ids[:, i : i + 1], cache=cache)
                return {"wall": (time.perf_counter() - t0) / d, "cpu": (time.process_time() - c0) / d}, logits

            for _ in range(warmup):
                decode()
            runs = [decode() for _ in range(reps)]
            r["decode"] = {k: statistics.median(t[k] for t, _ in runs) for k in ("wall", "cpu")}
            if name == "float64":
                out["prefillLastLogits"] = m(ids[:, : spec["prefill"][0]])[0, -1].tolist()
                out["decodeLastLogits"] = runs[-1][1][0, -1].tolist()
        out["runs"][name] = r
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
