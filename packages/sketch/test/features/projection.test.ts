/**
 * drawProjection: orthogonal blocks are exactly orthogonal (1e-12) with χ_d row lengths — so each row
 * is marginally N(0, I_d): mean squared length d within 4σ (Var‖ω‖² = 2d), coordinates with mean 0 and
 * variance 1 within 4σ — and a partial last block; i.i.d. Gaussian rows have the same moments;
 * Cauchy frequencies have median 0 and quartiles ±1 within a binomial 4σ band.
 */
import { describe, expect, it } from "vitest";
import { drawProjection } from "../../src/features/index.js";

describe("drawProjection", () => {
  it("orthogonal: rows within a block are orthogonal to 1e-12; a partial last block is kept", () => {
    const d = 7;
    const m = 17; // blocks of 7, 7, 3
    const w = drawProjection(m, d, { projection: "orthogonal" }, [21]);
    expect(w.rows).toBe(m);
    for (const [start, size] of [
      [0, 7],
      [7, 7],
      [14, 3],
    ])
      for (let i = start; i < start + size; i++)
        for (let j = i + 1; j < start + size; j++) {
          let s = 0;
          let ni = 0;
          let nj = 0;
          for (let t = 0; t < d; t++) {
            s += w.get(i, t) * w.get(j, t);
            ni += w.get(i, t) ** 2;
            nj += w.get(j, t) ** 2;
          }
          expect(Math.abs(s) / Math.sqrt(ni * nj)).toBeLessThan(1e-12);
        }
  });

  for (const projection of ["orthogonal", "iid"] as const) {
    it(`${projection}: rows are marginally N(0, I_d) (moments within 4σ)`, () => {
      const d = 5;
      const m = 4000;
      const w = drawProjection(m, d, { projection }, [22, projection]);
      let sumLen = 0;
      let sum = 0;
      let sumSq = 0;
      for (let i = 0; i < m; i++) {
        let len = 0;
        for (let t = 0; t < d; t++) {
          const x = w.get(i, t);
          len += x * x;
          sum += x;
          sumSq += x * x;
        }
        sumLen += len;
      }
      const n = m * d;
      expect(Math.abs(sumLen / m - d)).toBeLessThan(4 * Math.sqrt((2 * d) / m));
      expect(Math.abs(sum / n)).toBeLessThan(4 / Math.sqrt(n));
      expect(Math.abs(sumSq / n - 1)).toBeLessThan(4 * Math.sqrt(2 / n));
    });
  }

  it("cauchy: median 0 and quartiles ±1 (binomial 4σ band on the counts)", () => {
    const w = drawProjection(2000, 2, { distribution: "cauchy" }, [23]);
    const n = w.data.length;
    const below = (c: number) => w.data.filter((x) => x < c).length;
    for (const [c, p] of [
      [-1, 0.25],
      [0, 0.5],
      [1, 0.75],
    ])
      expect(Math.abs(below(c) - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)));
  });
});
