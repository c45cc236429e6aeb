"""Export a trained checkpoint as a Hugging Face folder, analyse its heads, write the torch
reference fixtures and the model card (issue 10 §3). Run once per model after train.py:

  nice -n 10 /usr/bin/python3 scripts/models/export.py llama    WORK_DIR models/llama-gqa-fortunes
  nice -n 10 /usr/bin/python3 scripts/models/export.py deepseek WORK_DIR models/deepseek-mla-fortunes

Everything after the export is computed in float64 from the float32 weights as stored on disk
(read back from model.safetensors), so the fixtures are what a float64 reimplementation should
reproduce up to summation order.

Head-kind thresholds, fixed before any trained model was looked at:
previous-token score > 0.4, induction score > 0.3, sink mass > 0.5.
"""

import json
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402
import bpe  # noqa: E402
import train  # noqa: E402

torch.set_num_threads(1)
THRESHOLDS = {"previous_token": 0.4, "induction": 0.3, "sink": 0.5}
ANALYSIS_SEED = 777
EVAL_LEN = 128  # the training window: BOS + 127 tokens
INDUCTION_SEGMENT = 32
INDUCTION_SEQS = 64
GREEDY_TOKENS = 16
PROMPTS = [
    "A fool and his money are soon parted.",
    "Q: What do you call a computer that sings?\nA:",
    "The cat sat on the mat. The dog sat on the log. The cat sat on the",
]


def doc_batches(stream, bos, max_len=EVAL_LEN, batch=32):
    """Validation documents, each BOS + its first max_len-1 tokens; padded rows + lengths."""
    starts = list(np.nonzero(stream == bos)[0]) + [len(stream)]
    docs = [stream[a:b][:max_len] for a, b in zip(starts, starts[1:])]
    total = sum(b - a - 1 for a, b in zip(starts, starts[1:]))
    out = []
    for i in range(0, len(docs), batch):
        chunk = docs[i : i + batch]
        n = max(len(d) for d in chunk)
        x = np.full((len(chunk), n), bos, dtype=np.int64)
        for j, d in enumerate(chunk):
            x[j, : len(d)] = d
        out.append((torch.from_numpy(x), [len(d) for d in chunk]))
    return out, total


def head_scores(model, batches, vocab, bos, unigram_logp, seg=INDUCTION_SEGMENT):
    """Per-head previous-token, sink and induction scores, and (same pass) the validation loss."""
    nll, uni, cnt = 0.0, 0.0, 0
    L = model.config["num_hidden_layers"]
    H = model.config["num_attention_heads"]
    prev = np.zeros((L, H))
    sink = np.zeros((L, H))
    n_prev = n_sink = 0
    with torch.no_grad():
        for x, lens in batches:
            logits, _, caps = model(x, capture=True)
            logp = torch.log_softmax(logits, dim=-1)
            for j, n in enumerate(lens):
                tgt = x[j, 1:n]
                nll -= logp[j, : n - 1].gather(-1, tgt[:, None]).sum().item()
                uni -= unigram_logp[tgt.numpy()].sum()
                cnt += n - 1
                if n < 6:
                    continue
                for l in range(L):
                    w = caps[l]["weights"][j].numpy()  # [H, N, N]
                    i = np.arange(2, n)
                    prev[l] += w[:, i, i - 1].sum(-1)
                    i4 = np.arange(4, n)
                    sink[l] += w[:, i4, 0].sum(-1)
                n_prev += n - 2
                n_sink += n - 4
        rng = np.random.default_rng(ANALYSIS_SEED)
        r = rng.integers(0, vocab - 1, size=(INDUCTION_SEQS, seg))
        x = torch.from_numpy(np.concatenate([np.full((INDUCTION_SEQS, 1), bos), r, r], axis=1).astype(np.int64))
        logits, _, caps = model(x, capture=True)
        ind = np.zeros((L, H))
        pos = np.arange(1 + seg, 1 + 2 * seg)  # second copy
        for l in range(L):
            w = caps[l]["weights"].numpy()
            ind[l] = w[:, :, pos, pos - seg + 1].mean(axis=(0, 2))
        logp = torch.log_softmax(logits, dim=-1)
        tok_loss = -logp[:, :-1].gather(-1, x[:, 1:, None])[..., 0].numpy()  # predicts x[:, t+1]
        first = tok_loss[:, 1:seg].mean()  # targets inside the first copy (after its first token)
        second = tok_loss[:, seg + 1 :].mean()  # targets inside the second copy
    return prev / n_prev, ind, sink / n_sink, float(first), float(second), (nll / cnt, uni / cnt, cnt)


def greedy(model, ids, n):
    ids = list(ids)
    out, margins = [], []
    with torch.no_grad():
        for _ in range(n):
            logits = model(torch.tensor([ids]))[0, -1]
            top = torch.topk(logits, 2)
            margins.append(float(top.values[0] - top.values[1]))
            t = int(top.indices[0])
            out.append(t)
            ids.append(t)
    return out, margins


def table(scores, kind):
    L, H = scores.shape
    rows = ["| layer | " + " | ".join(f"head {h}" for h in range(H)) + " |", "|---|" + "---|" * H]
    for l in range(L):
        cells = []
        for h in range(H):
            v = scores[l, h]
            cells.append(f"**{v:.3f}**" if v > THRESHOLDS[kind] else f"{v:.3f}")
        rows.append(f"| {l} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    name, work, dest = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(os.path.join(dest, "fixtures"), exist_ok=True)
    with open(os.path.join(work, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    vocab = len(tj["model"]["vocab"])
    bos = tj["model"]["vocab"][bpe.SPECIAL]
    model = train.make_model(name, vocab, bos)
    ck = torch.load(os.path.join(work, name, "ckpt.pt"))
    model.load_state_dict(ck["state"])
    with open(os.path.join(work, name, "train.json")) as f:
        tinfo = json.load(f)
    with open(os.path.join(work, "corpus", "corpus.json")) as f:
        corpus = json.load(f)

    # --- export exactly as Hugging Face lays the folder out
    tensors = model.state_for_disk()
    arch.save_safetensors(tensors, os.path.join(dest, "model.safetensors"))
    arch.write_config(model.config, os.path.join(dest, "config.json"))
    shutil.copy(os.path.join(work, "tokenizer.json"), os.path.join(dest, "tokenizer.json"))
    shutil.copy(os.path.join(work, "tokenizer_config.json"), os.path.join(dest, "tokenizer_config.json"))

    # --- reload from disk, float64
    m64 = train.make_model(name, vocab, bos)
    m64.load_from_disk(arch.load_safetensors(os.path.join(dest, "model.safetensors")))
    m64 = m64.double().eval()
    model.eval()
    n_params = arch.count_params(tensors)
    size = os.path.getsize(os.path.join(dest, "model.safetensors"))

    # --- validation loss vs unigram (unigram: add-one smoothed training frequencies)
    train_ids = train.tokenize_docs(work, "train")
    valid_ids = train.tokenize_docs(work, "valid")
    counts = np.bincount(train_ids[train_ids != bos], minlength=vocab).astype(np.float64) + 1.0
    unigram_logp = np.log(counts / counts.sum())
    batches, total_tokens = doc_batches(valid_ids, bos)
    # --- heads (and the validation loss, in the same pass)
    prev, ind, sink, first, second, (val, uni, cnt) = head_scores(m64, batches, vocab, bos, unigram_logp)

    # --- fixtures
    enc = bpe.load(os.path.join(work, "tokenizer.json"))
    fx_meta = {"prompts": [], "torch_version": torch.__version__, "numpy_version": np.__version__,
               "training_seed": train.SEED, "analysis_seed": ANALYSIS_SEED,
               "corpus_sha256": corpus["corpus_sha256"], "dtype": "float64 recomputation from the float32 weights",
               "hidden_states": "residual stream [num_hidden_layers + 1, N, hidden_size]: index 0 = token embeddings, "
                                "index l = output of decoder layer l-1 (before the final norm)",
               "logits": "[N, vocab_size] = lm_head(norm(hidden[L]))",
               "greedy": f"{GREEDY_TOKENS} greedy tokens (argmax of a full float64 forward each step, no cache) after the prompt ids"}
    for k, p in enumerate(PROMPTS):
        ids = enc.encode(p, bos=True)
        with torch.no_grad():
            logits, hidden, _ = m64(torch.tensor([ids]), capture=True)
        logits = logits[0].numpy()
        hidden = np.stack([h[0].numpy() for h in hidden])
        cont, margins = greedy(m64, ids, GREEDY_TOKENS)
        with torch.no_grad():
            l32 = model(torch.tensor([ids]))[0].double().numpy()
        rel32 = float(np.abs(l32 - logits).max() / np.abs(logits).max())
        np.save(os.path.join(dest, "fixtures", f"prompt{k}.ids.npy"), np.array(ids, dtype=np.int64))
        np.save(os.path.join(dest, "fixtures", f"prompt{k}.logits.npy"), logits.astype(np.float64))
        np.save(os.path.join(dest, "fixtures", f"prompt{k}.hidden.npy"), hidden.astype(np.float64))
        np.save(os.path.join(dest, "fixtures", f"prompt{k}.greedy.npy"), np.array(cont, dtype=np.int64))
        fx_meta["prompts"].append({
            "index": k, "text": p, "num_tokens": len(ids), "greedy_text": enc.decode(cont),
            "greedy_min_logit_margin": min(margins),
            "float32_forward_max_rel_logit_diff": rel32,
            "files": {"ids": f"prompt{k}.ids.npy", "logits": f"prompt{k}.logits.npy",
                      "hidden": f"prompt{k}.hidden.npy", "greedy": f"prompt{k}.greedy.npy"},
        })
    with open(os.path.join(dest, "fixtures", "meta.json"), "w") as f:
        json.dump(fx_meta, f, indent=2)
        f.write("\n")

    results = {
        "name": os.path.basename(dest.rstrip("/")), "params": n_params, "safetensors_bytes": size,
        "valid_nats_per_token": val, "valid_perplexity": float(np.exp(val)),
        "unigram_nats_per_token": uni, "unigram_perplexity": float(np.exp(uni)),
        "valid_tokens_scored": cnt, "valid_tokens_total": int(total_tokens),
        "previous_token": prev.tolist(), "induction": ind.tolist(), "sink": sink.tolist(),
        "induction_loss_first_copy": first, "induction_loss_second_copy": second,
        "max_previous_token": float(prev.max()), "max_induction": float(ind.max()), "max_sink": float(sink.max()),
        "train": tinfo, "thresholds": THRESHOLDS,
    }
    with open(os.path.join(work, name, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    write_card(name, dest, results, corpus, fx_meta, model.config)
    print(json.dumps({k: v for k, v in results.items() if not isinstance(v, list)}, indent=2))


def verdict(kind, scores):
    L, H = np.nonzero(scores > THRESHOLDS[kind])
    if len(L) == 0:
        return f"none (best {scores.max():.3f} at layer {np.unravel_index(scores.argmax(), scores.shape)[0]}, head {np.unravel_index(scores.argmax(), scores.shape)[1]})"
    return ", ".join(f"L{l}H{h} ({scores[l, h]:.3f})" for l, h in zip(L, H))


def phases_of(t):
    """The training phases recorded by train.py (an old single-phase train.json is one phase)."""
    if "phases" in t:
        return t["phases"]
    return [{"minutes": t["seconds"] / 60, "steps": t["steps"], "peak_lr": t["peak_lr"], "seconds": t["seconds"]}]


def training_text(name, t):
    """The Training paragraph: every phase's command, steps and wall clock."""
    ph = phases_of(t)
    runs = []
    for i, p in enumerate(ph):
        minutes = p["minutes"] if p["minutes"] is not None else round(p["seconds"] / 60)
        cmd = f"`train.py {name} /tmp/randattn-train {minutes:g}{' resume' if i > 0 else ''}`"
        runs.append(f"phase {i + 1} {cmd}: {p['steps']:,} steps in {p['seconds'] / 60:.1f} min, peak lr {p['peak_lr']:g}")
    return (
        f"`nice -n 0 /usr/bin/python3 scripts/models/train.py` (torch {t['torch']}, one thread, seed {t['seed']}), "
        f"{len(ph)} phase{'s' if len(ph) > 1 else ''} on a shared 2-core machine: " + "; ".join(runs) + ". "
        f"In all {t['steps']:,} AdamW steps of {t['batch']} × {t['seq_len']} tokens in {t['seconds'] / 60:.1f} min of "
        f"wall clock; each phase warms up over {t['warmup']} steps and decays by a cosine over its wall-clock budget "
        f"(a resumed phase starts from half the first peak), weight decay {t['weight_decay']}. Batches mix natural text "
        f"windows starting at a BOS ({t['mix'][0]:.0%}), BOS + a random token segment (8–40 tokens) repeated "
        f"({t['mix'][1]:.0%}) and BOS + a text window repeated ({t['mix'][2]:.0%}). Then `scripts/models/export.py` "
        "wrote this folder."
    )


def notes(prev, ind, t):
    """Honest notes: which head kinds the thresholds found, and how to continue training."""
    found = [k for k, s in (("previous-token", prev > THRESHOLDS["previous_token"]), ("induction", ind > THRESHOLDS["induction"])) if s.any()]
    missing = [k for k in ("previous-token", "induction") if k not in found]
    out = []
    if missing:
        out.append(f"- Honest outcome: within {t['steps']:,} steps no head reached the {' or '.join(missing)} threshold; "
                   "the tables above are the measured state, not a claim of such heads.")
    else:
        out.append("- Previous-token and induction heads both formed (tables above). On the repeated random sequences the "
                   "second copy is predicted far better than the first: the in-context copying that induction heads implement.")
    out += [
        "- Continue training with `train.py NAME /tmp/randattn-train MINUTES resume` (a further cosine phase from",
        "  `ckpt.pt`, kept outside the repository), then rerun `export.py`.",
        "- The weights were written by our own safetensors writer (`scripts/models/arch.py`), tensors in name order,",
        "  `__metadata__` `{\"format\": \"pt\"}`; `config.json` follows transformers' field names (the `transformers_version`",
        "  field names the format followed, no `transformers` package was used).",
    ]
    return out


def write_card(name, dest, r, corpus, fx, c):
    title = os.path.basename(dest.rstrip("/"))
    prev, ind, sink = (np.array(r[k]) for k in ("previous_token", "induction", "sink"))
    t = r["train"]
    if c["model_type"] == "llama":
        shape = (f"`LlamaForCausalLM`: {c['num_hidden_layers']} layers, hidden {c['hidden_size']}, "
                 f"{c['num_attention_heads']} query heads / {c['num_key_value_heads']} KV heads (GQA) of dimension "
                 f"{c['head_dim']}, RoPE θ = {c['rope_theta']:g} (rotate_half), RMSNorm ε = {c['rms_norm_eps']:g}, "
                 f"SwiGLU {c['intermediate_size']}, embeddings tied to the head.")
    else:
        shape = (f"`DeepseekV2ForCausalLM` (MLA): {c['num_hidden_layers']} layers, hidden {c['hidden_size']}, "
                 f"{c['num_attention_heads']} heads, q_lora_rank null, kv_lora_rank {c['kv_lora_rank']} (latent with "
                 f"`kv_a_layernorm`), qk_nope {c['qk_nope_head_dim']} + decoupled RoPE {c['qk_rope_head_dim']} "
                 f"(DeepSeek's interleaved→half permutation), v_head_dim {c['v_head_dim']}, softmax scale "
                 f"({c['qk_nope_head_dim']}+{c['qk_rope_head_dim']})^-½; dense SwiGLU {c['intermediate_size']} in layers "
                 f"0–{c['first_k_dense_replace'] - 1}, MoE from layer {c['first_k_dense_replace']}: "
                 f"{c['n_routed_experts']} routed experts (softmax router, greedy top-{c['num_experts_per_tok']}, not "
                 f"renormalized) + {c['n_shared_experts']} shared, expert width {c['moe_intermediate_size']}; untied head.")
    lines = [
        f"# {title}",
        "",
        f"A tiny, really trained {shape}",
        "",
        f"- Parameters: {r['params']:,} (float32 safetensors, {r['safetensors_bytes']:,} bytes).",
        f"- Tokenizer: byte-level BPE (GPT-2 style), {c['vocab_size']} tokens, trained by `scripts/models/bpe.py` on "
        "the training split; `<|endoftext|>` (id {bos}) is BOS, prepended by the tokenizer's post-processor. "
        "`@huggingface/tokenizers` 0.2.0 encodes the validation text identically (`scripts/models/check_tokenizer.mjs`).".format(bos=c["bos_token_id"]),
        f"- Corpus: Debian `fortunes` {corpus['packages']['fortunes']} + `fortunes-min` {corpus['packages']['fortunes-min']}, "
        f"{corpus['num_files']} files (all but `art`, `ascii-art`), {corpus['num_fortunes']:,} fortunes, "
        f"{corpus['num_train']:,} train / {corpus['num_valid']:,} validation; BSD licence (`models/CORPUS-LICENSE.txt`); "
        f"corpus sha256 `{corpus['corpus_sha256']}`.",
        "",
        "## Training",
        "",
        training_text(name, t),
        "",
        "## Validation",
        "",
        f"Each validation fortune as BOS + its first {EVAL_LEN - 1} tokens ({r['valid_tokens_scored']:,} of "
        f"{r['valid_tokens_total']:,} validation tokens scored), float64:",
        "",
        "| model | nats/token | perplexity |",
        "|---|---|---|",
        f"| this model | {r['valid_nats_per_token']:.3f} | {r['valid_perplexity']:.1f} |",
        f"| unigram (add-one training frequencies) | {r['unigram_nats_per_token']:.3f} | {r['unigram_perplexity']:.1f} |",
        "",
        "## Heads",
        "",
        "Thresholds fixed before training: previous-token > 0.4, induction > 0.3, sink > 0.5 (bold = passes).",
        f"Previous-token score: mean attention from position i to i−1 (i ≥ 2) on validation text. Sink mass: mean "
        f"attention to position 0 (BOS) from positions i ≥ 4 on validation text. Induction score: on {INDUCTION_SEQS} "
        f"sequences BOS + R + R, R = {INDUCTION_SEGMENT} uniform random tokens (seed {ANALYSIS_SEED}), mean attention "
        "from each token of the second copy to the token after its earlier occurrence.",
        "",
        "Previous-token:",
        "",
        table(prev, "previous_token"),
        "",
        "Induction:",
        "",
        table(ind, "induction"),
        "",
        "Sink mass:",
        "",
        table(sink, "sink"),
        "",
        f"On the repeated random sequences the loss is {r['induction_loss_first_copy']:.2f} nats/token inside the first "
        f"copy (chance: ln {c['vocab_size'] - 1} = {np.log(c['vocab_size'] - 1):.2f}) and "
        f"{r['induction_loss_second_copy']:.2f} inside the second.",
        "",
        "Outcome:",
        f"- previous-token heads: {verdict('previous_token', prev)}",
        f"- induction heads: {verdict('induction', ind)}",
        f"- sink heads: {verdict('sink', sink)}",
        "",
        "## Fixtures",
        "",
        f"`fixtures/` (written by `scripts/models/export.py`, torch {fx['torch_version']}, numpy {fx['numpy_version']}): "
        "for each prompt k, `prompt{k}.ids.npy` (int64 [N], BOS first), `prompt{k}.logits.npy` (float64 [N, vocab]), "
        "`prompt{k}.hidden.npy` (float64 [layers + 1, N, hidden]: embeddings, then each decoder layer's output, before "
        f"the final norm), `prompt{{k}}.greedy.npy` (int64 [{GREEDY_TOKENS}]); `meta.json` has the texts, greedy "
        "continuations, the smallest top-1/top-2 logit margin along each greedy path and the float32-forward deviation.",
        "",
        "| k | prompt | N | greedy continuation |",
        "|---|---|---|---|",
    ]
    for p in fx["prompts"]:
        lines.append(f"| {p['index']} | {json.dumps(p['text'])} | {p['num_tokens']} | {json.dumps(p['greedy_text'])} |")
    lines += ["", "## Notes", ""] + notes(prev, ind, t) + [""]
    with open(os.path.join(dest, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
