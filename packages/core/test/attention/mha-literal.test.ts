// Multi-head attention (§2.2) against the literal per-head loops: every head projects the full
// X (never a split of X), Y_h = Z_h⁻¹A_hV_h, Y = concat_col(Y_h) W_O.
import { describe, expect, it } from "vitest";
import { initMultiHeadWeights, multiHeadAttention, randomMatrix } from "@randattn/core";
import { expKappa, literalAttention, literalConcatCols, literalMatmul, relErr, rows } from "./reference.js";

describe("multiHeadAttention = literal per-head formula", () => {
  for (const [nQ, nKV, dIn, H, dh, dv, dOut] of [
    [4, 4, 6, 2, 3, 3, 6],
    [3, 7, 5, 3, 2, 4, 2],
    [5, 6, 8, 4, 5, 1, 9],
  ]) {
    it(`N_Q=${nQ} N_KV=${nKV} d_in=${dIn} H=${H} d_head=${dh} d_V=${dv} d_out=${dOut}`, () => {
      const w = initMultiHeadWeights({ dIn, numHeads: H, headDim: dh, valueDim: dv, dOut }, [22, nQ, nKV]);
      const xQ = randomMatrix(nQ, dIn, {}, [22, "xq", nQ]);
      const xKV = randomMatrix(nKV, dIn, {}, [22, "xkv", nKV]);
      for (const mask of [undefined, { kind: "causal" as const }]) {
        const heads = Array.from({ length: H }, (_, h) => {
          const q = literalMatmul(rows(xQ), rows(w.queries[h]));
          const k = literalMatmul(rows(xKV), rows(w.keys[h]));
          const v = literalMatmul(rows(xKV), rows(w.values[h]));
          return literalAttention(q, k, v, expKappa(1 / Math.sqrt(dh)), mask ? (i, j) => j <= nKV - nQ + i : undefined).y;
        });
        const ref = literalMatmul(literalConcatCols(heads), rows(w.output));
        const y = multiHeadAttention(xQ, xKV, w, { mask });
        expect([y.rows, y.cols]).toEqual([nQ, dOut]);
        expect(relErr(y, ref)).toBeLessThan(1e-12);
        expect(relErr(multiHeadAttention(xQ, xKV, w, { mask, algorithm: "streaming", blockSize: 2 }), ref)).toBeLessThan(1e-12);
      }
    });
  }
});
