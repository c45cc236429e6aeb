import { describe, expect, it } from "vitest";
import {
  KVCache,
  LatentCache,
  Rope,
  initMlaWeights,
  initMultiHeadWeights,
  mergeMla,
  mlaDecode,
  multiHeadDecode,
  randomMatrix,
} from "@randattn/core";

// Table 1 / notes: per token and layer the cache holds 2·G·d_head floats (MHA G = H, MQA G = 1)
// and MLA d_L, or d_L + d_R with the decoupled rotary key (ERRATA).
describe("floats stored per token", () => {
  const x = randomMatrix(5, 16, {}, [24, "x"]);

  for (const numKvHeads of [8, 2, 1]) {
    it(`GQA with G=${numKvHeads}: 2·G·d_head per token`, () => {
      const headDim = 4;
      const w = initMultiHeadWeights({ dIn: 16, numHeads: 8, numKvHeads, headDim }, [24, "w", numKvHeads]);
      const cache = new KVCache({ numKvHeads, keyDim: headDim, valueDim: headDim });
      multiHeadDecode(x, w, cache, { rope: new Rope(headDim) });
      expect(cache.floatsPerToken).toBe(2 * numKvHeads * headDim);
      expect(cache.floatsStored()).toBe(5 * 2 * numKvHeads * headDim);
      // H/G times smaller than MHA's 2·H·d_head
      expect((2 * 8 * headDim) / cache.floatsPerToken).toBe(8 / numKvHeads);
    });
  }

  it("MLA: d_L without, d_L + d_R with decoupled RoPE", () => {
    for (const ropeDim of [0, 2]) {
      const latentDim = 6;
      const w = initMlaWeights({ dIn: 16, numHeads: 8, latentDim, queryLatentDim: 5, headDim: 4, ropeDim }, [24, "mla", ropeDim]);
      const cache = new LatentCache({ latentDim, ropeDim });
      mlaDecode(x, mergeMla(w), cache, ropeDim ? { rope: new Rope(ropeDim) } : {});
      expect(cache.floatsPerToken).toBe(latentDim + ropeDim);
      expect(cache.floatsStored()).toBe(5 * (latentDim + ropeDim));
    }
  });

  it("at the paper's sizes: Llama 3 70B 2·8·128, DeepSeek V2 512 (+64) vs MHA 2·128·128", () => {
    expect(new KVCache({ numKvHeads: 8, keyDim: 128, valueDim: 128, initialCapacity: 1 }).floatsPerToken).toBe(2 * 8 * 128);
    expect(new LatentCache({ latentDim: 512, initialCapacity: 1 }).floatsPerToken).toBe(512);
    expect(new LatentCache({ latentDim: 512, ropeDim: 64, initialCapacity: 1 }).floatsPerToken).toBe(512 + 64);
    const mha = new KVCache({ numKvHeads: 128, keyDim: 128, valueDim: 128, initialCapacity: 1 }).floatsPerToken;
    expect(mha / 512).toBe(64); // the notes' "64× smaller" — 2·128·128 / 512
  });
});
