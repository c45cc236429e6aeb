// GQA / MQA (§4.1, study notes): query head h uses KV head g(h) = ⌊h/(H/G)⌋ (0-based, ERRATA).
// Identities: G = H is MHA; GQA = MHA with tied (repeated) KV heads; MQA is G = 1; G ∤ H is an error.
import { describe, expect, it } from "vitest";
import { ValueError, initMultiHeadWeights, kvHeadFor, multiHeadAttention, randomMatrix, tieKvHeads } from "@randattn/core";
import { expKappa, literalAttention, literalConcatCols, literalMatmul, relErr, rows } from "./reference.js";

const dIn = 6;
const dh = 3;
const xQ = randomMatrix(5, dIn, {}, [23, "xq"]);
const xKV = randomMatrix(7, dIn, {}, [23, "xkv"]);

/** Literal grouped attention: head h reads keys/values of KV head group(h). */
function literalGrouped(w: ReturnType<typeof initMultiHeadWeights>, group: (h: number) => number) {
  const heads = w.queries.map((wq, h) => {
    const q = literalMatmul(rows(xQ), rows(wq));
    const k = literalMatmul(rows(xKV), rows(w.keys[group(h)]));
    const v = literalMatmul(rows(xKV), rows(w.values[group(h)]));
    return literalAttention(q, k, v, expKappa(1 / Math.sqrt(dh))).y;
  });
  return literalMatmul(literalConcatCols(heads), rows(w.output));
}

describe("GQA group map", () => {
  it("g(h) = ⌊h/(H/G)⌋: contiguous groups", () => {
    expect(Array.from({ length: 8 }, (_, h) => kvHeadFor(h, 8, 2))).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(Array.from({ length: 6 }, (_, h) => kvHeadFor(h, 6, 3))).toEqual([0, 0, 1, 1, 2, 2]);
    expect(Array.from({ length: 4 }, (_, h) => kvHeadFor(h, 4, 4))).toEqual([0, 1, 2, 3]);
    expect(Array.from({ length: 4 }, (_, h) => kvHeadFor(h, 4, 1))).toEqual([0, 0, 0, 0]);
  });

  it("H not divisible by G is a ValueError naming numKvHeads", () => {
    expect(() => kvHeadFor(0, 6, 4)).toThrow(ValueError);
    expect(() => kvHeadFor(0, 6, 4)).toThrow(/numKvHeads: expected a divisor of numHeads = 6.*got 4/);
    expect(() => initMultiHeadWeights({ dIn, numHeads: 6, numKvHeads: 4, headDim: dh }, [1])).toThrow(/init\.numKvHeads/);
    const w = initMultiHeadWeights({ dIn, numHeads: 6, numKvHeads: 2, headDim: dh }, [1]);
    w.keys.push(w.keys[0].clone());
    w.values.push(w.values[0].clone());
    w.keys.push(w.keys[0].clone());
    w.values.push(w.values[0].clone()); // 4 KV heads for 6 query heads
    expect(() => multiHeadAttention(xQ, xKV, w)).toThrow(/weights\.numKvHeads: expected a divisor of numHeads = 6/);
  });
});

describe("GQA identities", () => {
  it("GQA (H = 6, G = 2) = literal grouped formula", () => {
    const w = initMultiHeadWeights({ dIn, numHeads: 6, numKvHeads: 2, headDim: dh }, [24]);
    expect(
      relErr(
        multiHeadAttention(xQ, xKV, w),
        literalGrouped(w, (h) => Math.floor(h / 3)),
      ),
    ).toBeLessThan(1e-12);
  });

  it("G = H is MHA: each head its own K/V", () => {
    const w = initMultiHeadWeights({ dIn, numHeads: 4, numKvHeads: 4, headDim: dh }, [25]);
    expect(
      relErr(
        multiHeadAttention(xQ, xKV, w),
        literalGrouped(w, (h) => h),
      ),
    ).toBeLessThan(1e-12);
  });

  it("GQA = MHA with tied (repeated) KV heads", () => {
    for (const [H, G] of [
      [4, 2],
      [6, 3],
      [6, 1],
    ]) {
      const w = initMultiHeadWeights({ dIn, numHeads: H, numKvHeads: G, headDim: dh, valueDim: 2, dOut: 5 }, [26, H, G]);
      const tied = tieKvHeads(w);
      expect(tied.keys.length).toBe(H);
      const gqa = multiHeadAttention(xQ, xKV, w, { mask: { kind: "causal" } });
      const mha = multiHeadAttention(xQ, xKV, tied, { mask: { kind: "causal" } });
      expect(relErr(gqa, mha)).toBeLessThan(1e-14);
    }
  });

  it("MQA is G = 1: every query head reads KV head 0", () => {
    const w = initMultiHeadWeights({ dIn, numHeads: 3, numKvHeads: 1, headDim: dh }, [27]);
    expect(w.keys.length).toBe(1);
    expect(
      relErr(
        multiHeadAttention(xQ, xKV, w),
        literalGrouped(w, () => 0),
      ),
    ).toBeLessThan(1e-12);
  });
});
