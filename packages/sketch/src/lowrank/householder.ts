/**
 * Orthonormalization kernels for tall-skinny matrices (m ≫ n), the shape of every range-finder
 * sample Y = A Ω. Both work on the *transposed* copy (n × m row-major, so each column of the input
 * is one contiguous run of memory): the inner loops are then contiguous dot products and axpys over
 * m entries, which is what makes a 16384 × 74 QR take a fraction of a second in plain JS
 * (ml-matrix's QrDecomposition walks columns through nested arrays and is far slower there — see
 * docs/lowrank.md for the measurement). ml-matrix stays in charge of the small factorizations.
 */
import { Matrix, ShapeError, transpose } from "@randattn/core";
import { assertFinite, assertMatrix, assertNonEmpty, matmulInto, matmulTransBInto, transposeInto } from "@randattn/core/internal";

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
  return householderQrWith(a, QR_BLOCK);
}

/**
 * Widest column range the blocked QR factors column by column. Above it the QR is recursive
 * (Elmroth & Gustavson 2000; LAPACK dgeqrt3): each half's reflectors H_j0 ⋯ H_j1−1 = I − V T Vᵀ
 * (compact WY, Schreiber & Van Loan 1989) reach the other half through two products on core's
 * kernels (WebAssembly GEMM) instead of one memory-bound JavaScript pass per reflector, and Q is
 * formed from all n reflectors as one block. The reflectors are the unblocked ones, so Q and R agree
 * with the unblocked QR to rounding. 8 measured best on the 16384 × 74 range-finder samples
 * (4: more, smaller products; 16: more column-by-column work): 2.5× the unblocked QR (issue 14).
 */
export const QR_BLOCK = 8;

/**
 * Below this many entries (m·n) the QR runs unblocked: the block products are too small for the
 * kernels to beat the four-column passes (and every earlier bit of a small QR stays as it was).
 */
const QR_BLOCKED_MIN_ENTRIES = 1 << 14;

/**
 * {@link householderQr} with an explicit panel width (`block` ≤ 0 or ≥ n: unblocked, the
 * reference the blocked path is tested against). Internal: the public entry is `householderQr`.
 */
export function householderQrWith(a: Matrix, block: number): ThinQr {
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
  const diag = new Float64Array(n);
  const blocked = block > 0 && block < n && m * n >= QR_BLOCKED_MIN_ENTRIES;
  if (blocked) factorRecursive(at, m, 0, n, block, tau, diag);
  else for (let j = 0; j < n; j++) reflectColumn(at, m, j, n, tau, diag);
  const r = new Matrix(n, n);
  const R = r.data;
  // R's row j right of the diagonal is final once H_j has been applied (later reflectors only touch
  // rows > j), and H_j's v occupies rows ≥ j of column j only.
  for (let j = 0; j < n; j++) {
    R[j * n + j] = diag[j];
    for (let k = j + 1; k < n; k++) R[j * n + k] = at[k * m + j];
  }
  const qt = new Float64Array(n * m);
  if (blocked) {
    // Q = H_0 ⋯ H_{n−1} [I_n; 0] = [I_n; 0] − V T V₁ᵀ with all n reflectors as one block (V₁: the
    // top n rows of V): one Gram product for T and one product for Q, instead of a pass per panel.
    for (let j = 0; j < n; j++) {
      if (tau[j] === 0) at.fill(0, j * m, (j + 1) * m);
      else at.fill(0, j * m, j * m + j); // R above the diagonal: not part of v_j
    }
    const t = blockReflectorT(at, m, n, tau, 0);
    // Qᵀ = [I_n 0] − Mᵀ Vᵀ with M = T V₁ᵀ: M[r, c] = Σ_{s ≥ r} T[r, s] v_s[c], v_s[c] = at[s·m + c].
    const negMt = new Float64Array(n * n);
    for (let c = 0; c < n; c++)
      for (let rr = 0; rr < n; rr++) {
        let acc = 0;
        for (let s2 = rr; s2 < n; s2++) acc += t[rr * n + s2] * at[s2 * m + c];
        negMt[c * n + rr] = -acc;
      }
    for (let c = 0; c < n; c++) qt[c * m + c] = 1;
    matmulInto(negMt, at, qt, n, n, m, true);
  } else {
    // Q = H_0 ⋯ H_{n−1} [I_n; 0], accumulated backwards; column c is untouched by H_j for c < j.
    for (let c = 0; c < n; c++) qt[c * m + c] = 1;
    for (let j = n - 1; j >= 0; j--) {
      const t = tau[j];
      if (t === 0) continue;
      applyReflectorTo(at, j * m, qt, j, m, t, j, n);
    }
  }
  transposeInto(qt, at, n, m); // at is free now: Q (m × n) takes its buffer
  return { q: new Matrix(m, n, at), r };
}

/**
 * Factors columns j0 … j1−1 (their reflectors applied within this range only), recursively
 * (Elmroth & Gustavson 2000): the left half is factored, its reflectors reach the right half as one
 * block reflector through two products on core's kernels, then the right half is factored; ranges
 * of ≤ `leaf` columns run column by column.
 */
function factorRecursive(at: Float64Array, m: number, j0: number, j1: number, leaf: number, tau: Float64Array, diag: Float64Array): void {
  const w = j1 - j0;
  if (w <= leaf) {
    for (let j = j0; j < j1; j++) reflectColumn(at, m, j, j1, tau, diag);
    return;
  }
  const h = j0 + Math.max(leaf, Math.floor(w / 2 / 4) * 4);
  factorRecursive(at, m, j0, h, leaf, tau, diag);
  const vt = panelReflectors(at, m, j0, h, tau);
  const t = blockReflectorT(vt.v, m, h - j0, tau, j0);
  // H_{h−1} ⋯ H_{j0} C = (I − V Tᵀ Vᵀ) C; in the transposed layout Cᵀ ← Cᵀ − (Cᵀ V) T Vᵀ.
  applyBlockReflector(vt.v, t, false, at.subarray(h * m, j1 * m), j1 - h, m, h - j0);
  factorRecursive(at, m, h, j1, leaf, tau, diag);
}

/**
 * Householder reflector of column j (rows j … m−1 of at[j·m …]), stored in place below and on the
 * diagonal, τ_j in `tau`, R[j, j] in `diag`; applied to columns j+1 … c1−1 (the rest of the panel).
 */
function reflectColumn(at: Float64Array, m: number, j: number, c1: number, tau: Float64Array, diag: Float64Array): void {
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
    diag[j] = x0 / s;
    return;
  }
  const beta = Math.sqrt(x0 * x0 + sq);
  const alpha = x0 >= 0 ? -beta : beta;
  const v0 = x0 - alpha;
  at[cj + j] = v0; // v stored in place of the column below (and on) the diagonal
  const vv = v0 * v0 + sq;
  const t = 2 / vv; // vv ≥ sq > 0: never a division by zero
  tau[j] = t;
  diag[j] = alpha / s;
  applyReflector(at, cj, j, m, t, j + 1, c1);
}

/** Vᵀ of a panel (nb × m, row t = v_{j0+t}, zero above its diagonal entry and wherever τ = 0). */
function panelReflectors(at: Float64Array, m: number, j0: number, j1: number, tau: Float64Array): { v: Float64Array } {
  const nb = j1 - j0;
  const v = new Float64Array(nb * m);
  for (let t = 0; t < nb; t++) {
    const j = j0 + t;
    if (tau[j] !== 0) v.set(at.subarray(j * m + j, (j + 1) * m), t * m + j);
  }
  return { v };
}

/**
 * T of the compact-WY form H_j0 ⋯ H_j0+nb−1 = I − V T Vᵀ (LAPACK dlarft, forward, columnwise):
 * T[i, i] = τ_i, T[0:i, i] = −τ_i T[0:i, 0:i] (Vᵀ v_i), with the Gram matrix VᵀV from one product.
 */
function blockReflectorT(vt: Float64Array, m: number, nb: number, tau: Float64Array, j0: number): Float64Array {
  const g = new Float64Array(nb * nb);
  matmulTransBInto(vt, vt, g, nb, m, nb);
  const t = new Float64Array(nb * nb);
  for (let i = 0; i < nb; i++) {
    const ti = tau[j0 + i];
    t[i * nb + i] = ti;
    if (ti === 0) continue; // H_i = I: its column of T stays zero
    for (let r = 0; r < i; r++) {
      let s = 0;
      for (let c = r; c < i; c++) s += t[r * nb + c] * g[c * nb + i];
      t[r * nb + i] = -ti * s;
    }
  }
  return t;
}

/**
 * A block reflector applied to X (m × rows) held transposed (`xt`, rows × m row-major, one column
 * of X per row): `transT` false applies I − V Tᵀ Vᵀ = H_{j1−1} ⋯ H_{j0} (the factorization's
 * order), i.e. Xᵀ ← Xᵀ − (Xᵀ V) T Vᵀ; `transT` true applies I − V T Vᵀ = H_{j0} ⋯ H_{j1−1} (Q's
 * backward accumulation), Xᵀ ← Xᵀ − (Xᵀ V) Tᵀ Vᵀ. The two m-long products run on core's kernels.
 */
function applyBlockReflector(
  vt: Float64Array,
  t: Float64Array,
  transT: boolean,
  xt: Float64Array,
  rows: number,
  m: number,
  nb: number,
): void {
  const w = new Float64Array(rows * nb);
  matmulTransBInto(xt, vt, w, rows, m, nb); // W = Xᵀ V (rows × nb)
  // Y = −W T (or −W Tᵀ), T upper triangular: nb² per row, negligible beside the two products.
  const y = new Float64Array(rows * nb);
  for (let i = 0; i < rows; i++) {
    for (let c = 0; c < nb; c++) {
      let s = 0;
      if (transT) for (let r = c; r < nb; r++) s += w[i * nb + r] * t[c * nb + r];
      else for (let r = 0; r <= c; r++) s += w[i * nb + r] * t[r * nb + c];
      y[i * nb + c] = -s;
    }
  }
  matmulInto(y, vt, xt, rows, nb, m, true); // Xᵀ += Y Vᵀ
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
