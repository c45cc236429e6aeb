// §2.1 with weights: Q = X_Q W_Q, K = X_K W_K, V = X_V W_V, Y = Z⁻¹AV — for self-attention
// (X_Q = X_K = X_V) and cross-attention (queries from another source, N_Q ≠ N_KV, d_QK ≠ d_V,
// and different input widths for the two sources).
import { describe, expect, it } from "vitest";
import { crossAttention, initWeight, projectedAttention, randomMatrix, selfAttention } from "@randattn/core";
import { expKappa, literalAttention, literalMatmul, relErr, rows } from "./reference.js";

describe("projected attention = literal formula", () => {
  it("general X_Q, X_K, X_V (three sources, three input widths)", () => {
    const xQ = randomMatrix(5, 6, {}, [19, "xq"]);
    const xK = randomMatrix(8, 4, {}, [19, "xk"]);
    const xV = randomMatrix(8, 7, {}, [19, "xv"]);
    const w = { query: initWeight(6, 3, {}, [19, "wq"]), key: initWeight(4, 3, {}, [19, "wk"]), value: initWeight(7, 2, {}, [19, "wv"]) };
    const q = literalMatmul(rows(xQ), rows(w.query));
    const k = literalMatmul(rows(xK), rows(w.key));
    const v = literalMatmul(rows(xV), rows(w.value));
    const ref = literalAttention(q, k, v, expKappa(1 / Math.sqrt(3)));
    const y = projectedAttention(xQ, xK, xV, w);
    expect([y.rows, y.cols]).toEqual([5, 2]);
    expect(relErr(y, ref.y)).toBeLessThan(1e-12);
    expect(relErr(projectedAttention(xQ, xK, xV, w, { algorithm: "streaming", blockSize: 3 }), ref.y)).toBeLessThan(1e-12);
  });

  it("cross-attention: N_Q ≠ N_KV, keys and values from one other source", () => {
    const dec = randomMatrix(3, 5, {}, [20, "dec"]);
    const enc = randomMatrix(11, 9, {}, [20, "enc"]);
    const w = { query: initWeight(5, 4, {}, [20, "wq"]), key: initWeight(9, 4, {}, [20, "wk"]), value: initWeight(9, 6, {}, [20, "wv"]) };
    const ref = literalAttention(
      literalMatmul(rows(dec), rows(w.query)),
      literalMatmul(rows(enc), rows(w.key)),
      literalMatmul(rows(enc), rows(w.value)),
      expKappa(0.5),
    );
    const y = crossAttention(dec, enc, w);
    expect([y.rows, y.cols]).toEqual([3, 6]);
    expect(relErr(y, ref.y)).toBeLessThan(1e-12);
  });

  it("self-attention with a causal mask", () => {
    const x = randomMatrix(7, 4, {}, [21, "x"]);
    const w = { query: initWeight(4, 2, {}, [21, "wq"]), key: initWeight(4, 2, {}, [21, "wk"]), value: initWeight(4, 3, {}, [21, "wv"]) };
    const xr = rows(x);
    const ref = literalAttention(
      literalMatmul(xr, rows(w.query)),
      literalMatmul(xr, rows(w.key)),
      literalMatmul(xr, rows(w.value)),
      expKappa(1 / Math.sqrt(2)),
      (i, j) => j <= i,
    );
    expect(relErr(selfAttention(x, w, { mask: { kind: "causal" } }), ref.y)).toBeLessThan(1e-12);
  });
});
