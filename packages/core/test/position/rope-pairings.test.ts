import { describe, expect, it } from "vitest";
import { Matrix, Rope, frobeniusNorm, maxAbsDiff, randomMatrix } from "@randattn/core";

describe("RoPE pairings", () => {
  const d = 8;
  const positions = [0, 1, 2, 3, 17, 250];
  const x = randomMatrix(positions.length, d, {}, [5, "pairings"]);
  const inter = new Rope(d).apply(x, positions);
  const half = new Rope(d, { pairing: "half" }).apply(x, positions);

  it("interleaved and half-split give different numbers on the same input (ERRATA)", () => {
    expect(maxAbsDiff(inter, half)).toBeGreaterThan(1e-2);
  });

  it("each pairing preserves every row's norm", () => {
    for (const y of [inter, half]) {
      for (let i = 0; i < x.rows; i++) {
        const nx = frobeniusNorm(Matrix.rowVector(x.row(i)));
        expect(Math.abs(frobeniusNorm(Matrix.rowVector(y.row(i))) - nx)).toBeLessThan(1e-12 * nx);
      }
    }
  });

  it("half-split = interleaved conjugated by the pair permutation (p ↔ 2p, p+d/2 ↔ 2p+1)", () => {
    // perm[j] = interleaved index holding half-split coordinate j
    const perm = Array.from({ length: d }, (_, j) => (j < d / 2 ? 2 * j : 2 * (j - d / 2) + 1));
    const xPermuted = Matrix.from(x.rows, d, (i, j) => x.get(i, perm.indexOf(j)));
    const viaInterleaved = new Rope(d).apply(xPermuted, positions);
    const back = Matrix.from(x.rows, d, (i, j) => viaInterleaved.get(i, perm[j]));
    expect(maxAbsDiff(back, half)).toBeLessThan(1e-14);
  });
});
