import { describe, expect, it } from "vitest";
import { Rope, initMlaWeights, mlaAttention, randomMatrix } from "@randattn/core";
import { literalMla, relErr } from "./literal.js";

// Unmerged MLA against §4.2's formulas written as plain loops (literal.ts).
describe("mlaAttention matches the literal §4.2 formulas", () => {
  const base = { dIn: 10, numHeads: 3, latentDim: 4, queryLatentDim: 5, headDim: 6 };

  it("self-attention, d_V ≠ d_head, d_out ≠ d_in", () => {
    const w = initMlaWeights({ ...base, valueDim: 3, dOut: 7 }, [11, "mla-literal"]);
    const x = randomMatrix(6, 10, {}, [11, "x"]);
    expect(relErr(mlaAttention(x, x, w), literalMla(x, x, w))).toBeLessThan(1e-12);
  });

  it("cross-attention (N_Q ≠ N_KV) with a causal mask (offset N_KV − N_Q)", () => {
    const w = initMlaWeights(base, [11, "mla-literal-cross"]);
    const xQ = randomMatrix(3, 10, {}, [11, "xq"]);
    const xKV = randomMatrix(7, 10, {}, [11, "xkv"]);
    expect(relErr(mlaAttention(xQ, xKV, w), literalMla(xQ, xKV, w))).toBeLessThan(1e-12);
    expect(relErr(mlaAttention(xQ, xKV, w, { mask: { kind: "causal" } }), literalMla(xQ, xKV, w, { causal: true }))).toBeLessThan(1e-12);
  });

  it("decoupled RoPE (DeepSeek-V2): rotary parts appended, scale 1/√(d_head + d_R)", () => {
    const w = initMlaWeights({ ...base, ropeDim: 4 }, [11, "mla-literal-rope"]);
    const x = randomMatrix(6, 10, {}, [11, "x-rope"]);
    for (const pairing of ["interleaved", "half"] as const) {
      const rope = new Rope(4, { pairing });
      const got = mlaAttention(x, x, w, { rope, mask: { kind: "causal" } });
      expect(relErr(got, literalMla(x, x, w, { rope, causal: true }))).toBeLessThan(1e-12);
    }
    // explicit positions are honoured
    const rope = new Rope(4);
    const pos = [3, 9, 4, 0, 12, 5];
    const got = mlaAttention(x, x, w, { rope, queryPositions: pos, keyPositions: pos });
    expect(relErr(got, literalMla(x, x, w, { rope, queryPositions: pos, keyPositions: pos }))).toBeLessThan(1e-12);
  });

  it("naive RoPE (no rotary part) rotates the full Q_h, K_h", () => {
    const w = initMlaWeights(base, [11, "mla-literal-naive"]);
    const x = randomMatrix(5, 10, {}, [11, "x-naive"]);
    const rope = new Rope(6);
    expect(relErr(mlaAttention(x, x, w, { rope }), literalMla(x, x, w, { rope }))).toBeLessThan(1e-12);
  });
});
