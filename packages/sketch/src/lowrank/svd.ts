/**
 * Randomized SVD (Halko, Martinsson & Tropp 2011, Alg. 5.1): Q from the range finder, B = QᵀA
 * (ℓ × n, small), the SVD B = Ũ Σ Vᵀ by ml-matrix, U = Q Ũ, truncated to the target rank k.
 * ml-matrix handles only the small factor; the m-sized products use core's kernels.
 */
import { Matrix, type SeedKey, assertInteger, matmulInto } from "@randattn/core";
import { SVD } from "ml-matrix";
import type { Cost } from "../operators/index.js";
import { qb } from "./qb.js";
import { type RangeFinderOptions, checkInputMatrix, safeScaled } from "./rangefinder.js";

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

/**
 * Thin SVD by ml-matrix of a (small) matrix, truncated to `rank` (default min(m, n)): A ≈ U diag(S) Vᵀ,
 * singular values in decreasing order. The reference (deterministic) SVD used on B and by the
 * "exact" paths of the MLA tools; O(mn·min(m, n)), so only for small or moderate sizes.
 * @throws ShapeError / NonFiniteError for a bad `a`; ValueError for a rank outside [1, min(m, n)].
 */
export function exactSvd(a: Matrix, rank?: number): SvdFactors {
  checkInputMatrix(a, "a");
  const full = Math.min(a.rows, a.cols);
  const k = rank ?? full;
  assertInteger(k, "rank", 1, full);
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
  return { U, S, Vt };
}

/**
 * Randomized SVD of rank k (HMT Alg. 5.1 on top of {@link qb}).
 * @param a A (m × n), finite.
 * @param options rank k, oversampling p (default 10), power iterations q (default 2), re-normalization, test matrix.
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
export function randomizedSvd(a: Matrix, options: RangeFinderOptions, seed: SeedKey): RandomizedSvdResult {
  const { Q, B, cost } = qb(a, options, seed);
  const k = options.rank;
  const l = Q.cols;
  const small = exactSvd(B, k);
  // U = Q Ũ (m × ℓ · ℓ × k).
  const U = new Matrix(a.rows, k);
  matmulInto(Q.data, small.U.data, U.data, a.rows, l, k, false);
  const n = a.cols;
  cost.flops += 4 * n * l * l + 8 * l * l * l + 2 * a.rows * l * k;
  cost.floatsStored += a.rows * k + k + k * n;
  return { U, S: small.S, Vt: small.Vt, cost };
}
