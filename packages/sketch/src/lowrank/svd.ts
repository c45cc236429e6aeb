/**
 * Randomized SVD (Halko, Martinsson & Tropp 2011, Alg. 5.1): Q from the range finder, B = QᵀA
 * (ℓ × n, small), the SVD B = Ũ Σ Vᵀ by ml-matrix, U = Q Ũ, truncated to the target rank k.
 * ml-matrix handles only the small factor; the m-sized products use core's kernels.
 */
import { Matrix, type SeedKey, transpose } from "@randattn/core";
import { assertInteger, assertOptions, matmulInto, matmulTransBInto } from "@randattn/core/internal";
import { SVD } from "ml-matrix";
import type { Cost } from "../operators/index.js";
import { householderQr } from "./householder.js";
import { type QbOptions, qb } from "./qb.js";
import { checkInputMatrix, safeScaled } from "./rangefinder.js";

export interface SvdFactors {
  /** U (m × k), orthonormal columns. */
  U: Matrix;
  /** σ₁ ≥ … ≥ σ_k ≥ 0. */
  S: Float64Array;
  /** Vᵀ (k × n), orthonormal rows. */
  Vt: Matrix;
}

export interface RandomizedSvdResult extends SvdFactors {
  /** Flops spent and peak floats held (Q, B, the factors). */
  cost: Cost;
}

/** Options of {@link exactSvd}. */
export interface ExactSvdOptions {
  /** Truncation rank k, 1 ≤ k ≤ min(m, n). @default min(m, n) */
  rank?: number;
}

/** Result of {@link exactSvd}: the factors and the cost of the full dense SVD. */
export interface ExactSvdResult extends SvdFactors {
  /** Golub–Kahan–Reinsch estimate 4mn·min(m, n) + 8·min(m, n)³ flops; floats of A and the full factors. */
  cost: Cost;
}

/**
 * Thin SVD by ml-matrix of a (small) matrix, truncated to `rank` (default min(m, n)): A ≈ U diag(S) Vᵀ,
 * singular values in decreasing order. The reference (deterministic) SVD used on B and by the
 * "exact" paths of the MLA tools; O(mn·min(m, n)), so only for small or moderate sizes.
 * @throws ShapeError / NonFiniteError for a bad `a`; ValueError for a rank outside [1, min(m, n)].
 */
export function exactSvd(a: Matrix, options: ExactSvdOptions = {}): ExactSvdResult {
  assertOptions(options, "options");
  checkInputMatrix(a, "a");
  const full = Math.min(a.rows, a.cols);
  const k = options.rank ?? full;
  assertInteger(k, "options.rank", 1, full);
  // ml-matrix's SVD iteration never terminates on entries of ≈ 1e-300 (its convergence test
  // underflows) — issue #6: run it on an exact power-of-two rescaling and scale S back.
  const { scaled, factor } = safeScaled(a);
  const svd = new SVD(scaled.toMlMatrix(), { autoTranspose: true, computeLeftSingularVectors: true, computeRightSingularVectors: true });
  const sv = svd.diagonal;
  const order = Array.from(sv.keys()).sort((i, j) => sv[j] - sv[i]);
  const u = svd.leftSingularVectors;
  const v = svd.rightSingularVectors;
  const U = new Matrix(a.rows, k);
  const Vt = new Matrix(k, a.cols);
  const S = new Float64Array(k);
  for (let t = 0; t < k; t++) {
    const c = order[t];
    S[t] = sv[c] * factor;
    for (let i = 0; i < a.rows; i++) U.data[i * k + t] = u.get(i, c);
    for (let j = 0; j < a.cols; j++) Vt.data[t * a.cols + j] = v.get(j, c);
  }
  const cost: Cost = { flops: 4 * a.rows * a.cols * full + 8 * full ** 3, floatsStored: a.rows * a.cols + (a.rows + a.cols + 1) * full };
  return { U, S, Vt, cost };
}

/**
 * SVD of the wide ℓ × n factor B (ℓ ≤ n), truncated to k: when n ≥ 2ℓ, first Bᵀ = Q₂R₂ (Householder,
 * n × ℓ) and then ml-matrix's SVD of the ℓ × ℓ R₂ᵀ = U Σ Wᵀ, so B = R₂ᵀQ₂ᵀ = U Σ (Q₂W)ᵀ — the QR
 * preconditioning of LAPACK's dgesvd / Chan (1982) for a matrix far from square. ml-matrix's
 * one-sided iteration then runs on ℓ² entries instead of ℓn (16384 × 512 at k = 64: ≈ 80–600 ms
 * down to ≈ 25 ms, issue 14); both steps are backward stable, so the factors are as accurate.
 */
function wideSvd(b: Matrix, k: number): SvdFactors {
  const l = b.rows;
  const n = b.cols;
  if (n < 2 * l) return exactSvd(b, { rank: k });
  // (householderQr scales each column by a power of two and exactSvd rescales R₂ᵀ: extreme B is safe.)
  const { q: q2, r: r2 } = householderQr(transpose(b));
  const inner = exactSvd(transpose(r2), { rank: k }); // R₂ᵀ = U Σ Wᵀ
  // Ũ = U and Vᵀ = Wᵀ Q₂ᵀ (k × ℓ · ℓ × n).
  const Vt = new Matrix(k, n);
  matmulTransBInto(inner.Vt.data, q2.data, Vt.data, k, l, n);
  return { U: inner.U, S: inner.S, Vt };
}

/**
 * Randomized SVD of rank k (HMT Alg. 5.1 on top of {@link qb}).
 * @param a A (m × n), finite.
 * @param options rank k, oversampling p (default 10), power iterations q (default 2), re-normalization,
 *   test matrix, and the range-finder driver (`options.rangeFinder`, see {@link QbOptions}).
 * @param seed the test matrix's seed (the same stream as `qb` / `rangeFinder` with this seed).
 * @throws as {@link rangeFinder}.
 * @example
 * ```ts
 * import { matmul, randomMatrix } from "@randattn/core";
 * import { randomizedSvd } from "@randattn/sketch";
 *
 * // A rank-5 matrix: the randomized SVD (Halko–Martinsson–Tropp) recovers it.
 * const a = matmul(randomMatrix(100, 5, {}, [10, "u"]), randomMatrix(5, 60, {}, [10, "v"]));
 * const { U, S, Vt, cost } = randomizedSvd(a, { rank: 5, oversampling: 5, powerIterations: 1 }, [10, "svd"]);
 * console.log(U.shape, S.length, Vt.shape, cost.flops > 0); // "100×5" 5 "5×60" true
 * ```
 */
export function randomizedSvd(a: Matrix, options: QbOptions, seed: SeedKey): RandomizedSvdResult {
  const { Q, B, cost } = qb(a, options, seed);
  const k = options.rank;
  const l = Q.cols;
  // the small SVD's flops are counted in the formula below (4nℓ² + 8ℓ³), not from its own cost
  const small = wideSvd(B, k);
  // U = Q Ũ (m × ℓ · ℓ × k).
  const U = new Matrix(a.rows, k);
  matmulInto(Q.data, small.U.data, U.data, a.rows, l, k, false);
  const n = a.cols;
  cost.flops += 4 * n * l * l + 8 * l * l * l + 2 * a.rows * l * k;
  cost.floatsStored += a.rows * k + k + k * n;
  return { U, S: small.S, Vt: small.Vt, cost };
}
