/**
 * Exactly low-rank inputs are recovered exactly: with k ≥ rank(A) the QB and SVD factors reproduce A
 * to 1e-12 (relative Frobenius), for every test matrix and re-normalization; k beyond the rank (the
 * samples lose rank) gives finite, orthonormal factors; a zero matrix gives zero factors, no NaN.
 */
import { Matrix, matmul, matmulTransB } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { qb, randomizedSvd } from "../../src/lowrank/index.js";
import { frobenius, orthonormalityDefect, withSpectrum } from "./spectra.js";

function relDiff(a: Matrix, b: Matrix): number {
  let s = 0;
  for (let i = 0; i < a.data.length; i++) s += (a.data[i] - b.data[i]) ** 2;
  return Math.sqrt(s) / frobenius(b);
}

describe("exact recovery of exactly low-rank matrices", () => {
  const sigma = [5, 3, 2, 1, 0.5];
  const a = withSpectrum(140, 70, sigma, 31);
  for (const testMatrix of ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign"] as const)
    for (const orthonormalization of ["qr", "lu", "none"] as const)
      it(`${testMatrix}, ${orthonormalization}: QB and SVD reproduce A`, () => {
        for (const [rank, oversampling] of [
          [5, 0],
          [5, 4],
          [9, 3],
        ]) {
          const opts = { rank, oversampling, powerIterations: 1, orthonormalization, testMatrix };
          const { Q, B } = qb(a, opts, [32, rank]);
          expect(relDiff(matmul(Q, B), a)).toBeLessThan(1e-12);
          expect(orthonormalityDefect(Q)).toBeLessThan(1e-12);
          const { U, S, Vt } = randomizedSvd(a, opts, [32, rank]);
          const us = Matrix.from(U.rows, U.cols, (i, j) => U.get(i, j) * S[j]);
          expect(relDiff(matmul(us, Vt), a)).toBeLessThan(1e-12);
          for (let j = 0; j < 5; j++) expect(Math.abs(S[j] - sigma[j]) / sigma[j]).toBeLessThan(1e-12);
          for (let j = 5; j < rank; j++) expect(S[j]).toBeLessThan(1e-12);
        }
      });

  it("a zero matrix: finite orthonormal Q, zero B", () => {
    const z = new Matrix(30, 20);
    const { Q, B } = qb(z, { rank: 4, oversampling: 2 }, [33]);
    expect(orthonormalityDefect(Q)).toBeLessThan(1e-12);
    for (const x of B.data) expect(x).toBe(0);
    const { S } = randomizedSvd(z, { rank: 4 }, [33]);
    for (const x of S) expect(x).toBe(0);
  });

  it("rank-one input with an LU re-normalization hitting zero pivots stays finite", () => {
    const r1 = matmulTransB(
      Matrix.from(50, 1, (i) => i + 1),
      Matrix.from(40, 1, (j) => (j % 3) - 1),
    );
    const { Q, B } = qb(r1, { rank: 6, oversampling: 2, powerIterations: 3, orthonormalization: "lu" }, [34]);
    expect(orthonormalityDefect(Q)).toBeLessThan(1e-12);
    expect(relDiff(matmul(Q, B), r1)).toBeLessThan(1e-12);
  });
});
