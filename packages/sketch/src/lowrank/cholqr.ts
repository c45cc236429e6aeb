/**
 * CholeskyQR2 (Fukaya, Nakatsukasa, Yanagisawa & Yamamoto 2014, "CholeskyQR2: a simple and
 * communication-avoiding algorithm for computing a tall-skinny QR factorization"; Yamamoto,
 * Nakatsukasa, Yanagisawa & Fukaya 2015, "Roundoff error analysis of the CholeskyQR2 algorithm"):
 *
 *   G₁ = YᵀY = R₁ᵀR₁ (Cholesky),  Q₁ = Y R₁⁻¹,
 *   G₂ = Q₁ᵀQ₁ = R₂ᵀR₂,           Q  = Q₁ R₂⁻¹     (R = R₂R₁, not formed).
 *
 * All m-long work is two Gram products (SYRK: the upper block triangle only) and two products by the
 * ℓ × ℓ inverse triangle (TRMM: the triangle's zeros skipped) on core's SIMD kernels (tallproducts.ts)
 * — no column-by-column pass — so on the 16384 × 74 range-finder samples it costs less than the
 * blocked Householder QR (issue 14, measured in docs/lowrank.md). One pass leaves ‖Q₁ᵀQ₁ − I‖ ≈ κ(Y)²u;
 * the second pass brings it to O(u) as long as Q₁ is well conditioned (Yamamoto et al. 2015:
 * κ(Y) ≲ u^{-1/2}, about 10⁸).
 *
 * The rule (a posteriori, so it cannot be fooled by an optimistic condition estimate): the result is
 * accepted only when both Cholesky factorizations succeed (every pivot finite and positive) and the
 * computed second Gram matrix satisfies ‖G₂ − I‖_F ≤ 1/2 — then ‖Q₁ᵀQ₁ − I‖₂ ≤ 1/2, κ(Q₁)² ≤ 3,
 * and the second pass is the well-conditioned case of the analysis. Otherwise (rank-deficient or
 * ill-conditioned Y, a zero column, under/overflow in the Gram) `null` is returned and the caller
 * falls back to Householder, which handles every one of those cases.
 */
import { powerOfTwoScale } from "./householder.js";
import { maxAbs } from "./scan.js";
import { gramMatrix, upperTriangularRightProduct } from "./tallproducts.js";

/** Fewer entries than this (m·ℓ) or a sample less than 4× taller than wide: Householder directly. */
const CHOLQR_MIN_ENTRIES = 1 << 14;

/** Samples with max|Y| in [2^-300, 2^300] run unscaled: m·max² stays far inside the float64 range. */
const GRAM_SAFE_EXPONENT = 300;

/** The largest ‖Q₁ᵀQ₁ − I‖_F for which the second pass is accepted (see the module doc). */
const SECOND_GRAM_TOLERANCE = 0.5;

/**
 * Q (m × ℓ, orthonormal to O(u)) of a tall Y by CholeskyQR2, or `null` when the rule in the module
 * doc rejects it (the caller then runs Householder). Y is not modified. With `onePassKappa` > 0
 * the first pass's Q₁ is returned alone when ‖R₁‖_F‖R₁⁻¹‖_F (≥ κ₂(Y)) ≤ onePassKappa — a
 * well-conditioned basis (‖Q₁ᵀQ₁ − I‖ ≲ κ²u), not an orthonormal one: for the power steps only.
 */
export function choleskyQr2(y: Float64Array, m: number, l: number, onePassKappa = 0): Float64Array | null {
  const first = firstPass(y, m, l);
  if (first === null) return null;
  if (onePassKappa > 0 && kappaBound(first, l) <= onePassKappa) return firstBasis(first, m, l);
  return secondPass(first, m, l);
}

/**
 * The basis of one power step (see `powerStepBasis` in rangefinder.ts), as one of:
 * - `{ rInv }`: the certified one-pass case (‖R₁‖_F‖R₁⁻¹‖_F ≤ onePassKappa) on a Y that needed no
 *   rescaling — Q₁ = Y·R₁⁻¹ is NOT formed: the caller applies R₁⁻¹ to the next product instead
 *   (Aᵀ(Y R₁⁻¹) = (AᵀY) R₁⁻¹, an ℓ × ℓ product on the n-sized side; issue 14);
 * - `{ q }`: an explicit basis (a rescaled Y's one-pass Q₁, or CholeskyQR2's Q when the certificate fails);
 * - `null`: rejected (the caller runs Householder).
 */
export function powerStepFactor(
  y: Float64Array,
  m: number,
  l: number,
  onePassKappa: number,
): { rInv: Float64Array; q?: undefined } | { q: Float64Array; rInv?: undefined } | null {
  const first = firstPass(y, m, l);
  if (first === null) return null;
  if (kappaBound(first, l) <= onePassKappa) return first.scaled ? { q: firstBasis(first, m, l) } : { rInv: first.r1inv };
  const q = secondPass(first, m, l);
  return q === null ? null : { q };
}

/** The first CholeskyQR pass's pieces: the (possibly rescaled) sample, its Gram matrix and R₁⁻¹. */
interface FirstPass {
  ys: Float64Array;
  /** Whether `ys` is a rescaled copy (then the caller's Y is untouched and `ys` may be overwritten). */
  scaled: boolean;
  g1: Float64Array;
  r1inv: Float64Array;
}

/** G₁ = YᵀY and R₁⁻¹ (Y rescaled first when max|Y| is far from 1), or null when the rule rejects Y. */
function firstPass(y: Float64Array, m: number, l: number): FirstPass | null {
  if (m * l < CHOLQR_MIN_ENTRIES || m < 4 * l) return null;
  // An exact power-of-two rescaling when max|Y| is far from 1, so the Gram (entries up to m·max²)
  // neither overflows nor underflows (the span, hence Q, is unchanged); ordinary samples skip the copy.
  const mx = maxAbs(y);
  if (!(mx > 0) || !Number.isFinite(mx)) return null;
  const s = mx >= 2 ** -GRAM_SAFE_EXPONENT && mx <= 2 ** GRAM_SAFE_EXPONENT ? 1 : powerOfTwoScale(mx);
  let ys = y;
  if (s !== 1) {
    ys = new Float64Array(y.length);
    for (let i = 0; i < y.length; i++) ys[i] = y[i] * s;
  }
  const g1 = gramMatrix(ys, m, l);
  const r1inv = choleskyInverseFactor(g1, l);
  return r1inv === null ? null : { ys, scaled: s !== 1, g1, r1inv };
}

/**
 * ‖R₁‖_F‖R₁⁻¹‖_F ≥ κ₂(R₁) = κ₂(Y), with ‖R₁‖_F² = tr G₁: a rigorous bound, so one pass is kept
 * only where its orthogonality loss (≈ κ²u) is provably small.
 */
function kappaBound(first: FirstPass, l: number): number {
  let tr = 0;
  for (let i = 0; i < l; i++) tr += first.g1[i * l + i];
  let inv = 0;
  for (let i = 0; i < first.r1inv.length; i++) inv += first.r1inv[i] * first.r1inv[i];
  return Math.sqrt(tr * inv);
}

/** Q₁ = Y·R₁⁻¹ (a triangular product: tallproducts.ts). */
function firstBasis(first: FirstPass, m: number, l: number): Float64Array {
  const q1 = new Float64Array(m * l);
  upperTriangularRightProduct(first.ys, first.r1inv, q1, m, l);
  return q1;
}

/** The second pass: Q = Q₁·R₂⁻¹ after the check ‖G₂ − I‖_F ≤ ½ (module doc), or null. */
function secondPass(first: FirstPass, m: number, l: number): Float64Array | null {
  const q1 = firstBasis(first, m, l);
  const g2 = gramMatrix(q1, m, l);
  let dev = 0;
  for (let i = 0; i < l; i++)
    for (let j = 0; j < l; j++) {
      const d = g2[i * l + j] - (i === j ? 1 : 0);
      dev += d * d;
    }
  if (!(dev <= SECOND_GRAM_TOLERANCE * SECOND_GRAM_TOLERANCE)) return null;
  const r2inv = choleskyInverseFactor(g2, l);
  if (r2inv === null) return null;
  const q = first.scaled ? first.ys : new Float64Array(m * l); // the scaled copy is free now
  upperTriangularRightProduct(q1, r2inv, q, m, l);
  return q;
}

/**
 * R⁻¹ (ℓ × ℓ, upper triangular, row-major) of the Cholesky factor G = RᵀR, or `null` when a pivot is
 * not finite and positive (G not numerically positive definite). The inverse is formed explicitly so
 * that Q = Y R⁻¹ is one GEMM; the triangular inverse is computed by back substitution column by
 * column (Higham 2002, §14.2: its residual is small componentwise), O(ℓ³) — negligible beside m·ℓ².
 */
function choleskyInverseFactor(g: Float64Array, l: number): Float64Array | null {
  const r = new Float64Array(l * l);
  for (let j = 0; j < l; j++) {
    let d = g[j * l + j];
    for (let k = 0; k < j; k++) d -= r[k * l + j] * r[k * l + j];
    if (!(d > 0) || !Number.isFinite(d)) return null;
    const rjj = Math.sqrt(d);
    r[j * l + j] = rjj;
    for (let i = j + 1; i < l; i++) {
      let v = g[j * l + i];
      for (let k = 0; k < j; k++) v -= r[k * l + j] * r[k * l + i];
      r[j * l + i] = v / rjj;
    }
  }
  // X = R⁻¹, upper triangular: X[j, j] = 1/R[j, j], X[i, j] = −(Σ_{i<k≤j} R[i, k] X[k, j]) / R[i, i].
  const x = new Float64Array(l * l);
  for (let j = 0; j < l; j++) {
    x[j * l + j] = 1 / r[j * l + j];
    for (let i = j - 1; i >= 0; i--) {
      let v = 0;
      for (let k = i + 1; k <= j; k++) v += r[i * l + k] * x[k * l + j];
      x[i * l + j] = -v / r[i * l + i];
    }
  }
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) return null;
  return x;
}
