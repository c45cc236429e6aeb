"""One-off training of the shipped checkpoints (issue 10 §3). Never part of tests or CI.

  nice -n 10 /usr/bin/python3 scripts/models/train.py llama    WORK_DIR MINUTES
  nice -n 10 /usr/bin/python3 scripts/models/train.py deepseek WORK_DIR MINUTES
  ... train.py NAME WORK_DIR MINUTES resume   # continue from WORK_DIR/NAME/ckpt.pt: a second
                                              # cosine phase from half the peak learning rate

WORK_DIR holds corpus/ (corpus.py) and tokenizer.json (bpe.py); checkpoints go to
WORK_DIR/<name>/ (outside the repository). One thread (the machine is shared).

Curriculum (why: structured heads in little compute). Each batch mixes
- natural text: a window starting at a document start, so position 0 is always BOS
  (attention sinks form on a constant first token);
- BOS + a random token segment repeated to fill the window (induction heads form on
  repeated sequences: Olsson et al. 2022, "In-context learning and induction heads");
- BOS + a natural-text window followed by the same window again (induction on text).
The learning rate follows a warm-up and a cosine decay over the wall-clock budget.
"""

import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402
import bpe  # noqa: E402

torch.set_num_threads(1)
SEED = 1234
SEQ_LEN = 128
BATCH = 16
PEAK_LR = 4e-3
WARMUP = 100
WEIGHT_DECAY = 0.01
MIX = (0.4, 0.3, 0.3)  # natural, repeated random, repeated text


def tokenize_docs(work, split):
    cache = os.path.join(work, f"{split}.ids.npy")
    if os.path.exists(cache):
        return np.load(cache)
    enc = bpe.load(os.path.join(work, "tokenizer.json"))
    with open(os.path.join(work, "corpus", f"{split}.txt"), encoding="utf-8") as f:
        docs = f.read().split(bpe.DOC_SEP)
    ids = []
    for d in docs:
        ids.extend(enc.encode(d, bos=True))
    arr = np.array(ids, dtype=np.int32)
    np.save(cache, arr)
    return arr


class Sampler:
    def __init__(self, stream, bos, vocab, seed):
        self.stream = stream
        self.bos = bos
        self.vocab = vocab
        self.starts = np.nonzero(stream == bos)[0]
        self.starts = self.starts[self.starts + SEQ_LEN + 1 < len(stream)]
        self.rng = np.random.default_rng(seed)

    def natural(self, n):
        s = self.rng.choice(self.starts)
        return self.stream[s : s + n]

    def random_repeat(self, n):
        seg = int(self.rng.integers(8, 41))
        r = self.rng.integers(0, self.vocab - 1, size=seg)  # every id but BOS (the last)
        body = np.tile(r, n // seg + 1)[: n - 1]
        return np.concatenate([[self.bos], body])

    def text_repeat(self, n):
        half = (n - 1) // 2
        s = self.rng.integers(0, len(self.stream) - half - 1)
        x = self.stream[s : s + half]
        body = np.concatenate([x, x, x])[: n - 1]
        return np.concatenate([[self.bos], body])

    def batch(self, b):
        rows = []
        for _ in range(b):
            u = self.rng.random()
            if u < MIX[0]:
                rows.append(self.natural(SEQ_LEN + 1))
            elif u < MIX[0] + MIX[1]:
                rows.append(self.random_repeat(SEQ_LEN + 1))
            else:
                rows.append(self.text_repeat(SEQ_LEN + 1))
        return torch.from_numpy(np.stack(rows).astype(np.int64))


def make_model(name, vocab, bos):
    c = arch.llama_config(vocab, bos) if name == "llama" else arch.deepseek_config(vocab, bos)
    return arch.CausalLM(c)


def evaluate(model, valid_batches):
    model.eval()
    tot, cnt = 0.0, 0
    with torch.no_grad():
        for x in valid_batches:
            logits = model(x[:, :-1])
            tot += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="sum").item()
            cnt += x[:, 1:].numel()
    model.train()
    return tot / cnt


def main():
    name, work, minutes = sys.argv[1], sys.argv[2], float(sys.argv[3])
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(SEED)
    random.seed(SEED)
    with open(os.path.join(work, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    vocab = len(tj["model"]["vocab"])
    bos = tj["model"]["vocab"][bpe.SPECIAL]
    train_ids = tokenize_docs(work, "train")
    valid_ids = tokenize_docs(work, "valid")
    model = make_model(name, vocab, bos)
    resume = len(sys.argv) > 4 and sys.argv[4] == "resume"
    peak = PEAK_LR
    step0 = 0
    if resume:
        ck = torch.load(os.path.join(out, "ckpt.pt"))
        model.load_state_dict(ck["state"])
        step0 = ck["step"]
        peak = PEAK_LR * 0.5
    sampler = Sampler(train_ids, bos, vocab, SEED + step0)
    vs = Sampler(valid_ids, bos, vocab, SEED + 1)
    valid_batches = [torch.from_numpy(np.stack([vs.natural(SEQ_LEN + 1) for _ in range(32)]).astype(np.int64)) for _ in range(4)]
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
        lr=PEAK_LR, betas=(0.9, 0.95),
    )
    budget = minutes * 60
    t0 = time.time()
    step = step0
    log = open(os.path.join(out, "train.log"), "a")
    last_save = t0
    while True:
        elapsed = time.time() - t0
        if elapsed >= budget:
            break
        frac = elapsed / budget
        lr = peak * min(1.0, (step - step0 + 1) / WARMUP) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        x = sampler.batch(BATCH)
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 100 == 0:
            msg = f"step {step} t {elapsed:.0f}s lr {lr:.2e} train {loss.item():.4f}"
            if step % 500 == 0:
                msg += f" valid {evaluate(model, valid_batches):.4f}"
            print(msg, file=log, flush=True)
        if time.time() - last_save > 180:
            torch.save({"state": model.state_dict(), "step": step}, os.path.join(out, "ckpt.pt"))
            last_save = time.time()
    torch.save({"state": model.state_dict(), "step": step}, os.path.join(out, "ckpt.pt"))
    v = evaluate(model, valid_batches)
    prev = {}
    if resume and os.path.exists(os.path.join(out, "train.json")):
        with open(os.path.join(out, "train.json")) as f:
            prev = json.load(f)
    if prev and "phases" not in prev:
        prev["phases"] = [{"minutes": None, "steps": prev["steps"], "peak_lr": prev["peak_lr"], "seconds": prev["seconds"]}]
    phases = prev.get("phases", []) + [{"minutes": minutes, "steps": step - step0, "peak_lr": peak,
                                        "seconds": time.time() - t0}]
    info = {"steps": step, "seconds": sum(p["seconds"] for p in phases), "phases": phases, "valid_quick": v, "seq_len": SEQ_LEN, "batch": BATCH,
            "peak_lr": PEAK_LR, "warmup": WARMUP, "weight_decay": WEIGHT_DECAY, "mix": MIX, "seed": SEED,
            "torch": torch.__version__}
    with open(os.path.join(out, "train.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info), file=log, flush=True)


if __name__ == "__main__":
    main()
