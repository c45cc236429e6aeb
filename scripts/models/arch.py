"""Torch definitions of LlamaForCausalLM and DeepseekV2ForCausalLM for the shipped checkpoints.

Written from Hugging Face transformers' modeling files (models/llama/modeling_llama.py,
models/deepseek_v2/modeling_deepseek_v2.py, and DeepSeek's original modeling_deepseek.py for
the rotary layout) — no `transformers` package is installable here, so this is our own code.
Parameter names are exactly the names on disk in a Hugging Face checkpoint
(`model.layers.0.self_attn.q_proj.weight`, ...), Linear weights are `[out, in]`.

Details that matter for bit-level agreement with a reimplementation:
- RMSNorm: x * rsqrt(mean(x^2) + eps), then multiplied by the weight (eps inside the root).
- Llama RoPE: "rotate_half" pairing (i, i + d/2) with inv_freq_i = theta^(-2i/d), positions 0..N-1.
- DeepSeek RoPE: the rotary dims of q and of the shared rotary key are first permuted from the
  interleaved layout (x0, x1, x2, ...) to the half layout (x0, x2, ..., x1, x3, ...), then rotated
  with rotate_half — as DeepSeek's modeling_deepseek.py does; transformers' modeling_deepseek_v2.py
  writes the same rotation with complex numbers on interleaved pairs (check_arch.py checks both agree).
- DeepSeek softmax scale (qk_nope_head_dim + qk_rope_head_dim)^(-1/2); RMSNorm on the latent
  (kv_a_layernorm) before kv_b_proj; the rotary key comes from kv_a_proj_with_mqa before the norm.
- MoE (layers with index >= first_k_dense_replace): router softmax over n_routed_experts, greedy top-k,
  weights not renormalized (norm_topk_prob false) times routed_scaling_factor, plus shared experts.
"""

import json
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

TRANSFORMERS_FORMAT_VERSION = "4.46.3"


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight.to(x.dtype) * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_cos_sin(dim, theta, n, dtype, start=0):
    """cos/sin tables [n, dim] of positions start … start+n−1 in the half layout; angles computed in
    float64 then cast."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    pos = torch.arange(start, start + n, dtype=torch.float64)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def interleaved_to_half(x):
    """DeepSeek's permutation of the rotary dims: (x0, x1, x2, x3, ...) -> (x0, x2, ..., x1, x3, ...)."""
    d = x.shape[-1]
    return x.reshape(*x.shape[:-1], d // 2, 2).transpose(-1, -2).reshape(*x.shape[:-1], d)


def causal_attention(q, k, v, scale, want_weights):
    """q [B,H,T,dq], k [B,H,N,dq], v [B,H,N,dv] -> output [B,H,T,dv] (+ weights [B,H,T,N]); the T
    queries are the last T positions (T = N without a cache). One query attends to every key: no mask."""
    t, n = q.shape[-2], k.shape[-2]
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if t > 1:
        mask = torch.ones(t, n, dtype=torch.bool, device=q.device).triu(n - t + 1)
        scores = scores.masked_fill(mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return torch.matmul(w, v), (w if want_weights else None)


class MLP(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


# ---------------------------------------------------------------- Llama


class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.h, self.kvh, self.d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        hs = c["hidden_size"]
        self.q_proj = nn.Linear(hs, self.h * self.d, bias=False)
        self.k_proj = nn.Linear(hs, self.kvh * self.d, bias=False)
        self.v_proj = nn.Linear(hs, self.kvh * self.d, bias=False)
        self.o_proj = nn.Linear(self.h * self.d, hs, bias=False)

    def forward(self, x, cos, sin, capture=None, cache=None):
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.h, self.d).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.kvh, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.kvh, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:  # HF DynamicCache: post-RoPE keys and values of the KV heads, concatenated
            if "k" in cache:
                k = torch.cat((cache["k"], k), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = k, v
        rep = self.h // self.kvh  # GQA: query head j uses KV head j // rep (HF repeat_kv)
        kk = k.repeat_interleave(rep, dim=1)
        vv = v.repeat_interleave(rep, dim=1)
        o, w = causal_attention(q, kk, vv, self.d**-0.5, capture is not None)
        if capture is not None:
            capture["weights"] = w
        return self.o_proj(o.transpose(1, 2).reshape(b, n, self.h * self.d))


class LlamaLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = LlamaAttention(c)
        self.mlp = MLP(c["hidden_size"], c["intermediate_size"])
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, capture=None, cache=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, capture, cache)
        return x + self.mlp(self.post_attention_layernorm(x))


# ---------------------------------------------------------------- DeepSeek-V2


class DeepseekV2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        assert c["q_lora_rank"] is None
        hs = c["hidden_size"]
        self.h = c["num_attention_heads"]
        self.nope, self.rope, self.vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
        self.r = c["kv_lora_rank"]
        self.q_proj = nn.Linear(hs, self.h * (self.nope + self.rope), bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(hs, self.r + self.rope, bias=False)
        self.kv_a_layernorm = RMSNorm(self.r, 1e-6)  # HF: DeepseekV2RMSNorm(kv_lora_rank), default eps
        self.kv_b_proj = nn.Linear(self.r, self.h * (self.nope + self.vd), bias=False)
        self.o_proj = nn.Linear(self.h * self.vd, hs, bias=False)

    def forward(self, x, cos, sin, capture=None, cache=None):
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.h, self.nope + self.rope).transpose(1, 2)
        q_nope, q_pe = q[..., : self.nope], q[..., self.nope :]
        ckv = self.kv_a_proj_with_mqa(x)
        latent, k_pe = ckv[..., : self.r], ckv[..., self.r :]
        kv = self.kv_b_proj(self.kv_a_layernorm(latent)).view(b, n, self.h, self.nope + self.vd).transpose(1, 2)
        k_nope, v = kv[..., : self.nope], kv[..., self.nope :]
        q_pe = interleaved_to_half(q_pe)
        k_pe = interleaved_to_half(k_pe).view(b, 1, n, self.rope)
        q_pe = q_pe * cos + rotate_half(q_pe) * sin
        k_pe = k_pe * cos + rotate_half(k_pe) * sin
        qq = torch.cat((q_nope, q_pe), dim=-1)
        kk = torch.cat((k_nope, k_pe.expand(b, self.h, n, self.rope)), dim=-1)
        if cache is not None:  # HF's DeepseekV2 caches the per-head keys and values (not the latent)
            if "k" in cache:
                kk = torch.cat((cache["k"], kk), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = kk, v
        o, w = causal_attention(qq, kk, v, (self.nope + self.rope) ** -0.5, capture is not None)
        if capture is not None:
            capture["weights"] = w
        return self.o_proj(o.transpose(1, 2).reshape(b, n, self.h * self.vd))


class Experts(nn.Module):
    def __init__(self, n, hidden, inter):
        super().__init__()
        self.list = nn.ModuleList([MLP(hidden, inter) for _ in range(n)])


class DeepseekV2MoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        hs, e = c["hidden_size"], c["n_routed_experts"]
        self.top_k = c["num_experts_per_tok"]
        self.scale = c["routed_scaling_factor"]
        self.gate = nn.Linear(hs, e, bias=False)
        self.experts = nn.ModuleList([MLP(hs, c["moe_intermediate_size"]) for _ in range(e)])
        self.shared_experts = MLP(hs, c["moe_intermediate_size"] * c["n_shared_experts"])
        self.dispatch = False  # True: HF's per-expert dispatch (only the chosen experts run; inference)

    def forward(self, x, capture=None):
        probs = torch.softmax(self.gate(x), dim=-1)
        w, idx = torch.topk(probs, self.top_k, dim=-1)
        if self.dispatch and capture is None:
            # modeling_deepseek_v2 DeepseekV2MoE.moe: each expert on the tokens routed to it.
            flat = x.reshape(-1, x.shape[-1])
            ti, tw = idx.reshape(-1, self.top_k), w.reshape(-1, self.top_k) * self.scale
            out = torch.zeros_like(flat)
            for j, expert in enumerate(self.experts):
                rows, slot = torch.where(ti == j)
                if rows.numel():
                    out.index_add_(0, rows, expert(flat[rows]) * tw[rows, slot, None])
            return out.view_as(x) + self.shared_experts(x)
        dense_w = torch.zeros_like(probs).scatter(-1, idx, w) * self.scale
        if capture is not None:
            capture["router_probs"] = probs
            capture["topk_idx"] = idx
        out = self.shared_experts(x)
        # Every expert on every token, weighted by its (zero when not chosen) routing weight:
        # the same sum as HF's per-expert dispatch, cheap at this size.
        for j, expert in enumerate(self.experts):
            out = out + dense_w[..., j : j + 1] * expert(x)
        return out


class DeepseekV2Layer(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        self.self_attn = DeepseekV2Attention(c)
        moe = c["n_routed_experts"] is not None and i >= c["first_k_dense_replace"] and i % c["moe_layer_freq"] == 0
        self.mlp = DeepseekV2MoE(c) if moe else MLP(c["hidden_size"], c["intermediate_size"])
        self.is_moe = moe
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, capture=None, cache=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, capture, cache)
        h = self.post_attention_layernorm(x)
        return x + (self.mlp(h, capture) if self.is_moe else self.mlp(h))


# ---------------------------------------------------------------- causal LM wrapper


class Inner(nn.Module):
    def __init__(self, c, layers):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(layers)
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        if c["model_type"] == "llama":
            layers = [LlamaLayer(c) for _ in range(c["num_hidden_layers"])]
            self.rope_dim = c["head_dim"]
        else:
            layers = [DeepseekV2Layer(c, i) for i in range(c["num_hidden_layers"])]
            self.rope_dim = c["qk_rope_head_dim"]
        self.model = Inner(c, layers)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=c["initializer_range"])

    def forward(self, ids, capture=False, cache=None):
        """ids [B, N] -> logits [B, N, V]; with capture, also hidden states (residual stream:
        embeddings, then each layer's output; [L+1] x [B, N, d]) and per-layer captures.
        With `cache` (a dict, {} at first: cached decoding as HF's generate does), the ids continue
        the cached sequence at positions cache["position"] …, and the cache is updated."""
        dtype = self.model.embed_tokens.weight.dtype
        n = ids.shape[1]
        start = cache.setdefault("position", 0) if cache is not None else 0
        cos, sin = rope_cos_sin(self.rope_dim, self.config["rope_theta"], n, dtype, start)
        x = self.model.embed_tokens(ids)
        hidden = [x]
        caps = []
        layer_caches = cache.setdefault("layers", [{} for _ in self.model.layers]) if cache is not None else None
        for li, layer in enumerate(self.model.layers):
            cap = {} if capture else None
            x = layer(x, cos, sin, cap, None if layer_caches is None else layer_caches[li])
            hidden.append(x)
            caps.append(cap)
        logits = self.lm_head(self.model.norm(x))
        if cache is not None:
            cache["position"] = start + n
        if capture:
            return logits, hidden, caps
        return logits

    def state_for_disk(self):
        """Tensors as Hugging Face stores them (tied lm_head omitted, as save_pretrained does)."""
        sd = {}
        for k, v in self.state_dict().items():
            if k == "lm_head.weight" and self.config["tie_word_embeddings"]:
                continue
            sd[k] = v.detach().to(torch.float32).contiguous()
        return sd

    def load_from_disk(self, tensors):
        sd = {k: torch.from_numpy(np.array(v)) for k, v in tensors.items()}
        if self.config["tie_word_embeddings"]:
            sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
        missing = set(self.state_dict()) - set(sd)
        extra = set(sd) - set(self.state_dict())
        assert not missing and not extra, (missing, extra)
        self.load_state_dict(sd)


# ---------------------------------------------------------------- configs (as HF writes config.json)


def llama_config(vocab, bos):
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": bos,
        "eos_token_id": bos,
        "head_dim": 16,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 192,
        "max_position_embeddings": 512,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 4,
        "num_hidden_layers": 4,
        "num_key_value_heads": 2,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "transformers_version": TRANSFORMERS_FORMAT_VERSION,
        "use_cache": True,
        "vocab_size": vocab,
    }


def deepseek_config(vocab, bos):
    # Field set of DeepSeek-V2-Lite's config.json (q_lora_rank null), scaled down.
    return {
        "architectures": ["DeepseekV2ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "aux_loss_alpha": 0.001,
        "bos_token_id": bos,
        "eos_token_id": bos,
        "ep_size": 1,
        "first_k_dense_replace": 3,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 192,
        "kv_lora_rank": 32,
        "max_position_embeddings": 512,
        "model_type": "deepseek_v2",
        "moe_intermediate_size": 64,
        "moe_layer_freq": 1,
        "n_group": 1,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "norm_topk_prob": False,
        "num_attention_heads": 4,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 4,
        "num_key_value_heads": 4,
        "pretraining_tp": 1,
        "q_lora_rank": None,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 16,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "routed_scaling_factor": 1.0,
        "scoring_func": "softmax",
        "seq_aux": True,
        "tie_word_embeddings": False,
        "topk_group": 1,
        "topk_method": "greedy",
        "torch_dtype": "float32",
        "transformers_version": TRANSFORMERS_FORMAT_VERSION,
        "use_cache": True,
        "v_head_dim": 16,
        "vocab_size": vocab,
    }


def write_config(c, path):
    with open(path, "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------- safetensors (written by hand: no package)


def save_safetensors(tensors, path):
    """8-byte little-endian header length, JSON header (dtype, shape, data_offsets), raw bytes.
    Tensors in name order; header padded with spaces to a multiple of 8 bytes (as safetensors does)."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    off = 0
    for name in sorted(tensors):
        a = tensors[name].detach().cpu().to(torch.float32).contiguous().numpy().astype("<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32"
        s, e = meta["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + s : 8 + n + e], dtype="<f4").reshape(meta["shape"])
    return out


def count_params(tensors):
    return int(sum(math.prod(t.shape) for t in tensors.values()))
