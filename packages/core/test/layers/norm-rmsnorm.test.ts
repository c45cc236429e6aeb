import { describe, expect, it } from "vitest";
import { Matrix, initRMSNorm, randomMatrix, rmsNorm } from "@randattn/core";
import { relErr, vec } from "./helpers.js";

// RMSNorm [ZS19] as loops: y = g ⊙ x / √((1/d) Σ x_i² + ε).
function literal(x: Matrix, g: Float64Array, eps: number): Matrix {
  const out = new Matrix(x.rows, x.cols);
  for (let i = 0; i < x.rows; i++) {
    let ms = 0;
    for (let j = 0; j < x.cols; j++) ms += x.get(i, j) ** 2;
    const rms = Math.sqrt(ms / x.cols + eps);
    for (let j = 0; j < x.cols; j++) out.set(i, j, (g[j] * x.get(i, j)) / rms);
  }
  return out;
}

describe("rmsNorm", () => {
  for (const [n, d, eps] of [
    [1, 1, 1e-6],
    [4, 7, 1e-6],
    [9, 33, 0.5],
  ] as const) {
    it(`= literal formula, ${n}×${d}, ε = ${eps}`, () => {
      const x = randomMatrix(n, d, { scale: 2 }, [3, "rms", n, d]);
      const params = { kind: "rms" as const, gain: vec(d, 5), epsilon: eps };
      expect(relErr(rmsNorm(x, params), literal(x, params.gain, eps))).toBeLessThan(1e-13);
    });
  }

  it("is scale invariant: rmsNorm(c x) = rmsNorm(x) for c > 0 when ε → 0, and has unit RMS with g = 1", () => {
    const d = 24;
    const x = randomMatrix(5, d, {}, [3, "rms-scale"]);
    const p = initRMSNorm(d, { epsilon: 1e-300 });
    const base = rmsNorm(x, p);
    for (const c of [1e-3, 0.5, 3, 1e4]) {
      const cx = x.clone();
      for (let i = 0; i < cx.data.length; i++) cx.data[i] *= c;
      expect(relErr(rmsNorm(cx, p), base)).toBeLessThan(1e-14);
    }
    for (let i = 0; i < 5; i++) {
      const ms = base.row(i).reduce((a, b) => a + b * b, 0) / d;
      expect(Math.abs(Math.sqrt(ms) - 1)).toBeLessThan(1e-14);
    }
  });

  it("does not recentre: a constant row c maps to sign(c)·g (ε → 0), unlike LayerNorm", () => {
    const y = rmsNorm(Matrix.fromArray([[-2, -2, -2]]), initRMSNorm(3, { epsilon: 1e-300 }));
    expect(y.toArray()[0].map((v) => Math.abs(v + 1) < 1e-15)).toEqual([true, true, true]);
  });
});
