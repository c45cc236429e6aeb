/**
 * Orthonormalization kernels for tall-skinny matrices (m ≫ n), the shape of every range-finder
 * sample Y = A Ω. Both work on the *transposed* copy (n × m row-major, so each column of the input
 * is one contiguous run of memory): the inner loops are then contiguous dot products and axpys over
 * m entries, which is what makes a 16384 × 74 QR take a fraction of a second in plain JS
 * (ml-matrix's QrDecomposition walks columns through nested arrays and is far slower there — see
 * docs/lowrank.md for the measurement). ml-matrix stays in charge of the small factorizations.
 */
import { Matrix, ShapeError, transpose } from "@randattn/core";
import { assertFinite, assertMatrix, assertNonEmpty } from "@randattn/core/internal";

/** Thin QR factors: `q` (m × n, orthonormal columns) and `r` (n × n upper triangular), m ≥ n. */
export interface ThinQr {
  q: Matrix;
  r: Matrix;
}

/**
 * Householder QR of a tall matrix (m ≥ n): A = Q R with Q (m × n) orthonormal to rounding and R
 * (n × n) upper triangular. Rank-deficient and zero columns are fine: a column with nothing below
 * the diagonal gets no reflector (τ = 0), so nothing is divided by a vanishing norm and Q stays
 * orthonormal — its extra columns then span arbitrary directions orthogonal to the others, which
 * is exactly what a range finder wants from a sample that lost rank.
 *
 * Reflector H_j = I − τ_j v_j v_jᵀ with v_j = x − α e₁, α = −sign(x₀)‖x‖ (no cancellation),
 * τ_j = 2 / ‖v_j‖² (Golub & Van Loan, Alg. 5.1.1 in unnormalized form).
 * @throws ShapeError when `a` is not a Matrix, is empty, or has more columns than rows.
 */
export function householderQr(a: Matrix): ThinQr {
  assertMatrix(a, "a");
  assertNonEmpty(a, "a");
  assertFinite(a, "a");
  const m = a.rows;
  const n = a.cols;
  if (n > m) {
    // A wide matrix has only m reflectors; the range-finder code never needs it, so refuse clearly.
    throw new ShapeError("a", "a tall matrix (rows ≥ cols)", a.shape);
  }
  const at = transpose(a).data; // column j of A = at[j*m .. (j+1)*m)
  const tau = new Float64Array(n);
  const r = new Matrix(n, n);
  const R = r.data;
  for (let j = 0; j < n; j++) {
    const cj = j * m;
    // Work on the column scaled by a power of two s (exact) so that ‖x‖² neither underflows
    // (entries ≈ 1e-300: ‖x‖² = 0 would skip a needed reflector) nor overflows (≈ 1e200). A
    // reflector depends only on the direction of v, so v is kept scaled; for ordinary columns the
    // arithmetic is the unscaled one shifted in exponent, bit for bit.
    let below = 0;
    for (let i = j + 1; i < m; i++) below = Math.max(below, Math.abs(at[cj + i]));
    const s = below === 0 ? 1 : powerOfTwoScale(Math.max(below, Math.abs(at[cj + j])));
    let sq = 0;
    if (s !== 1) for (let i = j + 1; i < m; i++) at[cj + i] *= s;
    for (let i = j + 1; i < m; i++) sq += at[cj + i] * at[cj + i];
    const x0 = at[cj + j] * s;
    if (sq === 0) {
      // Already upper triangular in this column: H_j = I.
      tau[j] = 0;
      if (s !== 1) for (let i = j + 1; i < m; i++) at[cj + i] /= s; // (rounding-level dust: restore it)
      R[j * n + j] = x0 / s;
      for (let k = j + 1; k < n; k++) R[j * n + k] = at[k * m + j];
      continue;
    }
    const beta = Math.sqrt(x0 * x0 + sq);
    const alpha = x0 >= 0 ? -beta : beta;
    const v0 = x0 - alpha;
    at[cj + j] = v0; // v stored in place of the column below (and on) the diagonal
    const vv = v0 * v0 + sq;
    const t = 2 / vv; // vv ≥ sq > 0: never a division by zero
    tau[j] = t;
    R[j * n + j] = alpha / s;
    applyReflector(at, cj, j, m, t, j + 1, n);
    for (let k = j + 1; k < n; k++) R[j * n + k] = at[k * m + j];
  }
  // Q = H_0 ⋯ H_{n−1} [I_n; 0], accumulated backwards; column c is untouched by H_j for c < j.
  const qt = new Float64Array(n * m);
  for (let c = 0; c < n; c++) qt[c * m + c] = 1;
  for (let j = n - 1; j >= 0; j--) {
    const t = tau[j];
    if (t === 0) continue;
    applyReflectorTo(at, j * m, qt, j, m, t, j, n);
  }
  return { q: transpose(new Matrix(n, m, qt)), r };
}

/**
 * 2^e with 2^e·x ∈ [1, 2) for x > 0 — multiplying by it is exact. Capped at 2^1023 (x subnormal:
 * 2^e·x is then ≥ 2^-51, still far from underflow) so the scale itself never overflows.
 */
export function powerOfTwoScale(x: number): number {
  return 2 ** Math.min(-Math.floor(Math.log2(x)), 1023);
}

/**
 * Applies H = I − τ v vᵀ (v = at[vo + j .. vo + m), rows j … m−1) to the columns c0 … c1−1 of `at`
 * itself (each a contiguous run of m). See {@link applyReflectorTo}.
 */
function applyReflector(at: Float64Array, vo: number, j: number, m: number, tau: number, c0: number, c1: number): void {
  applyReflectorTo(at, vo, at, j, m, tau, c0, c1);
}

/**
 * Applies H = I − τ v vᵀ to columns c0 … c1−1 of `target` (column c = target[c·m .. (c+1)·m)), four
 * columns per pass so each pass reads v once for four dot products and four updates — the loop
 * is memory-bound, and this quarters the traffic on v.
 */
function applyReflectorTo(
  v: Float64Array,
  vo: number,
  target: Float64Array,
  j: number,
  m: number,
  tau: number,
  c0: number,
  c1: number,
): void {
  let c = c0;
  for (; c + 3 < c1; c += 4) {
    const o0 = c * m;
    const o1 = o0 + m;
    const o2 = o1 + m;
    const o3 = o2 + m;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let i = j; i < m; i++) {
      const x = v[vo + i];
      s0 += x * target[o0 + i];
      s1 += x * target[o1 + i];
      s2 += x * target[o2 + i];
      s3 += x * target[o3 + i];
    }
    s0 *= tau;
    s1 *= tau;
    s2 *= tau;
    s3 *= tau;
    for (let i = j; i < m; i++) {
      const x = v[vo + i];
      target[o0 + i] -= s0 * x;
      target[o1 + i] -= s1 * x;
      target[o2 + i] -= s2 * x;
      target[o3 + i] -= s3 * x;
    }
  }
  for (; c < c1; c++) {
    const o = c * m;
    let s = 0;
    for (let i = j; i < m; i++) s += v[vo + i] * target[o + i];
    s *= tau;
    if (s !== 0) for (let i = j; i < m; i++) target[o + i] -= s * v[vo + i];
  }
}

/**
 * Orthonormal basis of the columns of a tall matrix: the Q of {@link householderQr} (m × n).
 * @throws ShapeError as {@link householderQr}.
 */
export function orthonormalize(a: Matrix): Matrix {
  return householderQr(a).q;
}

/**
 * The "L" factor of an LU factorization with partial pivoting, P A = L U, returned with its rows
 * put back in A's order (Pᵀ L, m × n). Its columns span the same space as A's when A has full
 * column rank, at a fraction of QR's cost — the cheap re-normalization between power iterations of
 * HMT §4.5 / fbpca (Halko–Martinsson–Tropp 2011; Li et al. 2017). L is not orthonormal, so the range
 * finder always ends with a QR. A column with no non-zero pivot left (rank deficiency) becomes a
 * unit vector at an unused row instead of dividing by zero.
 * @throws ShapeError when `a` is not a non-empty tall Matrix.
 */
export function luLowerFactor(a: Matrix): Matrix {
  assertMatrix(a, "a");
  assertNonEmpty(a, "a");
  assertFinite(a, "a");
  const m = a.rows;
  const n = a.cols;
  if (n > m) throw new ShapeError("a", "a tall matrix (rows ≥ cols)", a.shape);
  const at = transpose(a).data;
  const pivoted = new Uint8Array(m);
  const pivots: number[] = [];
  const l = new Float64Array(m);
  for (let j = 0; j < n; j++) {
    const cj = j * m;
    let p = -1;
    let best = -1;
    for (let i = 0; i < m; i++) {
      if (pivoted[i]) continue;
      const v = Math.abs(at[cj + i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    pivoted[p] = 1;
    pivots.push(p);
    if (best === 0) {
      // Nothing left in this column: L's column is e_p (harmless extra direction, no 0/0).
      at.fill(0, cj, cj + m);
      at[cj + p] = 1;
      continue;
    }
    // ratios to the pivot, both sides scaled by the same power of two (exact): a subnormal pivot
    // (entries ≈ 1e-310) would otherwise give 1/pivot = ∞ and ∞·0 = NaN
    const s = powerOfTwoScale(best);
    const inv = 1 / (at[cj + p] * s);
    for (let i = 0; i < m; i++) l[i] = at[cj + i] * s * inv;
    for (const q of pivots) l[q] = 0; // rows already pivoted hold U entries, not L entries
    for (let k = j + 1; k < n; k++) {
      const ck = k * m;
      const u = at[ck + p];
      if (u !== 0) for (let i = 0; i < m; i++) at[ck + i] -= l[i] * u;
    }
    l[p] = 1;
    at.set(l, cj);
  }
  return transpose(new Matrix(n, m, at));
}
