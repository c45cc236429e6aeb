import { Matrix, attention, attentionWeights } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { topKAttention, topKValueProduct } from "@randattn/sketch";
import { keys, product, queries, values, weightsP } from "./fixtures.js";

function maxDiff(x: Matrix, y: Matrix): number {
  let m = 0;
  for (let i = 0; i < x.data.length; i++) m = Math.max(m, Math.abs(x.data[i] - y.data[i]));
  return m;
}

describe("deterministic top-k baseline", () => {
  it("k = N is exact attention (renormalized) and exact P V (not renormalized)", () => {
    const n = keys.rows;
    expect(maxDiff(topKAttention(queries, keys, values, n).output, attention(queries, keys, values))).toBeLessThanOrEqual(1e-12);
    expect(maxDiff(topKValueProduct(weightsP, values, n, { renormalize: false }).output, product(weightsP, values))).toBeLessThanOrEqual(
      1e-12,
    );
  });

  it("k < N keeps each query's k largest weights, as the literal formula", () => {
    const k = 3;
    const r = topKAttention(queries, keys, values, k);
    const p = attentionWeights(queries, keys);
    const n = p.cols;
    const ref = new Matrix(p.rows, values.cols);
    for (let i = 0; i < p.rows; i++) {
      const order = Array.from({ length: n }, (_, j) => j).sort((a, b) => p.get(i, b) - p.get(i, a));
      const kept = order.slice(0, k);
      expect(Array.from(r.indices.subarray(i * k, (i + 1) * k))).toEqual(kept);
      const z = kept.reduce((s, j) => s + p.get(i, j), 0);
      for (let c = 0; c < values.cols; c++) ref.set(i, c, kept.reduce((s, j) => s + p.get(i, j) * values.get(j, c), 0) / z);
    }
    expect(maxDiff(r.output, ref)).toBeLessThanOrEqual(1e-12);
  });

  it("rejects k outside [1, N] and mismatched values", () => {
    expect(() => topKValueProduct(weightsP, values, 0)).toThrow(/k: expected an integer in \[1, 24\], got 0/);
    expect(() => topKValueProduct(weightsP, values, 25)).toThrow(/k: expected an integer in \[1, 24\], got 25/);
    expect(() => topKValueProduct(weightsP, new Matrix(23, 3), 2)).toThrow(
      /values: expected 24×\* \(rows = weights.cols = N_KV\), got 23×3/,
    );
  });
});
