/**
 * Error metrics of an approximate attention output Ŷ against the exact Y (both N_Q × Σd_V):
 * relative Frobenius and spectral errors, max-abs error, and the mean KL divergence between exact
 * and approximate attention rows when the method forms weights.
 */
import { type Matrix, matmulTransA, matmulTransB, maxAbsDiff, ShapeError } from "@randattn/core";
import { assertShape, powerIterationEigenvalue, symmetricMaxEigenvalue } from "@randattn/core/internal";

/** ‖Ŷ − Y‖_F / ‖Y‖_F (0 when both are 0, +∞ when only Y is). */
export function relativeFrobenius(approx: Matrix, exact: Matrix): number {
  assertShape(approx, "approx", exact.rows, exact.cols, "the exact output's shape");
  let num = 0;
  let den = 0;
  for (let i = 0; i < exact.data.length; i++) {
    const d = approx.data[i] - exact.data[i];
    num += d * d;
    den += exact.data[i] * exact.data[i];
  }
  return ratio(Math.sqrt(num), Math.sqrt(den));
}

/** max |Ŷ − Y| over entries. */
export function maxAbsError(approx: Matrix, exact: Matrix): number {
  assertShape(approx, "approx", exact.rows, exact.cols, "the exact output's shape");
  return maxAbsDiff(approx, exact);
}

function ratio(num: number, den: number): number {
  if (den === 0) return num === 0 ? 0 : Number.POSITIVE_INFINITY;
  return num / den;
}

/**
 * Largest eigenvalue of a symmetric n×n matrix (row-major) by cyclic Jacobi rotations: core's
 * (linalg/eigen.ts, on the WebAssembly kernel), re-exported for the experiments' spectral norms.
 */
export { symmetricMaxEigenvalue };

/** Largest Gram side for which the spectral norm is computed exactly (Jacobi); beyond, power iteration. */
export const MAX_JACOBI_SIZE = 256;

/**
 * Spectral norm ‖M‖₂ = √λ_max(MᵀM) (or MMᵀ, whichever is smaller). Exact Jacobi up to
 * MAX_JACOBI_SIZE, otherwise 200 steps of power iteration from a fixed start (deterministic).
 */
export function spectralNorm(m: Matrix): number {
  if (m.rows === 0 || m.cols === 0) return 0;
  const gram = m.cols <= m.rows ? matmulTransA(m, m) : matmulTransB(m, m);
  const n = gram.rows;
  if (n <= MAX_JACOBI_SIZE) return Math.sqrt(Math.max(0, symmetricMaxEigenvalue(gram.data, n)));
  // core's power iteration: the loops this function used to hold, on the one-row SIMD kernel (same bits).
  return Math.sqrt(powerIterationEigenvalue(gram.data, n, 200));
}

/**
 * ‖Ŷ − Y‖₂ / ‖Y‖₂. `exactNorm`: ‖Y‖₂ when the caller has it already (`spectralNorm(exact)`, the
 * same bits) — the runner keeps it with the cached reference, so the tasks of one problem point
 * and trial compute it once instead of once each (it was a third of the quickstart's task time).
 */
export function relativeSpectral(approx: Matrix, exact: Matrix, exactNorm?: number): number {
  assertShape(approx, "approx", exact.rows, exact.cols, "the exact output's shape");
  const diff = exact.clone();
  for (let i = 0; i < diff.data.length; i++) diff.data[i] = approx.data[i] - exact.data[i];
  return ratio(spectralNorm(diff), exactNorm ?? spectralNorm(exact));
}

/**
 * Mean over heads and query rows of KL(P_exact[i,:] ‖ P_approx[i,:]) in nats. Entries with
 * P_exact = 0 contribute 0; P_approx = 0 where P_exact > 0 gives +∞ (reported, not hidden).
 * An entry equal in both (finite) contributes p·log 1 = +0 and is skipped without its logarithm:
 * the same bits (the running sum starts at +0 and is never −0, so adding +0 leaves it unchanged),
 * and the exact method's weights are the reference's bit for bit — its 2²¹ logarithms per trial
 * were 6 % of the quickstart's task time (issue 14, stop 38).
 */
export function meanKlDivergence(approx: readonly Matrix[], exact: readonly Matrix[]): number {
  if (approx.length !== exact.length) throw new ShapeError("weights", `${exact.length} heads`, `${approx.length}`);
  let total = 0;
  let rows = 0;
  for (let h = 0; h < exact.length; h++) {
    const p = exact[h];
    const q = approx[h];
    assertShape(q, `weights[${h}]`, p.rows, p.cols, "the exact weights' shape");
    const pd = p.data;
    const qd = q.data;
    const n = p.cols;
    for (let i = 0; i < p.rows; i++) {
      let kl = 0;
      const end = (i + 1) * n;
      for (let j = i * n; j < end; j++) {
        const pj = pd[j];
        const qj = qd[j];
        if (qj === pj && pj < Number.POSITIVE_INFINITY) continue; // p·log 1 = +0 (or P_exact = 0)
        if (pj > 0) kl += pj * Math.log(pj / qj);
      }
      total += kl;
      rows++;
    }
  }
  return rows === 0 ? 0 : total / rows;
}
