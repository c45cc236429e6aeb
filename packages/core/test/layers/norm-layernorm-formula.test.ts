import { describe, expect, it } from "vitest";
import { Matrix, layerNorm, initLayerNorm, randomMatrix } from "@randattn/core";
import { relErr, vec } from "./helpers.js";

// LayerNorm against §3.1.1 written as loops: μ = (1/d)Σx_i, σ² = (1/d)Σ(x_i − μ)² (biased),
// x̃ = (x − μ)/√(σ² + ε), y = γ ⊙ x̃ + β (ERRATA: ε inside the root).
function literal(x: Matrix, gamma: Float64Array, beta: Float64Array, eps: number): Matrix {
  const out = new Matrix(x.rows, x.cols);
  for (let i = 0; i < x.rows; i++) {
    let mu = 0;
    for (let j = 0; j < x.cols; j++) mu += x.get(i, j);
    mu /= x.cols;
    let s2 = 0;
    for (let j = 0; j < x.cols; j++) s2 += (x.get(i, j) - mu) ** 2;
    s2 /= x.cols;
    for (let j = 0; j < x.cols; j++) out.set(i, j, gamma[j] * ((x.get(i, j) - mu) / Math.sqrt(s2 + eps)) + beta[j]);
  }
  return out;
}

describe("layerNorm = literal formula of §3.1.1", () => {
  for (const [n, d, eps] of [
    [1, 1, 1e-5],
    [3, 4, 1e-5],
    [5, 17, 0.3],
    [8, 64, 1e-12],
  ] as const) {
    it(`${n}×${d}, ε = ${eps}`, () => {
      const x = randomMatrix(n, d, { scale: 3 }, [7, "ln", n, d]);
      const params = { kind: "layer" as const, gain: vec(d, 1), shift: vec(d, 2), epsilon: eps };
      expect(relErr(layerNorm(x, params), literal(x, params.gain, params.shift, eps))).toBeLessThan(1e-13);
    });
  }

  it("uses the biased variance: a 1×2 row [a, b] normalizes to ±|a−b|/2 / √((a−b)²/4 + ε)", () => {
    const y = layerNorm(Matrix.fromArray([[1, 3]]), initLayerNorm(2, { epsilon: 1 }));
    // σ² (biased) = 1, so x̃ = ∓1/√2; the unbiased variance (2) would give ∓1/√3.
    expect(y.get(0, 0)).toBeCloseTo(-1 / Math.SQRT2, 15);
    expect(y.get(0, 1)).toBeCloseTo(1 / Math.SQRT2, 15);
  });
});
