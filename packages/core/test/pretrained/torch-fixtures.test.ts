import { describe, expect, it } from "vitest";
import {
  type LayerCapture,
  Matrix,
  type PretrainedModel,
  applyNorm,
  attentionWeights,
  concatCols,
  matmul,
  matmulTransB,
  mlaAttention,
  multiHeadAttention,
  tieKvHeads,
} from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { fixtureDir, reference, relError, stack } from "./helpers.js";

// Hand-built checkpoints of every family (scripts/models/make_fixtures.py) against torch forward
// passes written from transformers' modeling code, in float64 from the stored (rounded) weights.
// Measured max relative logit error: ≤ 1e-15 (see the report). Both sides compute the same
// float64 products in different summation orders (torch's BLAS vs core's tiled kernels) and call
// different libm cos/sin/exp: each op adds ≲ 1 ulp times the reduction length (≤ 48 here) per
// layer, so ≈ 2 layers · 48 · 2.2e-16 ≈ 2e-14 at worst. 1e-12 keeps a margin of 50 over that and
// still fails on any real mistake (a transposed weight, a wrong ε or a float32 slip gives ≥ 1e-8).
const TOL = 1e-12;

const FIXTURES = [
  "llama-tied-llama3",
  "llama-untied-bf16",
  "qwen2-bias-f16",
  "gpt2-sharded",
  "deepseek-dense-qlora",
  "deepseek-moe-bf16",
  // YaRN against transformers' _compute_yarn_parameters (ramp over [beta_fast, beta_slow], attention
  // factor on cos/sin, DeepSeek's mscale/mscale_all_dim and softmax mscale²).
  "llama-yarn",
  "deepseek-yarn",
] as const;

const models = new Map<string, PretrainedModel>();
function model(name: string): PretrainedModel {
  let m = models.get(name);
  if (!m) {
    m = loadPretrained(fixtureDir(name));
    models.set(name, m);
  }
  return m;
}

describe.each(FIXTURES)("%s against torch", (name) => {
  const ref = reference(name);
  const ids = Array.from(ref.get("ids")!.data);

  it("logits, hidden states and every captured tensor equal torch's", () => {
    const m = model(name);
    const out = m.forward(ids, { capture: {} });
    const logitErr = relError(out.logits.data, ref.get("logits")!.data);
    expect(logitErr).toBeLessThan(TOL);
    expect(relError(out.hidden.data, ref.get(`hidden.${m.numLayers}`)!.data)).toBeLessThan(TOL);
    for (const cap of out.layers) {
      const l = cap.layer;
      expect(relError(cap.hidden!.data, ref.get(`hidden.${l}`)!.data), `hidden.${l}`).toBeLessThan(TOL);
      for (const t of ["q", "k", "v", "weights", "qPre", "kPre"] as const) {
        const r = ref.get(`layer${l}.${t}`);
        if (!r) continue;
        expect(relError(stack(cap[t]!), r.data), `layer${l}.${t}`).toBeLessThan(TOL);
      }
      for (const t of ["latent", "rotaryKey"] as const) {
        const r = ref.get(`layer${l}.${t}`);
        if (r) expect(relError(cap[t]!.data, r.data), `layer${l}.${t}`).toBeLessThan(TOL);
      }
      const experts = ref.get(`layer${l}.routerExperts`);
      if (experts) {
        expect(cap.router!.experts.flat()).toEqual(Array.from(experts.data));
        expect(relError(cap.router!.weights.flat(), ref.get(`layer${l}.routerWeights`)!.data)).toBeLessThan(TOL);
      }
    }
  });

  it("greedy generation equals torch's token for token, cached and uncached", () => {
    const m = model(name);
    const expected = Array.from(ref.get("greedy")!.data);
    expect(m.generate(ids, { maxNewTokens: expected.length })).toEqual(expected);
    expect(m.generate(ids, { maxNewTokens: expected.length, useCache: false })).toEqual(expected);
  });

  it("cached decoding (prefill 3, then one token at a time) equals the full forward", () => {
    const m = model(name);
    const full = m.forward(ids).logits;
    const state = m.createState();
    const rows = [m.step(state, ids.slice(0, 3)).logits];
    for (let i = 3; i < ids.length; i++) rows.push(m.step(state, [ids[i]]).logits);
    const stepped = new Float64Array(full.data.length);
    let o = 0;
    for (const r of rows) {
      stepped.set(r.data, o);
      o += r.data.length;
    }
    expect(relError(stepped, full.data)).toBeLessThan(TOL);
    expect(state.position).toBe(ids.length);
  });

  it.runIf(name.startsWith("deepseek"))("the absorbed MLA form (attending to the cached latent) equals torch's logits", () => {
    const m = model(name);
    expect(relError(m.forward(ids, { mlaForm: "absorbed" }).logits.data, ref.get("logits")!.data)).toBeLessThan(TOL);
    const state = m.createState();
    m.step(state, ids.slice(0, 4));
    const last = ids.slice(4).map((id) => m.step(state, [id], { mlaForm: "absorbed" }).logits.row(0));
    const want = ref.get("logits")!.data.slice(4 * m.vocabSize);
    expect(relError(Float64Array.from(last.flatMap((r) => Array.from(r))), want)).toBeLessThan(TOL);
  });

  it("the float32 option (attention and projections in float32) stays within float32 rounding of the float64 logits", () => {
    const m = model(name);
    const err = relError(m.forward(ids, { precision: "float32" }).logits.data, ref.get("logits")!.data);
    // f32 attention over ≤ 8 keys and d ≤ 16, and f32 projections/FFNs/LM head over k ≤ 48 (each
    // entry ≤ (k + 4)·u₃₂ ≈ 3e-6 worst case, ≈ √k·u₃₂ ≈ 4e-7 typically), amplified by ≤ 2 layers.
    // Measured 2.5e-7 … 8.8e-7 (1.1e-7 … 4e-7 with float64 projections); a float64 slip gives ≈ 1e-15.
    expect(err).toBeLessThan(1e-5);
    expect(err).toBeGreaterThan(1e-9);
  });
});

/** The attention sublayer output Σ_h P_h V_{g(h)} W_O (+ bias) rebuilt from a layer's captures. */
function attentionFromCaptures(cap: LayerCapture, output: Matrix): Matrix {
  const H = cap.weights!.length;
  const G = cap.v!.length;
  const heads = cap.weights!.map((p, h) => matmul(p, cap.v![Math.floor(h / (H / G))]));
  return matmul(concatCols(heads), output);
}

describe("identities on the loaded models", () => {
  it("a Llama layer is core's multiHeadAttention (GQA), and GQA = MHA with tied KV heads", () => {
    const m = model("llama-tied-llama3");
    const ids = Array.from(reference("llama-tied-llama3").get("ids")!.data);
    const cap = m.forward(ids, { capture: { layers: [1] } }).layers[0];
    const layer = m.weights.layers[1];
    if (layer.attention.kind !== "gqa") throw new Error("expected GQA");
    const xn = applyNorm(cap.hidden!, layer.inputNorm);
    const opts = {
      rope: layer.attention.rope,
      mask: { kind: "causal" as const },
      kernel: { kind: "softmax" as const, scale: layer.attention.scale },
    };
    const gqa = multiHeadAttention(xn, xn, layer.attention.weights, opts);
    const mha = multiHeadAttention(xn, xn, tieKvHeads(layer.attention.weights), opts);
    const fromCaptures = attentionFromCaptures(cap, layer.attention.weights.output);
    expect(layer.attention.weights.keys.length).toBe(2);
    expect(relError(gqa.data, fromCaptures.data)).toBeLessThan(TOL);
    expect(relError(mha.data, gqa.data)).toBeLessThan(TOL);
  });

  it("a DeepSeek layer is core's mlaAttention, and its scores are the absorbed latent form (q W_LKᵀ) Lᵀ + q_R k_Rᵀ", () => {
    const m = model("deepseek-dense-qlora");
    const ids = Array.from(reference("deepseek-dense-qlora").get("ids")!.data);
    const cap = m.forward(ids, { capture: { layers: [0] } }).layers[0];
    const layer = m.weights.layers[0];
    if (layer.attention.kind !== "mla") throw new Error("expected MLA");
    const a = layer.attention;
    const xn = applyNorm(cap.hidden!, layer.inputNorm);
    const y = mlaAttention(xn, xn, a.weights, { rope: a.rope, mask: { kind: "causal" }, kernel: { kind: "softmax", scale: a.scale } });
    expect(relError(y.data, attentionFromCaptures(cap, a.weights.output).data)).toBeLessThan(TOL);
    const nope = a.weights.queryUp[0].cols;
    const dR = a.weights.keyRope!.cols;
    for (let h = 0; h < a.weights.queryUp.length; h++) {
      const q = cap.q![h];
      const qNope = Matrix.from(q.rows, nope, (i, j) => q.get(i, j));
      const qRot = Matrix.from(q.rows, dR, (i, j) => q.get(i, nope + j));
      // W_LK^h is d_L×d_head, so q_nope (W_LK^h)ᵀ is a d_L-wide query against the cached latent.
      const absorbed = matmulTransB(qNope, a.weights.keyUp[h]);
      const merged = attentionWeights(concatCols([absorbed, qRot]), concatCols([cap.latent!, cap.rotaryKey!]), {
        mask: { kind: "causal" },
        kernel: { kind: "softmax", scale: a.scale },
      });
      expect(relError(merged.data, cap.weights![h].data)).toBeLessThan(TOL);
    }
  });
});
