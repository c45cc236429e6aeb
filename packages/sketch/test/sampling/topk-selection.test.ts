import { Matrix } from "@randattn/core";
import { topKValueProduct } from "@randattn/sketch";
import { describe, expect, it } from "vitest";

/** The former implementation (full sort per row), kept as the oracle the selection must match bit for bit. */
function sortTopK(weights: Matrix, values: Matrix, k: number, renormalize: boolean): { indices: Int32Array; output: Float64Array } {
  const n = weights.cols;
  const dV = values.cols;
  const output = new Float64Array(weights.rows * dV);
  const indices = new Int32Array(weights.rows * k);
  const order = Array.from({ length: n }, (_, j) => j);
  for (let i = 0; i < weights.rows; i++) {
    const row = weights.data.subarray(i * n, (i + 1) * n);
    order.sort((a, b) => row[b] - row[a] || a - b);
    let sum = 0;
    for (let t = 0; t < k; t++) {
      const j = order[t];
      indices[i * k + t] = j;
      sum += row[j];
      for (let c = 0; c < dV; c++) output[i * dV + c] += row[j] * values.data[j * dV + c];
    }
    if (renormalize) for (let c = 0; c < dV; c++) output[i * dV + c] /= sum;
  }
  return { indices, output };
}

/** Deterministic pseudo-random fill (LCG), coarse values so many weights tie. */
function fixture(rows: number, cols: number, levels: number, seed: number): Matrix {
  let x = seed >>> 0;
  return Matrix.from(rows, cols, () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return levels > 0 ? (x % levels) / levels + 1e-3 : x / 2 ** 32;
  });
}

describe("top-k by selection equals the full sort bit for bit", () => {
  const values = fixture(97, 5, 0, 7);
  for (const [levels, label] of [
    [0, "distinct weights"],
    [4, "heavy ties (4 levels)"],
    [1, "all weights equal"],
  ] as const) {
    it(`${label}: indices in order and output identical for k = 1 … N`, () => {
      const w = fixture(6, 97, levels, 11 + levels);
      for (const k of [1, 2, 3, 10, 48, 96, 97]) {
        for (const renormalize of [true, false]) {
          const got = topKValueProduct(w, values, k, { renormalize });
          const ref = sortTopK(w, values, k, renormalize);
          expect(Array.from(got.indices)).toEqual(Array.from(ref.indices));
          expect(got.output.data.every((v, i) => Object.is(v, ref.output[i]))).toBe(true);
        }
      }
    });
  }
  it("signed zeros tie with each other (−0 and 0 are equal weights, lower index first)", () => {
    const w = new Matrix(1, 6, Float64Array.from([0, -0, 1, -0, 0, 1]));
    const v = fixture(6, 2, 0, 3);
    for (const k of [1, 2, 3, 4, 6]) {
      expect(Array.from(topKValueProduct(w, v, k, { renormalize: false }).indices)).toEqual(Array.from(sortTopK(w, v, k, false).indices));
    }
  });
});
