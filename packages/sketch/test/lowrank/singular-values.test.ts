/**
 * exactSingularValues: the spectrum without the vectors is exactSvd's S bit for bit (the
 * experiments' Eckart–Young optima and HMT bounds are in the committed results), and both match
 * an independent oracle, the eigenvalues of AᵀA (ml-matrix's symmetric eigensolver): the SVD is
 * backward stable, so |σ_i² − λ_i| ≤ c·n·ε·σ₁² — 1e-12·σ₁² is ≈ 4500 ulps of σ₁², and a missing,
 * duplicated or misscaled σ misses it by orders of magnitude.
 */
import { Matrix, NonFiniteError, ShapeError, randomMatrix, transpose } from "@randattn/core";
import { EigenvalueDecomposition, Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { exactSingularValues, exactSvd } from "../../src/lowrank/index.js";

function decaying(rows: number, cols: number, seed: number, scale = 1, rank = Math.min(rows, cols)): Matrix {
  const u = randomMatrix(rank, rows, {}, [seed, 1]).data;
  const v = randomMatrix(rank, cols, {}, [seed, 2]).data;
  const m = new Matrix(rows, cols);
  // A sum of `rank` outer products with weights 2^-t: a decaying, possibly deficient spectrum.
  for (let t = 0; t < rank; t++) {
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) m.data[i * cols + j] += scale * 2 ** -t * u[t * rows + i] * v[t * cols + j];
  }
  return m;
}

describe("exactSingularValues ≡ exactSvd(a).S, and against the eigenvalues of AᵀA", () => {
  const cases: [string, Matrix][] = [
    ["tall 512 × 32", decaying(512, 32, 101)],
    ["wide 24 × 200 (ml-matrix transposes)", decaying(24, 200, 102)],
    ["square 40 × 40", decaying(40, 40, 103)],
    ["rank 3 of 60 × 20", decaying(60, 20, 104, 1, 3)],
    ["entries ≈ 1e-300 (the power-of-two rescaling)", decaying(30, 10, 105, 1e-300)],
    ["one row", decaying(1, 7, 106)],
  ];
  for (const [name, a] of cases) {
    it(name, () => {
      const s = exactSingularValues(a);
      const full = exactSvd(a).S;
      expect(s.length).toBe(Math.min(a.rows, a.cols));
      expect(s.every((x, i) => Object.is(x, full[i]))).toBe(true);
      for (let i = 1; i < s.length; i++) expect(s[i]).toBeLessThanOrEqual(s[i - 1]);
      // The oracle on a rescaled copy (AᵀA of 1e-300 entries underflows): σ(cA) = cσ(A).
      const c = 1 / s[0];
      const small = a.rows >= a.cols ? a : transpose(a);
      const m = new MlMatrix(Array.from({ length: small.rows }, (_, i) => Array.from(small.rowView(i), (x) => x * c)));
      const lambda = new EigenvalueDecomposition(m.transpose().mmul(m), { assumeSymmetric: true }).realEigenvalues.sort((x, y) => y - x);
      for (let i = 0; i < s.length; i++) expect(Math.abs((s[i] * c) ** 2 - Math.max(0, lambda[i]))).toBeLessThanOrEqual(1e-12);
    });
  }

  it("bad input: typed errors naming a", () => {
    const bad = new Matrix(3, 2);
    bad.data[4] = Number.NaN;
    expect(() => exactSingularValues(bad)).toThrow(NonFiniteError);
    expect(() => exactSingularValues(new Matrix(0, 3))).toThrow(ShapeError);
    expect(() => exactSingularValues(bad)).toThrow(/^a/);
  });
});
