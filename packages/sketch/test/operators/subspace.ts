// Test subspaces: an orthonormal U (n × k) with deliberately non-uniform leverage scores.
import { type Matrix, matmulTransA, randomMatrix } from "@randattn/core";

/** Orthonormal columns by modified Gram–Schmidt applied twice (re-orthogonalization → ‖UᵀU − I‖ ~ 1e-16). */
export function orthonormalize(a: Matrix): Matrix {
  const { rows: n, cols: k } = a;
  const u = a.clone();
  for (let pass = 0; pass < 2; pass++) {
    for (let c = 0; c < k; c++) {
      for (let p = 0; p < c; p++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += u.data[i * k + c] * u.data[i * k + p];
        for (let i = 0; i < n; i++) u.data[i * k + c] -= dot * u.data[i * k + p];
      }
      let nrm = 0;
      for (let i = 0; i < n; i++) nrm += u.data[i * k + c] ** 2;
      nrm = Math.sqrt(nrm);
      for (let i = 0; i < n; i++) u.data[i * k + c] /= nrm;
    }
  }
  return u;
}

/**
 * U with leverage concentrated on the first rows (rows i < k scaled by 30 before
 * orthonormalizing), so that the L₂ = Σ ℓ_j² terms of the embedding formulas are far from 0 and
 * formulas that differ only in them are told apart.
 */
export function testSubspace(n: number, k: number, key: string): Matrix {
  const g = randomMatrix(n, k, {}, [99, "subspace", key, n, k]);
  for (let i = 0; i < k; i++) for (let c = 0; c < k; c++) g.data[i * k + c] *= 30;
  return orthonormalize(g);
}

/** Leverage scores ℓ_i = ‖U_i‖². */
export function rowLeverage(u: Matrix): Float64Array {
  const out = new Float64Array(u.rows);
  for (let i = 0; i < u.rows; i++) for (let c = 0; c < u.cols; c++) out[i] += u.data[i * u.cols + c] ** 2;
  return out;
}

/** M = (SU)ᵀ(SU) − I for a sketched basis SU. */
export function gramDeviation(su: Matrix): Matrix {
  const m = matmulTransA(su, su);
  for (let c = 0; c < m.rows; c++) m.data[c * m.cols + c] -= 1;
  return m;
}

export function frobeniusSquared(m: Matrix): number {
  let s = 0;
  for (const v of m.data) s += v * v;
  return s;
}
