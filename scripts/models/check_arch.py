"""Identity checks of the torch reference models (scripts/models/arch.py), float64.

  /usr/bin/python3 scripts/models/check_arch.py [MODELS_DIR]

1. GQA = MHA with each KV head repeated for its query group (HF repeat_kv).
2. DeepSeek's interleaved->half permutation + rotate_half equals transformers'
   complex-number rotation of interleaved pairs (modeling_deepseek_v2.apply_rotary_emb):
   same rotated vectors up to the permutation, hence the same attention scores.
3. MLA: scores from the naive (decompressed) keys equal the absorbed form
   q_nope^T W_UK c (the paper's latent attention), with the latent RMSNorm applied to c.
4. safetensors writer/reader round trip; with MODELS_DIR, the shipped checkpoints load
   with every tensor and the fixtures' logits are reproduced.
Exits non-zero on any failure.
"""

import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402

torch.set_num_threads(1)
torch.manual_seed(0)
failures = []


def check(name, err, tol):
    ok = err <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {err:.3e} (tol {tol:.0e})")
    if not ok:
        failures.append(name)


def gqa_identity():
    c = arch.llama_config(64, 63)
    c.update(num_hidden_layers=1)
    m = arch.CausalLM(c).double()
    att = m.model.layers[0].self_attn
    mha_c = dict(c, num_key_value_heads=c["num_attention_heads"])
    mha = arch.LlamaAttention(mha_c).double()
    rep = c["num_attention_heads"] // c["num_key_value_heads"]
    d = c["head_dim"]
    with torch.no_grad():
        mha.q_proj.weight.copy_(att.q_proj.weight)
        mha.o_proj.weight.copy_(att.o_proj.weight)
        for name in ("k_proj", "v_proj"):
            w = getattr(att, name).weight.view(c["num_key_value_heads"], d, -1)
            getattr(mha, name).weight.copy_(w.repeat_interleave(rep, dim=0).reshape(-1, w.shape[-1]))
        x = torch.randn(2, 11, c["hidden_size"], dtype=torch.float64)
        cos, sin = arch.rope_cos_sin(d, c["rope_theta"], 11, torch.float64)
        a, b = att(x, cos, sin), mha(x, cos, sin)
    check("GQA = MHA with repeated KV heads", (a - b).abs().max().item() / b.abs().max().item(), 1e-14)


def deepseek_rope_identity():
    d, n, theta = 16, 13, 10000.0
    q = torch.randn(2, 3, n, d, dtype=torch.float64)
    k = torch.randn(2, 1, n, d, dtype=torch.float64)
    cos, sin = arch.rope_cos_sin(d, theta, n, torch.float64)
    qh = arch.interleaved_to_half(q)
    kh = arch.interleaved_to_half(k)
    q1 = qh * cos + arch.rotate_half(qh) * sin
    k1 = kh * cos + arch.rotate_half(kh) * sin
    # transformers' form: interleaved pairs as complex numbers times e^{i m θ_j}
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = torch.outer(torch.arange(n, dtype=torch.float64), inv)
    rot = torch.polar(torch.ones_like(ang), ang)
    q2 = torch.view_as_real(torch.view_as_complex(q.reshape(2, 3, n, d // 2, 2).contiguous()) * rot).flatten(3)
    k2 = torch.view_as_real(torch.view_as_complex(k.reshape(2, 1, n, d // 2, 2).contiguous()) * rot).flatten(3)
    check("DeepSeek permutation+rotate_half = complex rotation (vectors, permuted)",
          (q1 - arch.interleaved_to_half(q2)).abs().max().item(), 1e-14)
    s1 = q1 @ k1.transpose(-1, -2)
    s2 = q2 @ k2.transpose(-1, -2)
    check("DeepSeek permutation+rotate_half = complex rotation (scores)", (s1 - s2).abs().max().item(), 1e-13)
    # RoPE is relative: <R_m q, R_n k> depends on m - n only
    q0 = q[:, :, :1].expand(2, 3, n, d)
    k0 = k[:, :, :1].expand(2, 1, n, d)
    qh0, kh0 = arch.interleaved_to_half(q0), arch.interleaved_to_half(k0)
    qr = qh0 * cos + arch.rotate_half(qh0) * sin
    kr = kh0 * cos + arch.rotate_half(kh0) * sin
    s = (qr[:, :, 1:] * kr[:, :, :-1]).sum(-1)
    check("RoPE relative-position invariance", (s - s[..., :1]).abs().max().item(), 1e-13)


def mla_absorbed_identity():
    c = arch.deepseek_config(64, 63)
    c.update(num_hidden_layers=1, first_k_dense_replace=1)
    m = arch.CausalLM(c).double()
    att = m.model.layers[0].self_attn
    n, h = 9, c["num_attention_heads"]
    nope, rope, vd, r = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
    with torch.no_grad():
        x = torch.randn(1, n, c["hidden_size"], dtype=torch.float64)
        q = att.q_proj(x).view(1, n, h, nope + rope).transpose(1, 2)[..., :nope]
        lat = att.kv_a_layernorm(att.kv_a_proj_with_mqa(x)[..., :r])  # [1, n, r]
        kv = att.kv_b_proj(lat).view(1, n, h, nope + vd).transpose(1, 2)
        naive = q @ kv[..., :nope].transpose(-1, -2)
        w_uk = att.kv_b_proj.weight.view(h, nope + vd, r)[:, :nope]  # [h, nope, r]
        absorbed = (q @ w_uk) @ lat.transpose(-1, -2)
    check("MLA absorbed scores = naive scores", (naive - absorbed).abs().max().item() / naive.abs().max().item(), 1e-14)


def safetensors_roundtrip():
    c = arch.deepseek_config(64, 63)
    m = arch.CausalLM(c)
    t = m.state_for_disk()
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.safetensors")
        arch.save_safetensors(t, p)
        back = arch.load_safetensors(p)
        with open(p, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
        err = max(float(np.abs(back[k] - t[k].numpy()).max()) for k in t)
        check("safetensors round trip (and header length % 8 == 0)", err + (n % 8), 0)


def shipped(models_dir):
    for folder in sorted(os.listdir(models_dir)):
        p = os.path.join(models_dir, folder)
        if not os.path.exists(os.path.join(p, "config.json")):
            continue
        with open(os.path.join(p, "config.json")) as f:
            c = json.load(f)
        m = arch.CausalLM(c)
        m.load_from_disk(arch.load_safetensors(os.path.join(p, "model.safetensors")))
        m = m.double().eval()
        with open(os.path.join(p, "fixtures", "meta.json")) as f:
            meta = json.load(f)
        for pr in meta["prompts"]:
            ids = np.load(os.path.join(p, "fixtures", pr["files"]["ids"]))
            want = np.load(os.path.join(p, "fixtures", pr["files"]["logits"]))
            with torch.no_grad():
                got = m(torch.from_numpy(ids)[None])[0].numpy()
            check(f"{folder} prompt {pr['index']} logits reproduced", float(np.abs(got - want).max() / np.abs(want).max()), 1e-12)
        # The KV-cached decoding bench_torch.py times (HF-style cache, MoE dispatch) = the full forward.
        ids = torch.from_numpy(np.load(os.path.join(p, "fixtures", meta["prompts"][0]["files"]["ids"])))[None]
        for mod in m.modules():
            if isinstance(mod, arch.DeepseekV2MoE):
                mod.dispatch = True
        with torch.no_grad():
            full = m(ids)
            cache = {}
            rows = [m(ids[:, :3], cache=cache)] + [m(ids[:, i : i + 1], cache=cache) for i in range(3, ids.shape[1])]
        stepped = torch.cat(rows, dim=1)
        check(f"{folder} cached decoding = full forward", ((stepped - full).abs().max() / full.abs().max()).item(), 1e-14)


if __name__ == "__main__":
    gqa_identity()
    deepseek_rope_identity()
    mla_absorbed_identity()
    safetensors_roundtrip()
    if len(sys.argv) > 1:
        shipped(sys.argv[1])
    sys.exit(1 if failures else 0)
