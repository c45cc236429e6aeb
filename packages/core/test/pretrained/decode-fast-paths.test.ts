import { describe, expect, it } from "vitest";
import { LatentCache, type LatentDecodeCache, Matrix, NonFiniteError, PretrainedModel, withKernelBackend } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { fileURLToPath } from "node:url";
import { residentRowProductRuns, setResidentRowProducts } from "../../src/pretrained/residentGemv.js";
import { fixtureDir } from "./helpers.js";

// The decoding fast paths (bench:models, issue 14) skip per-step rescans and copies; these tests
// pin what they must keep: a NaN projection weight is still a typed error (now at construction),
// and the absorbed MLA form's joined [L | k_R] rows, kept next to the latent cache, equal the cache
// bit for bit however steps of the two forms interleave.
describe("decoding fast paths", () => {
  it("a non-finite GQA projection weight is a NonFiniteError naming it, at construction", () => {
    const m = loadPretrained(fixtureDir("llama-yarn"));
    const layers = m.weights.layers.map((layer, l) => {
      if (l !== 1 || layer.attention.kind !== "gqa") return layer;
      const queries = layer.attention.weights.queries.map((w, h) => {
        if (h !== 1) return w;
        const bad = new Matrix(w.rows, w.cols, w.data.slice());
        bad.data[5] = Number.NaN;
        return bad;
      });
      return { ...layer, attention: { ...layer.attention, weights: { ...layer.attention.weights, queries } } };
    });
    let err: unknown;
    try {
      new PretrainedModel(m.config, { ...m.weights, layers });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NonFiniteError);
    expect((err as NonFiniteError).argument).toBe("weights.layers[1].attention.weights.queries[1]");
  });

  // The same exact cache behind a wrapper that is not a LatentCache: the model then copies [L | k_R]
  // afresh on every step (the path before the kept rows existed) and attends head by head.
  const wrapped = (spec: { latentDim: number; ropeDim: number }): LatentDecodeCache => {
    const c = new LatentCache({ latentDim: spec.latentDim, ropeDim: spec.ropeDim });
    return {
      kind: "wrapped",
      latentDim: c.latentDim,
      ropeDim: c.ropeDim,
      get length() {
        return c.length;
      },
      get fill() {
        return c.fill;
      },
      append: (l, r, f) => c.append(l, r, f),
      latent: () => c.latent(),
      rotaryKeys: () => c.rotaryKeys(),
      floatsStored: () => c.floatsStored(),
      bitsStored: () => c.bitsStored(),
    };
  };

  it("absorbed MLA steps give the bits of a fresh [L | k_R] copy, however the forms interleave", () => {
    const m = loadPretrained(fixtureDir("deepseek-yarn"));
    const ids = [3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 32];
    const a = m.createState();
    const b = m.createState({ latentCacheFactory: wrapped });
    expect(Array.from(m.step(b, ids.slice(0, 3)).logits.data)).toEqual(Array.from(m.step(a, ids.slice(0, 3)).logits.data));
    for (let i = 3; i < ids.length; i++) {
      // every third step unmerged: the kept joined rows must then be rebuilt, not reused stale
      const mlaForm = i % 3 === 0 ? "unmerged" : "absorbed";
      const ya = m.step(a, [ids[i]], { mlaForm }).logits;
      const yb = m.step(b, [ids[i]], { mlaForm }).logits;
      expect(Array.from(ya.data)).toEqual(Array.from(yb.data));
    }
    // a rejected step (bad id) leaves both usable and equal
    expect(() => m.step(a, [m.vocabSize])).toThrow();
    const last = [m.step(a, [1], { mlaForm: "absorbed" }).logits, m.step(b, [1], { mlaForm: "absorbed" }).logits];
    expect(Array.from(last[0].data)).toEqual(Array.from(last[1].data));
  });

  // A decoded token's projections run on the weights resident in the model's arena (residentGemv.ts,
  // the gemv kernels) instead of JavaScript's few-rows kernels: every decoded logit must keep its
  // bits — GQA (Llama, tied LM head: the transposed product) and MLA + MoE (DeepSeek, both forms),
  // both precisions — and the resident path must really have run.
  it.each([
    ["llama-gqa-fortunes", "float64", "absorbed"],
    ["llama-gqa-fortunes", "float32", "absorbed"],
    ["deepseek-mla-fortunes", "float64", "absorbed"],
    ["deepseek-mla-fortunes", "float32", "absorbed"],
    ["deepseek-mla-fortunes", "float64", "unmerged"],
    ["deepseek-mla-fortunes", "float32", "unmerged"],
  ] as const)(
    "%s %s (%s MLA form): decoded logits on the resident one-row products have the JavaScript kernels' bits",
    (name, precision, mlaForm) => {
      const m = loadPretrained(fileURLToPath(new URL(`../../../../models/${name}`, import.meta.url)));
      const ids = Array.from({ length: 24 }, (_, i) => (i * 37 + 11) % m.vocabSize);
      const decode = () => {
        const state = m.createState();
        m.step(state, ids.slice(0, 12), { precision });
        return ids.slice(12).map((id) => m.step(state, [id], { precision, mlaForm }).logits.data);
      };
      const runs0 = residentRowProductRuns();
      const resident = decode();
      expect(residentRowProductRuns() - runs0).toBeGreaterThanOrEqual(12 * (m.numLayers * 3 + 1));
      const was = setResidentRowProducts(false);
      let scalar: Float64Array[];
      try {
        scalar = decode();
      } finally {
        setResidentRowProducts(was);
      }
      let mismatches = 0;
      for (let s = 0; s < resident.length; s++)
        for (let j = 0; j < resident[s].length; j++) if (!Object.is(resident[s][j], scalar[s][j])) mismatches++;
      expect(mismatches).toBe(0);
    },
  );

  // One GQA token: the H/G query heads of a group attend in one call, with the cache's running
  // max |K_g|, |V_g| and the heads' rows as views (model.ts attendHeads, gqaStep). An attention
  // override that declines (returns undefined) sends every head through its own attentionCachedKeys
  // call on copied rows with a rescan of K_g and V_g — the path before these changes — so every
  // decoded logit must agree bit for bit; the cache is long enough for some steps to be past the
  // fused driver's threshold for two rows but not for one (those stay per head).
  it.each(["float64", "float32"] as const)("a GQA token's grouped heads have the bits of one call per head (%s)", (precision) => {
    const m = loadPretrained(fileURLToPath(new URL("../../../../models/llama-gqa-fortunes", import.meta.url)));
    const ids = Array.from({ length: 140 }, (_, i) => (i * 29 + 3) % m.vocabSize);
    const decode = (attentionOverride?: () => undefined) => {
      const state = m.createState();
      m.step(state, ids.slice(0, 120), { precision, attentionOverride });
      return ids.slice(120).map((id) => m.step(state, [id], { precision, attentionOverride }).logits.data);
    };
    const grouped = decode();
    const perHead = decode(() => undefined);
    let mismatches = 0;
    for (let s = 0; s < grouped.length; s++)
      for (let j = 0; j < grouped[s].length; j++) if (!Object.is(grouped[s][j], perHead[s][j])) mismatches++;
    expect(mismatches).toBe(0);
  });

  it.each(["float64", "float32"] as const)(
    "one token's absorbed MLA heads in one attention call have the bits of one call per head (%s)",
    (precision) => {
      // The shipped DeepSeek model (H = 4) on the WebAssembly kernels, so that even these short
      // caches take the fused driver and the H query rows go through one call (model.ts mlaStep);
      // the wrapped cache attends head by head. Every decoded token's logits must agree bit for bit.
      const m = loadPretrained(fileURLToPath(new URL("../../../../models/deepseek-mla-fortunes", import.meta.url)));
      const ids = Array.from({ length: 30 }, (_, i) => (i * 41 + 7) % m.vocabSize);
      withKernelBackend("wasm", () => {
        const a = m.createState();
        const b = m.createState({ latentCacheFactory: wrapped });
        m.step(a, ids.slice(0, 20), { precision });
        m.step(b, ids.slice(0, 20), { precision });
        for (let i = 20; i < ids.length; i++) {
          const ya = m.step(a, [ids[i]], { precision, mlaForm: "absorbed" }).logits;
          const yb = m.step(b, [ids[i]], { precision, mlaForm: "absorbed" }).logits;
          expect(Array.from(ya.data)).toEqual(Array.from(yb.data));
        }
      });
    },
  );
});
