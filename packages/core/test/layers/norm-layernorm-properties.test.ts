import { describe, expect, it } from "vitest";
import { layerNorm, initLayerNorm, randomMatrix } from "@randattn/core";

// With γ = 1, β = 0 each output row has mean 0 and (biased) variance σ²/(σ² + ε) — ~1 for ε ≪ σ².
describe("layerNorm output rows: mean 0, variance σ²/(σ² + ε)", () => {
  it("holds row by row before γ/β", () => {
    const n = 6;
    const d = 40;
    const x = randomMatrix(n, d, { scale: 5 }, [11, "ln-props"]);
    // shift rows far from 0 to check the recentring
    for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) x.data[i * d + j] += 100 * (i + 1);
    const eps = 1e-5;
    const y = layerNorm(x, initLayerNorm(d, { epsilon: eps }));
    for (let i = 0; i < n; i++) {
      const row = x.row(i);
      const mu = row.reduce((a, b) => a + b, 0) / d;
      const s2 = row.reduce((a, b) => a + (b - mu) ** 2, 0) / d;
      const out = y.row(i);
      const m = out.reduce((a, b) => a + b, 0) / d;
      const v = out.reduce((a, b) => a + (b - m) ** 2, 0) / d;
      // Rounding of x − μ is ≈ u·|μ| per entry, i.e. u·|μ|/σ after the division: the floor of any
      // float64 implementation; 16× that (plus u·d for the sums) is the bound.
      const tol = 16 * 2 ** -52 * ((Math.abs(mu) + 3 * Math.sqrt(s2)) / Math.sqrt(s2) + d);
      expect(Math.abs(m)).toBeLessThan(tol);
      expect(Math.abs(v - s2 / (s2 + eps))).toBeLessThan(2 * tol);
      expect(Math.abs(v - 1)).toBeLessThan(eps / s2 + 2 * tol);
    }
  });

  it("is invariant to adding a constant and scaling a row by c > 0 (up to ε)", () => {
    const x = randomMatrix(3, 16, {}, [12, "ln-inv"]);
    const p = initLayerNorm(16, { epsilon: 1e-300 });
    const shifted = x.clone();
    for (let i = 0; i < shifted.data.length; i++) shifted.data[i] = 7 * shifted.data[i] - 4;
    const a = layerNorm(x, p);
    const b = layerNorm(shifted, p);
    for (let i = 0; i < a.data.length; i++) expect(Math.abs(a.data[i] - b.data[i])).toBeLessThan(1e-13);
  });
});
