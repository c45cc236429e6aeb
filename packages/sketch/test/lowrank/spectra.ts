/**
 * Test matrices with prescribed spectra: A = U diag(σ) Vᵀ with Haar-like orthonormal factors from
 * ml-matrix's QR of seeded Gaussian matrices, plus the oracles the tests compare against.
 */
import { Matrix, matmulTransA, matmulTransB, randomMatrix } from "@randattn/core";
import { QrDecomposition, SVD } from "ml-matrix";

/** n × k matrix with orthonormal columns (ml-matrix QR of a Gaussian n × k). */
export function randomOrthonormal(n: number, k: number, seed: readonly [number, ...(string | number)[]]): Matrix {
  const g = randomMatrix(n, k, {}, seed).toMlMatrix();
  const q = new QrDecomposition(g).orthogonalMatrix;
  return Matrix.from(n, k, (i, j) => q.get(i, j));
}

/** m × n matrix U diag(σ) Vᵀ (σ of length ≤ min(m, n)). */
export function withSpectrum(m: number, n: number, sigma: readonly number[], seed: number): Matrix {
  const r = sigma.length;
  const u = randomOrthonormal(m, r, [seed, "U"]);
  const v = randomOrthonormal(n, r, [seed, "V"]);
  const us = Matrix.from(m, r, (i, j) => u.get(i, j) * sigma[j]);
  return matmulTransB(us, v);
}

/** The spectra of the tests (length r). */
export const spectra = {
  /** σ_j = (j + 1)^{−1}: slow polynomial decay. */
  polynomial: (r: number) => Array.from({ length: r }, (_, j) => 1 / (j + 1)),
  /** σ_j = 0.8^j: fast exponential decay. */
  exponential: (r: number) => Array.from({ length: r }, (_, j) => 0.8 ** j),
  /** σ_j = 1 for j < 12, then 1e-2: a step at 12. */
  step: (r: number) => Array.from({ length: r }, (_, j) => (j < 12 ? 1 : 1e-2)),
  /** σ_j = (j + 1)^{−½}: very slow decay (where power iterations matter). */
  slow: (r: number) => Array.from({ length: r }, (_, j) => 1 / Math.sqrt(j + 1)),
};

/** Singular values of A by ml-matrix (the oracle), decreasing. */
export function oracleSingularValues(a: Matrix): number[] {
  return Array.from(new SVD(a.toMlMatrix(), { autoTranspose: true }).diagonal).sort((x, y) => y - x);
}

/** Eckart–Young: min over rank-k X of ‖A − X‖_F = (Σ_{j>k} σ_j²)^½. */
export function tailNorm(sigma: readonly number[], k: number): number {
  let s = 0;
  for (let j = k; j < sigma.length; j++) s += sigma[j] * sigma[j];
  return Math.sqrt(s);
}

export function frobenius(a: Matrix): number {
  let s = 0;
  for (const x of a.data) s += x * x;
  return Math.sqrt(s);
}

/** ‖A − Q Qᵀ A‖_F. */
export function projectionError(a: Matrix, q: Matrix): number {
  const b = matmulTransA(q, a);
  let s = 0;
  for (let i = 0; i < a.rows; i++)
    for (let j = 0; j < a.cols; j++) {
      let t = 0;
      for (let c = 0; c < q.cols; c++) t += q.get(i, c) * b.get(c, j);
      s += (a.get(i, j) - t) ** 2;
    }
  return Math.sqrt(s);
}

/** max |QᵀQ − I|. */
export function orthonormalityDefect(q: Matrix): number {
  const g = matmulTransA(q, q);
  let e = 0;
  for (let i = 0; i < g.rows; i++) for (let j = 0; j < g.cols; j++) e = Math.max(e, Math.abs(g.get(i, j) - (i === j ? 1 : 0)));
  return e;
}
