// initMultiHeadWeights: shapes from { dIn, numHeads, numKvHeads, headDim, valueDim, dOut }, one
// seeded stream per matrix (distinct purposes), reproducible, entries N(0, 1/fan_in).
import { describe, expect, it } from "vitest";
import { initMultiHeadWeights, initWeight, multiHeadShape } from "@randattn/core";

describe("initMultiHeadWeights", () => {
  it("shapes and defaults (G = H, d_V = d_head, d_out = d_in)", () => {
    const w = initMultiHeadWeights({ dIn: 8, numHeads: 4, headDim: 3 }, [34]);
    expect(multiHeadShape(w)).toEqual({ numHeads: 4, numKvHeads: 4, dIn: 8, dInKV: 8, headDim: 3, valueDim: 3, dOut: 8 });
    const g = initMultiHeadWeights({ dIn: 8, numHeads: 6, numKvHeads: 2, headDim: 3, valueDim: 5, dOut: 7 }, [34]);
    expect(multiHeadShape(g)).toEqual({ numHeads: 6, numKvHeads: 2, dIn: 8, dInKV: 8, headDim: 3, valueDim: 5, dOut: 7 });
    expect([g.output.rows, g.output.cols]).toEqual([30, 7]);
  });

  it("each matrix is core's initWeight on its own purpose; reproducible; all distinct", () => {
    const key = [35, "layer", 0] as const;
    const w = initMultiHeadWeights({ dIn: 6, numHeads: 2, numKvHeads: 1, headDim: 4, valueDim: 3 }, key);
    expect(w.queries[1].data).toEqual(initWeight(6, 4, {}, [...key, "query", 1]).data);
    expect(w.keys[0].data).toEqual(initWeight(6, 4, {}, [...key, "key", 0]).data);
    expect(w.values[0].data).toEqual(initWeight(6, 3, {}, [...key, "value", 0]).data);
    expect(w.output.data).toEqual(initWeight(6, 6, {}, [...key, "output"]).data);
    const again = initMultiHeadWeights({ dIn: 6, numHeads: 2, numKvHeads: 1, headDim: 4, valueDim: 3 }, key);
    expect(again.queries[0].data).toEqual(w.queries[0].data);
    const firsts = [w.queries[0], w.queries[1], w.keys[0], w.values[0], w.output].map((m) => m.data[0]);
    expect(new Set(firsts).size).toBe(5);
  });

  it("entries have variance 1/d_in (5-sigma bound on the sample variance)", () => {
    const dIn = 64;
    const w = initMultiHeadWeights({ dIn, numHeads: 8, headDim: 64 }, [36]);
    const xs = w.queries.flatMap((m) => Array.from(m.data));
    const n = xs.length;
    const sampleVar = xs.reduce((s, x) => s + x * x, 0) / n;
    // For N(0, σ²): Var(mean of x²) = 2σ⁴/n, so |s² − σ²| ≤ 5·σ²·√(2/n) with overwhelming probability.
    const sigma2 = 1 / dIn;
    expect(Math.abs(sampleVar - sigma2)).toBeLessThan(5 * sigma2 * Math.sqrt(2 / n));
  });
});
