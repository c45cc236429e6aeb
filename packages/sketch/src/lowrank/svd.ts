/**
 * Randomized SVD (Halko, Martinsson & Tropp 2011, Alg. 5.1): Q from the range finder, B = QᵀA
 * (ℓ × n, small), the SVD B = Ũ Σ Vᵀ (ml-matrix's Golub–Kahan–Reinsch, run bit for bit on flat
 * arrays by ./gkr.ts), U = Q Ũ, truncated to the target rank k. The GKR SVD handles only the small
 * factor; the m-sized products use core's kernels.
 */
import { Matrix, type SeedKey, transpose } from "@randattn/core";
import { assertInteger, assertOptions, matmulTransBInto, tallNarrowMatmulInto } from "@randattn/core/internal";
import type { Cost } from "../operators/index.js";
import { type GkrSvd, golubKahanSvd } from "./gkr.js";
import { householderQr, powerOfTwoScale } from "./householder.js";
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
 * Thin SVD of a (small) matrix by ml-matrix's algorithm (./gkr.ts: the same bits on flat arrays),
 * truncated to `rank` (default min(m, n)): A ≈ U diag(S) Vᵀ, singular values in decreasing order. The reference (deterministic) SVD used on B and by the
 * "exact" paths of the MLA tools; O(mn·min(m, n)), so only for small or moderate sizes.
 * @throws ShapeError / NonFiniteError for a bad `a`; ValueError for a rank outside [1, min(m, n)].
 */
export function exactSvd(a: Matrix, options: ExactSvdOptions = {}): ExactSvdResult {
  return truncatedSvd(a, options, true);
}

/** {@link exactSvd}; `remember`: through {@link rememberedSvd} (the public calls) or not (a randomized SVD's factors). */
function truncatedSvd(a: Matrix, options: ExactSvdOptions, remember: boolean): ExactSvdResult {
  assertOptions(options, "options");
  checkInputMatrix(a, "a");
  const full = Math.min(a.rows, a.cols);
  const k = options.rank ?? full;
  assertInteger(k, "options.rank", 1, full);
  const { svd, factor, order } = remember ? rememberedSvd(a, true) : referenceSvd(a, true);
  const u = svd.u as Float64Array; // a.rows × full
  const v = svd.v as Float64Array; // a.cols × full
  const U = new Matrix(a.rows, k);
  const Vt = new Matrix(k, a.cols);
  const S = new Float64Array(k);
  for (let t = 0; t < k; t++) {
    const c = order[t];
    S[t] = svd.s[c] * factor;
    for (let i = 0; i < a.rows; i++) U.data[i * k + t] = u[i * full + c];
    for (let j = 0; j < a.cols; j++) Vt.data[t * a.cols + j] = v[j * full + c];
  }
  const cost: Cost = { flops: 4 * a.rows * a.cols * full + 8 * full ** 3, floatsStored: a.rows * a.cols + (a.rows + a.cols + 1) * full };
  return { U, S, Vt, cost };
}

/**
 * The singular values of `a` alone, σ₁ ≥ … ≥ σ_min(m, n) ≥ 0 — bit for bit `exactSvd(a).S`, for a
 * caller that needs only the spectrum (an Eckart–Young optimum, an effective rank). ml-matrix's
 * Golub–Kahan–Reinsch iteration (JAMA's) applies each rotation to U and V beside σ and never reads
 * them back, so leaving the vectors out changes no σ and skips most of the work (issue 14: a
 * 512 × 32 latent 66 → 10.5 ms, 2048 × 64 277 → 91 ms).
 * @throws ShapeError / NonFiniteError for a bad `a`.
 */
export function exactSingularValues(a: Matrix): Float64Array {
  checkInputMatrix(a, "a");
  const { svd, factor, order } = rememberedSvd(a, false);
  return Float64Array.from(order, (c) => svd.s[c] * factor);
}

type ReferenceSvd = ReturnType<typeof referenceSvd>;

/** Largest input (entries) whose SVD is remembered, and how many are (see {@link rememberedSvd}). */
const REMEMBERED_MAX_ENTRIES = 1 << 18;
const REMEMBERED_COUNT = 2;
const remembered: { rows: number; cols: number; bits: Uint32Array; result: ReferenceSvd }[] = [];

/**
 * {@link referenceSvd}, remembering the last few results by the input's bits (issue 14): a sweep over
 * the rank — the error against d_L or k, an Eckart–Young optimum beside each point — asks for the
 * SVD of one matrix once per rank, and only the truncation differs (mha-to-mla: 8 latent widths per
 * trial, 38 % of the sweep's CPU in these SVDs). A hit needs the same shape and the same 64-bit
 * pattern in every entry (compared as 32-bit words, so −0 and +0 differ), and the iteration is
 * deterministic, so it returns what recomputing would; a result with vectors serves a call without
 * (σ is the same bits either way, see {@link exactSingularValues}). Each entry keeps a private copy
 * of the input: the caller's matrix may change afterwards. Callers only read the result. The
 * randomized SVD's small factors go to {@link referenceSvd} directly: they differ every call.
 */
function rememberedSvd(a: Matrix, vectors: boolean): ReferenceSvd {
  const n = a.data.length;
  if (n > REMEMBERED_MAX_ENTRIES) return referenceSvd(a, vectors);
  const bits = new Uint32Array(a.data.buffer, a.data.byteOffset, 2 * n);
  const at = remembered.findIndex((r) => r.rows === a.rows && r.cols === a.cols && sameBits(r.bits, bits));
  // Most recent first; a hit without the vectors now wanted is replaced by the result with them.
  const entry =
    at >= 0 ? remembered.splice(at, 1)[0] : { rows: a.rows, cols: a.cols, bits: bits.slice(), result: referenceSvd(a, vectors) };
  if (vectors && entry.result.svd.u === undefined) entry.result = referenceSvd(a, true);
  remembered.unshift(entry);
  if (remembered.length > REMEMBERED_COUNT) remembered.pop();
  return entry.result;
}

/** Whether two inputs of the same shape hold the same bits. */
function sameBits(x: Uint32Array, y: Uint32Array): boolean {
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * ml-matrix's SVD of `a` (`autoTranspose`, with or without the singular vectors) as {@link golubKahanSvd}
 * runs it, bit for bit, on flat arrays — the scale factor and σ's decreasing order with it.
 */
function referenceSvd(a: Matrix, vectors: boolean): { svd: GkrSvd; factor: number; order: number[] } {
  // ml-matrix's SVD iteration never terminates on entries of ≈ 1e-300 (its convergence test
  // underflows) — issue #6: run it on an exact power-of-two rescaling and scale S back.
  const { scaled, factor } = safeScaled(a);
  const svd = golubKahanSvd(scaled.data, a.rows, a.cols, vectors);
  const sv = svd.s;
  const order = Array.from(sv.keys()).sort((i, j) => sv[j] - sv[i]);
  return { svd, factor, order };
}

/**
 * SVD of the wide ℓ × n factor B (ℓ ≤ n), truncated to k: when n ≥ 2ℓ, first Bᵀ = Q₂R₂ (Householder,
 * n × ℓ) and then the SVD of the ℓ × ℓ R₂ᵀ = U Σ Wᵀ (one-sided Jacobi, below), so B = R₂ᵀQ₂ᵀ =
 * U Σ (Q₂W)ᵀ — the QR preconditioning of LAPACK's dgesvd / Chan (1982) for a matrix far from square.
 * The SVD then runs on ℓ² entries instead of ℓn; both steps are backward stable, so the factors
 * are as accurate (issue 14: measured below).
 */
function wideSvd(b: Matrix, k: number): SvdFactors {
  const l = b.rows;
  const n = b.cols;
  if (n < 2 * l) return truncatedSvd(b, { rank: k }, false);
  const { q: q2, r: r2 } = householderQr(transpose(b));
  // R₂ᵀ = U Σ Wᵀ by one-sided Jacobi (below); the GKR SVD when R₂ has a zero (or underflowing) direction in the top k.
  const inner = jacobiSvd(r2, k) ?? truncatedSvd(transpose(r2), { rank: k }, false);
  // Ũ = U and Vᵀ = Wᵀ Q₂ᵀ (k × ℓ · ℓ × n).
  const Vt = new Matrix(k, n);
  matmulTransBInto(inner.Vt.data, q2.data, Vt.data, k, l, n);
  return { U: inner.U, S: inner.S, Vt };
}

/**
 * SVD of M = Rᵀ (R: ℓ × ℓ, so M's columns are R's rows, contiguous) by one-sided Jacobi (Hestenes
 * 1958; Demmel & Veselić 1992): plane rotations from the right orthogonalize M's columns pairwise
 * until every pair satisfies |m_pᵀm_q| ≤ ε‖m_p‖‖m_q‖, accumulating W; then σ_j = ‖m_j‖ and
 * u_j = m_j/σ_j, so M = U Σ Wᵀ — accurate to ε relative to each σ (better than bidiagonalization
 * for graded R). Why not ml-matrix here (issue 14, CPU time under load): its SVD of the 74 × 512 B
 * of the 16384 × 512 RSVD took 100–690 ms over its first six calls (seldom-run code the JIT
 * compiles late) and 50–560 ms on the 74 × 74 R₂ᵀ; a whole randomized SVD of that B through
 * QR + this loop took 30–290 ms. Returns null (the caller takes the GKR SVD) when one of the top k
 * columns vanishes — its u_j would need completing.
 */
function jacobiSvd(r: Matrix, k: number): SvdFactors | null {
  const l = r.rows;
  // An exact power-of-two rescaling (σ scaled back below) so the squared norms neither under- nor overflow.
  let mx = 0;
  for (let i = 0; i < r.data.length; i++) mx = Math.max(mx, Math.abs(r.data[i]));
  if (mx === 0) return null;
  const scale = powerOfTwoScale(mx);
  const x = r.data.map((v) => v * scale); // row j = column j of M
  const w = new Float64Array(l * l); // row j = column j of W
  for (let j = 0; j < l; j++) w[j * l + j] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (let p = 0; p < l - 1; p++) {
      const po = p * l;
      for (let q = p + 1; q < l; q++) {
        const qo = q * l;
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        for (let i = 0; i < l; i++) {
          const xp = x[po + i];
          const xq = x[qo + i];
          alpha += xp * xp;
          beta += xq * xq;
          gamma += xp * xq;
        }
        if (gamma === 0 || Math.abs(gamma) <= Number.EPSILON * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        // the rotation that zeroes m_pᵀm_q (Golub & Van Loan §8.5.2, the smaller angle)
        const zeta = (beta - alpha) / (2 * gamma);
        const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const sn = c * t;
        for (let i = 0; i < l; i++) {
          const xp = x[po + i];
          const xq = x[qo + i];
          x[po + i] = c * xp - sn * xq;
          x[qo + i] = sn * xp + c * xq;
          const wp = w[po + i];
          const wq = w[qo + i];
          w[po + i] = c * wp - sn * wq;
          w[qo + i] = sn * wp + c * wq;
        }
      }
    }
    if (!rotated) break;
  }
  const sigma = new Float64Array(l);
  for (let j = 0; j < l; j++) {
    let s2 = 0;
    for (let i = 0; i < l; i++) s2 += x[j * l + i] * x[j * l + i];
    sigma[j] = Math.sqrt(s2);
  }
  const order = Array.from(sigma.keys()).sort((a, b) => sigma[b] - sigma[a] || a - b);
  if (!(sigma[order[k - 1]] > 0)) return null;
  const U = new Matrix(l, k);
  const Vt = new Matrix(k, l);
  const S = new Float64Array(k);
  for (let t = 0; t < k; t++) {
    const j = order[t];
    S[t] = sigma[j] / scale;
    const inv = 1 / sigma[j];
    for (let i = 0; i < l; i++) U.data[i * k + t] = x[j * l + i] * inv;
    Vt.data.set(w.subarray(j * l, (j + 1) * l), t * l);
  }
  return { U, S, Vt };
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
  tallNarrowMatmulInto(Q.data, small.U.data, U.data, a.rows, l, k);
  const n = a.cols;
  cost.flops += 4 * n * l * l + 8 * l * l * l + 2 * a.rows * l * k;
  cost.floatsStored += a.rows * k + k + k * n;
  return { U, S: small.S, Vt: small.Vt, cost };
}
