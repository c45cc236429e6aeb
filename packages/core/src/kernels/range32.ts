/**
 * When float32 arithmetic is trustworthy (issue #6). float32 has an 8-bit exponent: normal numbers
 * span [2⁻¹²⁶, 2¹²⁸) ≈ [1.2e-38, 3.4e38]. Outside it a product overflows to ±∞ (then ∞ − ∞ = NaN in
 * the softmax shift) or an input rounds to a subnormal or to 0 — V at 1e-300 becomes 0 and the
 * attention output a silently wrong 0. The float32 entry points (`matmul32`, `attention32`,
 * `streamingAttention32`, `precision: "float32"`) therefore compute in float64 instead — at least
 * as accurate, and the same rule as core's `attention` / `streamingAttention` — unless every
 * magnitude involved stays well inside that range:
 *
 * - each operand's largest |entry| is 0 or in [2⁻⁶⁰, 2⁶⁰] ≈ [8.7e-19, 1.2e18]: the products of two
 *   maxima then lie in [2⁻¹²⁰, 2¹²⁰], normal in float32, so the float32 error stays the relative
 *   γ_k·|A||B| of Higham Thm 3.5 (entries far below their matrix's maximum may still round to
 *   subnormals, but their absolute error ≤ 2⁻¹⁴⁹ is far below u·max, so the normwise bound holds);
 * - a dot product of k such terms, k·max|A|·max|B|, stays ≤ 2¹²⁴ (below float32's 2¹²⁸);
 * - for attention, the logits scale·⟨q, k⟩ — and the scaled queries scale·Q the fused driver stores
 *   in float32 — stay ≤ 2¹⁰⁰ ≈ 1.3e30 in magnitude.
 *
 * The check is one pass over the operands (O((m + n)·k) against the product's O(m·n·k)), and for
 * ordinary data (|x| between 1e-18 and 1e18) it never changes what is computed.
 */
import type { DenseArray } from "./dense.js";

/** Smallest non-zero operand maximum computed in float32 (2⁻⁶⁰). */
export const F32_SAFE_MIN = 2 ** -60;
/** Largest operand maximum computed in float32 (2⁶⁰). */
export const F32_SAFE_MAX = 2 ** 60;
/** Largest |logit| (and |scale·q|) computed in float32 (2¹⁰⁰). */
export const F32_SAFE_LOGIT = 2 ** 100;
/** Largest bound k·max|A|·max|B| on a float32 dot product (2¹²⁴). */
const F32_SAFE_DOT = 2 ** 124;

/** max |x[i]| over the first `len` entries; NaN when one is NaN, +∞ when one is ±∞. */
export function maxAbsOf(x: DenseArray, len: number = x.length): number {
  // Two independent Math.max chains (Math.max propagates NaN, so a NaN anywhere gives NaN): the
  // scan precedes every float32 product and attention call over all of A and B (or Q, K, V), and
  // the former compare-and-branch loop cost ≈ 1.3× this (micro-benchmark, 2²⁰ entries).
  let m0 = 0;
  let m1 = 0;
  let i = 0;
  for (; i + 1 < len; i += 2) {
    m0 = Math.max(m0, Math.abs(x[i]));
    m1 = Math.max(m1, Math.abs(x[i + 1]));
  }
  if (i < len) m0 = Math.max(m0, Math.abs(x[i]));
  return Math.max(m0, m1);
}

/**
 * max |K| and max |V| when the caller knows them already (an exact KV cache keeps them as it
 * appends: `KVCache.maxAbs`), so float32's range decision needs no rescan of K and V — the values
 * `maxAbsOf` would return, so the same decision. Internal.
 */
export interface KnownMaxima {
  /**
   * max |Q| as well, when the caller has it: `attention`'s float32 path takes all three maxima in its
   * finiteness check (options.ts `checkQueriesKeys`), so the fused driver's decision scans nothing.
   */
  readonly queries?: number;
  readonly keys: number;
  readonly values: number;
}

/** An operand maximum float32 represents with full relative precision (0 included). */
function inRange(m: number): boolean {
  return m === 0 || (m >= F32_SAFE_MIN && m <= F32_SAFE_MAX);
}

/** Whether the product of A (max |A| = `maxA`) and B over `k` shared terms is safe in float32. */
export function productInFloat32Range(maxA: number, maxB: number, k: number): boolean {
  return inRange(maxA) && inRange(maxB) && k * maxA * maxB <= F32_SAFE_DOT;
}

/**
 * scan.ts' `attentionInFloat32Range` from the operands' largest magnitudes q = max|Q|, k = max|K|,
 * v = max|V| (NaN when one holds a NaN, +∞ when one holds ±∞), for callers that have them already
 * (e.g. K and V shared by several query heads, scanned once).
 */
export function attentionMaximaInFloat32Range(q: number, k: number, v: number, nKV: number, d: number, scale: number): boolean {
  if (!inRange(q) || !inRange(k) || !inRange(v)) return false;
  const s = Math.abs(scale);
  // A V accumulates at most N_KV terms of weight ≤ 1 (exp(t − max) ≤ 1): ≤ N_KV·max|V| ≤ 2⁹⁰.
  return s * q <= F32_SAFE_LOGIT && s * q * k * d <= F32_SAFE_LOGIT && nKV * v <= F32_SAFE_DOT;
}
