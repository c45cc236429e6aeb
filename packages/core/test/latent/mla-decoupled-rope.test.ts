import { describe, expect, it } from "vitest";
import { Rope, initMlaWeights, mergeMla, mergedMlaAttention, mlaAttention, randomMatrix } from "@randattn/core";
import { relErr } from "./literal.js";

// DeepSeek-V2's decoupled RoPE: the rotary part is concatenated to the merged vectors, so the
// latent part still merges exactly (paper §4.2, notes).
describe("decoupled-RoPE MLA: merged = unmerged", () => {
  const cfg = { dIn: 12, numHeads: 3, latentDim: 5, queryLatentDim: 6, headDim: 4, ropeDim: 4, valueDim: 3 };
  const w = initMlaWeights(cfg, [14, "decoupled"]);
  const merged = mergeMla(w);

  for (const pairing of ["interleaved", "half"] as const) {
    for (const [nQ, nKV] of [
      [8, 8],
      [2, 8],
    ]) {
      it(`${pairing} pairing, N_Q=${nQ}, N_KV=${nKV}, causal`, () => {
        const rope = new Rope(cfg.ropeDim, { pairing });
        const xKV = randomMatrix(nKV, cfg.dIn, {}, [14, "xkv", nKV]);
        const xQ = randomMatrix(nQ, cfg.dIn, {}, [14, "xq", nQ]);
        const opts = { rope, mask: { kind: "causal" as const } };
        const u = mlaAttention(xQ, xKV, w, opts);
        expect(relErr(mergedMlaAttention(xQ, xKV, merged, opts), u)).toBeLessThan(1e-12);
        // the rotation is not a no-op: without it the outputs differ
        expect(relErr(mlaAttention(xQ, xKV, w, { mask: { kind: "causal" } }), u)).toBeGreaterThan(1e-3);
      });
    }
  }

  it("explicit positions and an unrotated rotary part also merge exactly", () => {
    const rope = new Rope(cfg.ropeDim);
    const x = randomMatrix(6, cfg.dIn, {}, [14, "x-pos"]);
    const pos = [10, 11, 12, 13, 14, 15];
    const opts = { rope, queryPositions: pos, keyPositions: pos };
    expect(relErr(mergedMlaAttention(x, x, merged, opts), mlaAttention(x, x, w, opts))).toBeLessThan(1e-12);
    expect(relErr(mergedMlaAttention(x, x, merged), mlaAttention(x, x, w))).toBeLessThan(1e-12);
    // a global shift of all positions leaves the scores unchanged (relative-position identity)
    const shifted = mlaAttention(x, x, w, opts);
    expect(relErr(mlaAttention(x, x, w, { rope }), shifted)).toBeLessThan(1e-12);
  });
});
