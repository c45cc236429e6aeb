#!/usr/bin/python3
"""Hand-built Hugging Face checkpoints with torch reference outputs, for RandAttn's loader tests.

Writes tiny random checkpoints of every supported family under
packages/core/test/fixtures/pretrained/<name>/ (config.json, model.safetensors or shards with
model.safetensors.index.json) and reference.safetensors (float64): token ids, logits, per-layer
hidden states, per-layer q/k/v/attention weights (and the MLA latent and rotary key), MoE routing and
a greedy continuation.

`transformers` is not installable here, so the reference forward passes below are written from
transformers' modeling files (modeling_llama.py, modeling_qwen2.py, modeling_gpt2.py and DeepSeek-V2's
modeling_deepseek.py) in float64 from the *stored* (rounded) weights. DeepSeek's rotary part is
computed both as the hub code does (interleaved->half permutation, then rotate_half) and as the
in-library complex form; the script asserts they agree and stores the complex (interleaved) order.

Run once, with Debian's torch:  apt-get install -y python3-torch;  /usr/bin/python3 scripts/models/make_fixtures.py [NAME ...]
Deterministic (fixed seeds); the output is committed (about 0.6 MB in all).
"""
import json
import math
import os
import struct

import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packages", "core", "test", "fixtures", "pretrained")

DT = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


# ---------------------------------------------------------------- safetensors writer (the format's spec)
def st_bytes(tensors, dtype):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].to(DT[dtype]).contiguous()
        if dtype == "BF16":
            raw = t.view(torch.int16).numpy().tobytes()
        else:
            raw = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def rounded(tensors, dtype):
    """The values a reader gets back: each tensor rounded to the storage dtype, as float64."""
    return {k: v.to(DT[dtype]).to(torch.float64) for k, v in tensors.items()}


def save_checkpoint(name, config, tensors, dtype, shards=1):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    names = sorted(tensors)
    if shards == 1:
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(st_bytes(tensors, dtype))
    else:
        weight_map = {}
        per = math.ceil(len(names) / shards)
        for s in range(shards):
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = {n: tensors[n] for n in names[s * per:(s + 1) * per]}
            for n in part:
                weight_map[n] = file
            with open(os.path.join(d, file), "wb") as f:
                f.write(st_bytes(part, dtype))
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)
    return d


# ---------------------------------------------------------------- shared pieces (as transformers computes them)
def rms_norm(x, w, eps):
    var = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(var + eps))


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def inv_freq(dim, base, scaling=None, max_positions=None):
    f = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim))
    mag = 1.0
    if scaling is None:
        return f, mag
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "llama3":  # modeling_rope_utils._compute_llama3_parameters
        factor, lo, hi, old = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"], scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / lo, old / hi
        wavelen = 2 * math.pi / f
        out = torch.where(wavelen > low_wavelen, f / factor, f)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, out), mag
    if kind == "yarn":
        return yarn_inv_freq(dim, base, scaling, max_positions)
    raise ValueError(kind)


def yarn_get_mscale(scale, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_inv_freq(dim, base, scaling, max_positions):
    """modeling_rope_utils._compute_yarn_parameters (transformers 4.46-4.57), in float64 (HF: float32).

    inv_freq blends θ_p/factor (interpolation) and θ_p (extrapolation) with a linear ramp over the
    pair indices [low, high] of the correction range of rotations [beta_fast, beta_slow] (YaRN §3.2,
    "NTK-by-parts"); the attention factor scales cos and sin: the given `attention_factor`, else
    get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) when both are set and non-zero
    (DeepSeek-V2/V3 configs), else 0.1·ln(factor) + 1 (YaRN eq. 21). Some HF versions replace
    `factor` by max_position_embeddings / original_max_position_embeddings: the fixtures keep the two
    equal, so every version gives the same numbers.
    """
    factor = scaling["factor"]
    old = scaling.get("original_max_position_embeddings") or max_positions
    af = scaling.get("attention_factor")
    mscale, mscale_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
    if af is None:
        af = yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all) if mscale and mscale_all else yarn_get_mscale(factor)
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1
    truncate = scaling.get("truncate", True)

    def corr_dim(rot):
        return (dim * math.log(old / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = corr_dim(beta_fast), corr_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # HF: "prevent singularity"
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim)
    extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    extra_factor = 1 - ramp
    return inter * (1 - extra_factor) + extra * extra_factor, float(af)


def causal_softmax(scores):
    n_q, n_k = scores.shape[-2:]
    mask = torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


# ---------------------------------------------------------------- Llama / Qwen2 (modeling_llama.py, modeling_qwen2.py)
def llama_forward(cfg, W, ids):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    G = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim") or d // H
    eps = cfg["rms_norm_eps"]
    qwen = cfg["architectures"][0] == "Qwen2ForCausalLM"
    f, mag = inv_freq(dh, cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling"), cfg.get("max_position_embeddings", 2048))
    N = len(ids)
    pos = torch.arange(N, dtype=torch.float64)
    freqs = torch.outer(pos, f)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * mag, emb.sin() * mag  # LlamaRotaryEmbedding: cos/sin times attention_scaling
    x = W["model.embed_tokens.weight"][ids]
    caps = {}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        caps[f"hidden.{l}"] = x.clone()
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        lin = lambda name, t: t @ W[p + name + ".weight"].T + (W[p + name + ".bias"] if p + name + ".bias" in W else 0)
        q = lin("self_attn.q_proj", h).view(N, H, dh).transpose(0, 1)
        k = lin("self_attn.k_proj", h).view(N, G, dh).transpose(0, 1)
        v = lin("self_attn.v_proj", h).view(N, G, dh).transpose(0, 1)
        caps[f"layer{l}.qPre"] = q.clone()
        caps[f"layer{l}.kPre"] = k.clone()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        kr, vr = k.repeat_interleave(H // G, dim=0), v.repeat_interleave(H // G, dim=0)  # repeat_kv
        P = causal_softmax(q @ kr.transpose(1, 2) * dh ** -0.5)
        caps[f"layer{l}.q"], caps[f"layer{l}.k"], caps[f"layer{l}.v"], caps[f"layer{l}.weights"] = q, k, v, P
        o = (P @ vr).transpose(0, 1).reshape(N, H * dh)
        x = x + lin("self_attn.o_proj", o)
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        g = torch.nn.functional.silu(lin("mlp.gate_proj", h)) * lin("mlp.up_proj", h)
        x = x + lin("mlp.down_proj", g)
    x = rms_norm(x, W["model.norm.weight"], eps)
    caps[f"hidden.{cfg['num_hidden_layers']}"] = x
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else W["lm_head.weight"]
    return x @ head.T, caps


# ---------------------------------------------------------------- GPT-2 (modeling_gpt2.py)
def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_forward(cfg, W, ids):
    d, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    dh = d // H
    P0 = "transformer."
    N = len(ids)
    x = W[P0 + "wte.weight"][ids] + W[P0 + "wpe.weight"][:N]
    caps = {}
    for l in range(cfg["n_layer"]):
        p = f"{P0}h.{l}."
        caps[f"hidden.{l}"] = x.clone()
        h = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]  # Conv1D: x W + b, W [in, out]
        q, k, v = (t.view(N, H, dh).transpose(0, 1) for t in qkv.split(d, dim=-1))
        P = causal_softmax(q @ k.transpose(1, 2) / math.sqrt(dh))
        caps[f"layer{l}.q"], caps[f"layer{l}.k"], caps[f"layer{l}.v"], caps[f"layer{l}.weights"] = q, k, v, P
        o = (P @ v).transpose(0, 1).reshape(N, d)
        x = x + o @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = gelu_new(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    x = layer_norm(x, W[P0 + "ln_f.weight"], W[P0 + "ln_f.bias"], eps)
    caps[f"hidden.{cfg['n_layer']}"] = x
    return x @ W[P0 + "wte.weight"].T, caps


# ---------------------------------------------------------------- DeepSeek-V2 (modeling_deepseek.py)
def ds_rope_hub(x, cos, sin):
    """Hub code: interleaved -> half permutation of the rotary coordinates, then rotate_half."""
    n = x.shape[-1]
    x = x.reshape(*x.shape[:-1], n // 2, 2).transpose(-1, -2).reshape(*x.shape[:-1], n)
    return x * cos + rotate_half(x) * sin


def ds_rope_complex(x, freqs, mag=1.0):
    """In-library transformers form: view pairs (2p, 2p+1) as complex numbers, multiply by e^{i m θ_p}
    (times the YaRN attention factor, as DeepseekV2RotaryEmbedding scales freqs_cis)."""
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * torch.polar(torch.ones_like(freqs), freqs) * mag).flatten(-2)


def swiglu(W, p, h):
    return (torch.nn.functional.silu(h @ W[p + "gate_proj.weight"].T) * (h @ W[p + "up_proj.weight"].T)) @ W[p + "down_proj.weight"].T


def moe(cfg, W, p, h, caps, l):
    E, k = cfg["n_routed_experts"], cfg["num_experts_per_tok"]
    scores = torch.softmax(h @ W[p + "gate.weight"].T, dim=-1)
    if cfg["topk_method"] == "greedy":
        tw, ti = torch.topk(scores, k=k, dim=-1, sorted=True)
    else:  # group_limited_greedy
        G = cfg["n_group"]
        gs = scores.view(len(h), G, -1).max(dim=-1).values
        gi = torch.topk(gs, k=cfg["topk_group"], dim=-1, sorted=True)[1]
        gm = torch.zeros_like(gs).scatter_(1, gi, 1)
        sm = gm.unsqueeze(-1).expand(len(h), G, E // G).reshape(len(h), -1)
        tw, ti = torch.topk(scores.masked_fill(~sm.bool(), 0.0), k=k, dim=-1, sorted=True)
    if k > 1 and cfg["norm_topk_prob"]:
        tw = tw / (tw.sum(dim=-1, keepdim=True) + 1e-20)
    else:
        tw = tw * cfg["routed_scaling_factor"]
    caps[f"layer{l}.routerExperts"] = ti.to(torch.float64)
    caps[f"layer{l}.routerWeights"] = tw
    out = torch.zeros_like(h)
    for e in range(E):
        rows, slot = torch.where(ti == e)
        if len(rows):
            out.index_add_(0, rows, swiglu(W, f"{p}experts.{e}.", h[rows]) * tw[rows, slot, None])
    return out + swiglu(W, p + "shared_experts.", h)


def deepseek_forward(cfg, W, ids):
    d, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["rms_norm_eps"]
    nope, dR, dV, dL = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg["kv_lora_rank"]
    N = len(ids)
    f, mag = inv_freq(dR, cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling"), cfg.get("max_position_embeddings", 2048))
    freqs = torch.outer(torch.arange(N, dtype=torch.float64), f)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * mag, emb.sin() * mag
    scale = (nope + dR) ** -0.5
    rs = cfg.get("rope_scaling")
    if rs is not None and rs.get("mscale_all_dim", 0):
        # DeepseekV2Attention: softmax scale times mscale(factor, mscale_all_dim)² under YaRN.
        m = yarn_get_mscale(rs["factor"], rs["mscale_all_dim"])
        scale = scale * m * m
    x = W["model.embed_tokens.weight"][ids]
    caps = {}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        a = p + "self_attn."
        caps[f"hidden.{l}"] = x.clone()
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        if cfg.get("q_lora_rank") is None:
            q = h @ W[a + "q_proj.weight"].T
        else:
            q = rms_norm(h @ W[a + "q_a_proj.weight"].T, W[a + "q_a_layernorm.weight"], 1e-6) @ W[a + "q_b_proj.weight"].T
        q = q.view(N, H, nope + dR).transpose(0, 1)
        q_nope, q_pe = q.split([nope, dR], dim=-1)
        ckv = h @ W[a + "kv_a_proj_with_mqa.weight"].T
        c, k_pe = ckv.split([dL, dR], dim=-1)
        latent = rms_norm(c, W[a + "kv_a_layernorm.weight"], 1e-6)
        kv = (latent @ W[a + "kv_b_proj.weight"].T).view(N, H, nope + dV).transpose(0, 1)
        k_nope, v = kv.split([nope, dV], dim=-1)
        q_pe_hub, k_pe_hub = ds_rope_hub(q_pe, cos, sin), ds_rope_hub(k_pe, cos, sin)
        q_pe_c, k_pe_c = ds_rope_complex(q_pe, freqs, mag), ds_rope_complex(k_pe, freqs, mag)
        # Both forms give the same scores (same pairs rotated, coordinates in another order).
        assert torch.allclose(q_pe_hub @ k_pe_hub.T, q_pe_c @ k_pe_c.T, rtol=1e-13, atol=1e-13)
        qs = torch.cat((q_nope, q_pe_hub), dim=-1)
        ks = torch.cat((k_nope, k_pe_hub.expand(H, N, dR)), dim=-1)
        P = causal_softmax(qs @ ks.transpose(1, 2) * scale)
        caps[f"layer{l}.q"] = torch.cat((q_nope, q_pe_c), dim=-1)
        caps[f"layer{l}.k"] = torch.cat((k_nope, k_pe_c.expand(H, N, dR)), dim=-1)
        caps[f"layer{l}.v"], caps[f"layer{l}.weights"] = v, P
        caps[f"layer{l}.latent"], caps[f"layer{l}.rotaryKey"] = latent, k_pe_c
        o = (P @ v).transpose(0, 1).reshape(N, H * dV)
        x = x + o @ W[a + "o_proj.weight"].T
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        use_moe = cfg.get("n_routed_experts") is not None and l >= cfg["first_k_dense_replace"] and l % cfg["moe_layer_freq"] == 0
        x = x + (moe(cfg, W, p + "mlp.", h, caps, l) if use_moe else swiglu(W, p + "mlp.", h))
    x = rms_norm(x, W["model.norm.weight"], eps)
    caps[f"hidden.{cfg['num_hidden_layers']}"] = x
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else W["lm_head.weight"]
    return x @ head.T, caps


# ---------------------------------------------------------------- random weights
def rnd(gen, *shape, std=0.3):
    return torch.randn(*shape, generator=gen, dtype=torch.float64) * std


def norm_w(gen, n):
    return 1.0 + rnd(gen, n, std=0.1)


def llama_weights(cfg, gen):
    d, H, V, f = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    G = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim") or d // H
    bias = cfg["architectures"][0] == "Qwen2ForCausalLM"
    W = {"model.embed_tokens.weight": rnd(gen, V, d, std=1.0), "model.norm.weight": norm_w(gen, d)}
    if not cfg.get("tie_word_embeddings", False):
        W["lm_head.weight"] = rnd(gen, V, d)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        W[p + "input_layernorm.weight"] = norm_w(gen, d)
        W[p + "post_attention_layernorm.weight"] = norm_w(gen, d)
        for name, out in [("q", H * dh), ("k", G * dh), ("v", G * dh)]:
            W[p + f"self_attn.{name}_proj.weight"] = rnd(gen, out, d)
            if bias:
                W[p + f"self_attn.{name}_proj.bias"] = rnd(gen, out)
        W[p + "self_attn.o_proj.weight"] = rnd(gen, d, H * dh)
        W[p + "mlp.gate_proj.weight"] = rnd(gen, f, d)
        W[p + "mlp.up_proj.weight"] = rnd(gen, f, d)
        W[p + "mlp.down_proj.weight"] = rnd(gen, d, f)
    return W


def gpt2_weights(cfg, gen):
    d, V, inner = cfg["n_embd"], cfg["vocab_size"], 4 * cfg["n_embd"]
    P0 = "transformer."
    W = {P0 + "wte.weight": rnd(gen, V, d, std=1.0), P0 + "wpe.weight": rnd(gen, cfg["n_positions"], d),
         P0 + "ln_f.weight": norm_w(gen, d), P0 + "ln_f.bias": rnd(gen, d, std=0.1)}
    for l in range(cfg["n_layer"]):
        p = f"{P0}h.{l}."
        for ln in ("ln_1", "ln_2"):
            W[p + ln + ".weight"], W[p + ln + ".bias"] = norm_w(gen, d), rnd(gen, d, std=0.1)
        W[p + "attn.c_attn.weight"], W[p + "attn.c_attn.bias"] = rnd(gen, d, 3 * d), rnd(gen, 3 * d)
        W[p + "attn.c_proj.weight"], W[p + "attn.c_proj.bias"] = rnd(gen, d, d), rnd(gen, d)
        W[p + "mlp.c_fc.weight"], W[p + "mlp.c_fc.bias"] = rnd(gen, d, inner), rnd(gen, inner)
        W[p + "mlp.c_proj.weight"], W[p + "mlp.c_proj.bias"] = rnd(gen, inner, d), rnd(gen, d)
    return W


def deepseek_weights(cfg, gen):
    d, H, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"]
    nope, dR, dV, dL, dQ = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg["kv_lora_rank"], cfg.get("q_lora_rank")
    W = {"model.embed_tokens.weight": rnd(gen, V, d, std=1.0), "model.norm.weight": norm_w(gen, d)}
    if not cfg.get("tie_word_embeddings", False):
        W["lm_head.weight"] = rnd(gen, V, d)
    sw = lambda p, inner: W.update({p + "gate_proj.weight": rnd(gen, inner, d), p + "up_proj.weight": rnd(gen, inner, d), p + "down_proj.weight": rnd(gen, d, inner)})
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        a = p + "self_attn."
        W[p + "input_layernorm.weight"], W[p + "post_attention_layernorm.weight"] = norm_w(gen, d), norm_w(gen, d)
        if dQ is None:
            W[a + "q_proj.weight"] = rnd(gen, H * (nope + dR), d)
        else:
            W[a + "q_a_proj.weight"], W[a + "q_a_layernorm.weight"] = rnd(gen, dQ, d), norm_w(gen, dQ)
            W[a + "q_b_proj.weight"] = rnd(gen, H * (nope + dR), dQ)
        W[a + "kv_a_proj_with_mqa.weight"], W[a + "kv_a_layernorm.weight"] = rnd(gen, dL + dR, d), norm_w(gen, dL)
        W[a + "kv_b_proj.weight"] = rnd(gen, H * (nope + dV), dL)
        W[a + "o_proj.weight"] = rnd(gen, d, H * dV)
        use_moe = cfg.get("n_routed_experts") is not None and l >= cfg["first_k_dense_replace"] and l % cfg["moe_layer_freq"] == 0
        if use_moe:
            W[p + "mlp.gate.weight"] = rnd(gen, cfg["n_routed_experts"], d, std=1.0)
            for e in range(cfg["n_routed_experts"]):
                sw(f"{p}mlp.experts.{e}.", cfg["moe_intermediate_size"])
            sw(p + "mlp.shared_experts.", cfg["moe_intermediate_size"] * cfg["n_shared_experts"])
        else:
            sw(p + "mlp.", cfg["intermediate_size"])
    return W


# ---------------------------------------------------------------- the fixtures
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 48,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
         "hidden_act": "silu", "torch_dtype": "float32"}
FIXTURES = [
    ("llama-tied-llama3", dict(LLAMA, tie_word_embeddings=True, rope_theta=500000.0,
                               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8}), "F32", 1, llama_forward, llama_weights),
    ("llama-untied-bf16", dict(LLAMA, tie_word_embeddings=False, num_key_value_heads=1, head_dim=16, rope_theta=10000.0), "BF16", 1,
     llama_forward, llama_weights),
    ("qwen2-bias-f16", dict(LLAMA, architectures=["Qwen2ForCausalLM"], model_type="qwen2", tie_word_embeddings=True, rope_theta=1000000.0,
                            rms_norm_eps=1e-6), "F16", 1, llama_forward, llama_weights),
    ("gpt2-sharded", {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 64, "n_embd": 24, "n_layer": 2, "n_head": 3,
                      "n_positions": 16, "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}, "F32", 2,
     gpt2_forward, gpt2_weights),
    ("deepseek-dense-qlora", {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": 64, "hidden_size": 32,
                              "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                              "q_lora_rank": 24, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 6,
                              "n_routed_experts": None, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
                              "tie_word_embeddings": False, "hidden_act": "silu"}, "F32", 1, deepseek_forward, deepseek_weights),
    ("deepseek-moe-bf16", {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": 64, "hidden_size": 32,
                           "intermediate_size": 48, "moe_intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                           "num_key_value_heads": 4, "q_lora_rank": None, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4,
                           "v_head_dim": 8, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
                           "topk_method": "group_limited_greedy", "n_group": 2, "topk_group": 1, "routed_scaling_factor": 1.5,
                           "norm_topk_prob": False, "first_k_dense_replace": 1, "moe_layer_freq": 1, "max_position_embeddings": 64,
                           "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": False, "hidden_act": "silu"}, "BF16", 2,
     deepseek_forward, deepseek_weights),
]
# YaRN (issue 10): non-default beta_fast/beta_slow so the ramp has fractional steps (pairs 2…6 of 8
# for the Llama one, pair 1 of 4 for DeepSeek), max_position_embeddings = factor × original.
FIXTURES += [
    ("llama-yarn", dict(LLAMA, tie_word_embeddings=True, num_attention_heads=2, num_key_value_heads=1, rope_theta=100.0,
                        max_position_embeddings=1024,
                        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256, "beta_fast": 8.0,
                                      "beta_slow": 2.0}), "F32", 1, llama_forward, llama_weights),
    # DeepSeek-V2(-Lite) style: `type: yarn` with mscale / mscale_all_dim (the Lite ships 0.707 / 0.707, whose ratio is
    # 1; unequal values here so both the cos/sin factor and the softmax mscale² are exercised).
    ("deepseek-yarn", {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": 64, "hidden_size": 32,
                       "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
                       "q_lora_rank": None, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
                       "n_routed_experts": None, "max_position_embeddings": 2560, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
                       "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 64, "beta_fast": 32,
                                        "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 0.707},
                       "tie_word_embeddings": False, "hidden_act": "silu"}, "F32", 1, deepseek_forward, deepseek_weights),
]
N_TOKENS = 8
N_GREEDY = 6


# YaRN parameter cases beyond the two checkpoints (HF's branches: attention_factor given, only one of
# mscale / mscale_all_dim, truncate false, original_max_position_embeddings absent, default betas,
# low == high): (head_dim, rope_theta, max_position_embeddings, rope_scaling).
YARN_CASES = [
    (16, 100.0, 1024, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256, "beta_fast": 8.0, "beta_slow": 2.0}),
    (64, 10000.0, 163840, {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                           "mscale": 0.707, "mscale_all_dim": 0.707}),  # DeepSeek-V2-Lite's rope_scaling
    (8, 10000.0, 2560, {"type": "yarn", "factor": 40, "original_max_position_embeddings": 64, "mscale": 1.0, "mscale_all_dim": 0.707}),
    (32, 10000.0, 1024, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 128, "mscale": 0.5}),
    (32, 10000.0, 1024, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 128, "mscale_all_dim": 1.0}),
    (32, 10000.0, 1024, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 128, "attention_factor": 1.25}),
    (32, 10000.0, 1024, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 128, "truncate": False}),
    (32, 10000.0, 512, {"rope_type": "yarn", "factor": 2.0}),
    (128, 1000000.0, 131072, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),  # Qwen2.5's
    (4, 10000.0, 8, {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4}),  # low == high
]


def yarn_cases():
    out = []
    for dim, theta, max_pos, rs in YARN_CASES:
        f, af = yarn_inv_freq(dim, theta, rs, max_pos)
        out.append({"head_dim": dim, "rope_theta": theta, "max_position_embeddings": max_pos, "rope_scaling": rs,
                    "inv_freq": f.tolist(), "attention_factor": af})
    with open(os.path.join(ROOT, "yarn-cases.json"), "w") as fh:
        json.dump({"torch": torch.__version__, "cases": out}, fh, indent=1)
        fh.write("\n")


def main(only=()):
    os.makedirs(ROOT, exist_ok=True)
    if not only or "yarn-cases" in only:
        yarn_cases()
    for i, (name, cfg, dtype, shards, forward, make) in enumerate(FIXTURES):
        if only and name not in only:
            continue
        gen = torch.Generator().manual_seed(1000 + i)
        W = make(cfg, gen)
        d = save_checkpoint(name, cfg, W, dtype, shards)
        W = rounded(W, dtype)  # the reference runs on what the reader gets back
        ids = torch.randint(0, cfg["vocab_size"], (N_TOKENS,), generator=gen)
        logits, caps = forward(cfg, W, ids)
        seq = ids.tolist()
        for _ in range(N_GREEDY):  # greedy, a full forward per token (no cache), lowest id on ties
            seq.append(int(torch.argmax(forward(cfg, W, torch.tensor(seq))[0][-1])))
        ref = {"ids": ids.to(torch.float64), "logits": logits, "greedy": torch.tensor(seq[N_TOKENS:], dtype=torch.float64)}
        ref.update(caps)
        with open(os.path.join(d, "reference.safetensors"), "wb") as f:
            f.write(st_bytes(ref, "F64"))
        print(f"{name}: {dtype}, {shards} file(s), {sum(v.numel() for v in W.values())} params, torch {torch.__version__}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])  # names: rewrite only those fixtures (seeds depend on the position in FIXTURES only)
