/**
 * Randomized SVD against ml-matrix's SVD (the oracle): the rank-k error is at least the
 * Eckart–Young optimum and, with q = 2 power iterations on an exponentially decaying spectrum, within
 * 1% of it; the leading singular values match the oracle's; U and Vᵀ are orthonormal to 1e-12;
 * singular values are non-increasing. exactSvd equals the oracle (it is ml-matrix, re-packed).
 */
import { Matrix, matmul } from "@randattn/core";
import { describe, expect, it } from "vitest";
import { exactSvd, randomizedSvd } from "../../src/lowrank/index.js";
import { frobenius, oracleSingularValues, orthonormalityDefect, spectra, tailNorm, withSpectrum } from "./spectra.js";

function rankKError(a: Matrix, u: Matrix, s: Float64Array, vt: Matrix): number {
  const us = Matrix.from(u.rows, u.cols, (i, j) => u.get(i, j) * s[j]);
  const x = matmul(us, vt);
  let e = 0;
  for (let i = 0; i < a.data.length; i++) e += (a.data[i] - x.data[i]) ** 2;
  return Math.sqrt(e);
}

describe("randomized SVD vs ml-matrix SVD", () => {
  const a = withSpectrum(130, 90, spectra.exponential(90), 41);
  const oracle = oracleSingularValues(a);
  const k = 12;

  it("error ≥ Eckart–Young, within 1% of it with q = 2; σ match; factors orthonormal", () => {
    const { U, S, Vt, cost } = randomizedSvd(a, { rank: k, oversampling: 8, powerIterations: 2 }, [42]);
    expect(U.rows).toBe(130);
    expect(U.cols).toBe(k);
    expect(Vt.rows).toBe(k);
    expect(Vt.cols).toBe(90);
    const opt = tailNorm(oracle, k);
    const err = rankKError(a, U, S, Vt);
    expect(err).toBeGreaterThanOrEqual(opt * (1 - 1e-12));
    expect(err / opt).toBeLessThan(1.01);
    for (let j = 0; j < k; j++) expect(Math.abs(S[j] - oracle[j]) / oracle[j]).toBeLessThan(1e-6);
    for (let j = 1; j < k; j++) expect(S[j]).toBeLessThanOrEqual(S[j - 1]);
    expect(orthonormalityDefect(U)).toBeLessThan(1e-12);
    const v = Matrix.from(90, k, (i, j) => Vt.get(j, i));
    expect(orthonormalityDefect(v)).toBeLessThan(1e-12);
    expect(cost.flops).toBeGreaterThan(2 * 130 * 90 * (k + 8) * 6);
  });

  it("without power iterations on a slow spectrum: still ≥ optimum, but visibly worse than with q = 2", () => {
    const b = withSpectrum(130, 90, spectra.slow(90), 43);
    const opt = tailNorm(oracleSingularValues(b), k);
    const r0 = randomizedSvd(b, { rank: k, oversampling: 5, powerIterations: 0 }, [44]);
    const r2 = randomizedSvd(b, { rank: k, oversampling: 5, powerIterations: 2 }, [44]);
    const e0 = rankKError(b, r0.U, r0.S, r0.Vt);
    const e2 = rankKError(b, r2.U, r2.S, r2.Vt);
    expect(e0).toBeGreaterThanOrEqual(opt);
    expect(e2).toBeGreaterThanOrEqual(opt);
    expect(e2).toBeLessThan(e0);
  });

  it("the small SVD of B (QR of Bᵀ, one-sided Jacobi on R₂ᵀ): U diag(S) Vᵀ has singular values S to 1e-12; a zero B falls back to ml-matrix", () => {
    // ℓ = 20 ≪ n = 90 takes the QR + Jacobi path; σ spans 0.8^0 … 0.8^19 ≈ 1.4e-2, each to ~ε relative
    // (ml-matrix's SVD of the product is the oracle: a wrong rotation, order or Vᵀ = Wᵀ Q₂ᵀ breaks it)
    const { S, U, Vt } = randomizedSvd(a, { rank: 20, oversampling: 0, powerIterations: 2 }, [45]);
    const b = exactSvd(
      matmul(
        Matrix.from(130, 20, (i, j) => U.get(i, j) * S[j]),
        Vt,
      ),
    );
    for (let j = 0; j < 20; j++) expect(Math.abs(S[j] - b.S[j]) / b.S[j]).toBeLessThan(1e-12);
    const zero = randomizedSvd(new Matrix(130, 90), { rank: 5, oversampling: 5, powerIterations: 1 }, [46]);
    expect(Array.from(zero.S)).toEqual([0, 0, 0, 0, 0]);
    expect(orthonormalityDefect(zero.U)).toBeLessThan(1e-12);
  });

  it("exactSvd reproduces A at full rank and matches the oracle's values", () => {
    const { U, S, Vt } = exactSvd(a);
    for (let j = 0; j < 90; j++) expect(Math.abs(S[j] - oracle[j])).toBeLessThan(1e-12);
    expect(rankKError(a, U, S, Vt) / frobenius(a)).toBeLessThan(1e-12);
  });
});
