import { SingularValueDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  type Mask,
  concatCols,
  initMlaWeights,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  mlaToMultiHead,
  multiHeadAttention,
  randomMatrix,
} from "@randattn/core";
import { relErr } from "./literal.js";

// §4.2: without positional rotation, MLA merged = MLA unmerged = its low-rank MHA, to rounding.
describe("MLA merged = unmerged = low-rank MHA", () => {
  const cases = [
    { name: "d_V = d_head", cfg: { dIn: 16, numHeads: 4, latentDim: 6, queryLatentDim: 8, headDim: 5 } },
    {
      name: "d_V ≠ d_head, d_out ≠ d_in, d_L > d_head",
      cfg: { dIn: 12, numHeads: 3, latentDim: 10, queryLatentDim: 4, headDim: 3, valueDim: 7, dOut: 5 },
    },
  ];
  const masks: (Mask | undefined)[] = [undefined, { kind: "causal" }];
  for (const { name, cfg } of cases) {
    for (const mask of masks) {
      for (const [nQ, nKV] of [
        [7, 7],
        [3, 9],
      ]) {
        it(`${name}, N_Q=${nQ}, N_KV=${nKV}, mask=${mask?.kind ?? "none"}`, () => {
          const w = initMlaWeights(cfg, [13, "equiv", name]);
          const xKV = randomMatrix(nKV, cfg.dIn, {}, [13, "xkv", nKV]);
          const xQ = nQ === nKV ? xKV : randomMatrix(nQ, cfg.dIn, {}, [13, "xq", nQ]);
          const opts = mask ? { mask } : {};
          const unmerged = mlaAttention(xQ, xKV, w, opts);
          const merged = mergedMlaAttention(xQ, xKV, mergeMla(w), opts);
          const mha = multiHeadAttention(xQ, xKV, mlaToMultiHead(w), opts);
          expect(merged.shape).toBe(`${nQ}×${cfg.dOut ?? cfg.dIn}`);
          expect(relErr(merged, unmerged)).toBeLessThan(1e-12);
          expect(relErr(mha, unmerged)).toBeLessThan(1e-12);
        });
      }
    }
  }

  it("the low-rank MHA weights are the factor products: stacked W_K has rank d_L < H·d_head", () => {
    const cfg = cases[0].cfg;
    const w = initMlaWeights(cfg, [13, "rank"]);
    const mha = mlaToMultiHead(w);
    expect(mha.queries.length).toBe(cfg.numHeads);
    expect(mha.keys.length).toBe(cfg.numHeads);
    expect(mha.keys[0].shape).toBe(`${cfg.dIn}×${cfg.headDim}`);
    for (const stacked of [concatCols(mha.keys), concatCols(mha.values)]) {
      const sv = new SingularValueDecomposition(stacked.toMlMatrix(), { autoTranspose: true }).diagonal;
      expect(sv.filter((s) => s > sv[0] * 1e-12).length).toBe(cfg.latentDim);
    }
  });
});
