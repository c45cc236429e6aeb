/**
 * The Golub–Kahan–Reinsch SVD (Golub & Reinsch 1970; the JAMA formulation: Householder
 * bidiagonalization, then implicit-shift QR sweeps on the bidiagonal) exactly as ml-matrix's
 * `SingularValueDecomposition` runs it with `autoTranspose: true` — the same operations on the same
 * values in the same order, so the same bits — on flat `Float64Array`s instead of ml-matrix's
 * arrays of rows behind `get`/`set` calls.
 *
 * Why not ml-matrix itself (issue 14, measured on the quickstart sweep): its constructor is one
 * ≈ 500-line function that V8 optimizes in the middle of its first loops and then deoptimizes as
 * each not-yet-run branch is reached ("insufficient type feedback"): 5–7 TurboFan compilations of
 * up to 131 ms, 200–430 ms of compiler time per thread (isolate) before it settles — a cost every
 * sweep worker pays again, the largest single item of the compiler's 1.2–1.5 s per quickstart
 * (this port in small functions: 52–95 ms).
 * ml-matrix stays the oracle: the tests check this port against it bit for bit.
 *
 * Layout as in ml-matrix: with m ≥ n the working matrix (the input, or its transpose when it is
 * wide), its transpose `at` (n × m, row j = column j), U and V accumulated transposed (row j =
 * singular vector j) so the inner loops run along contiguous memory.
 */

import { PlaneOps, transposeInto } from "@randattn/core/internal";

/** The result of {@link golubKahanSvd}. */
export interface GkrSvd {
  /** The singular values in the order the iteration leaves them (sorted decreasingly, ≥ 0). */
  s: Float64Array;
  /** Left singular vectors, rows × min(rows, cols), row-major; present only when asked for. */
  u?: Float64Array;
  /** Right singular vectors, cols × min(rows, cols), row-major; present only when asked for. */
  v?: Float64Array;
}

/** √(a² + b²) without overflow, ml-matrix's `hypotenuse` (the same operations, so the same bits). */
function hypotenuse(a: number, b: number): number {
  let r = 0;
  if (Math.abs(a) > Math.abs(b)) {
    r = b / a;
    return Math.abs(a) * Math.sqrt(1 + r * r);
  }
  if (b !== 0) {
    r = a / b;
    return Math.abs(b) * Math.sqrt(1 + r * r);
  }
  return 0;
}

/**
 * The thin SVD of the rows × cols row-major matrix `a` (not modified): ml-matrix's
 * `new SVD(a, { autoTranspose: true, computeLeftSingularVectors: left, computeRightSingularVectors: right })`
 * — `s` its `diagonal`, `u` and `v` its left and right singular vectors restricted to the
 * min(rows, cols) columns they have (each only when asked for). Raw: the caller checks sizes (≥ 1 each) and finiteness.
 * The phases are separate functions (not one, as in ml-matrix) so that V8 optimizes each when it
 * is hot instead of the whole at once, and a branch not run yet deoptimizes only its own phase.
 */
export function golubKahanSvd(a: Float64Array, rows: number, cols: number, left: boolean, right: boolean = left): GkrSvd {
  // The working matrix is m × n with m ≥ n: the input, or its transpose when it is wide.
  const swapped = rows < cols;
  const m = swapped ? cols : rows;
  const n = swapped ? rows : cols;
  // at (n × m): at[j·m + i] = working(i, j). For a wide input that is the input itself.
  const at = new Float64Array(n * m);
  if (swapped) at.set(a.subarray(0, rows * cols));
  else transposeInto(a, at, m, n);
  // The working matrix's U and V: a wide input's left vectors are its V (ml-matrix swaps the wishes).
  const wantu = swapped ? right : left;
  const wantv = swapped ? left : right;
  const w: Work = {
    m,
    n,
    s: new Float64Array(Math.min(m + 1, n)),
    e: new Float64Array(n),
    U: wantu ? new Float64Array(Math.min(m, n) * m) : null, // U[j·m + i] = U(i, j)
    V: wantv ? new Float64Array(n * n) : null, // V[j·n + i] = V(i, j)
    uOps: null,
    vOps: null,
  };
  const nct = Math.min(m - 1, n);
  const nrt = Math.max(0, Math.min(n - 2, m));
  bidiagonalize(at, w, nct, nrt);
  const p = Math.min(n, m + 1);
  const { s, e } = w;
  if (nct < n) s[nct] = at[nct * m + nct];
  if (m < p) s[p - 1] = 0;
  if (nrt + 1 < p) e[nrt] = at[(p - 1) * m + nrt];
  e[p - 1] = 0;
  if (w.U) accumulateLeft(w.U, m, Math.min(m, n), nct, s);
  if (w.V) accumulateRight(w.V, n, nrt, e);
  // The iteration never reads U or V (JAMA's algorithm): their rotations, swaps and sign flips are
  // recorded in order and run after it on core's SIMD kernel — the same operations, the same bits
  // (m = 49: 1.4×, 128: 1.6× the whole SVD) — or, for short rows, applied as they come.
  if (w.U) w.uOps = new PlaneOps(w.U, Math.min(m, n), m);
  if (w.V) w.vOps = new PlaneOps(w.V, n, n);
  diagonalize(w, p);
  w.uOps?.flush();
  w.vOps?.flush();
  // Back to row-major factors with nu = n columns: the working matrix's U (m × n) and V (n × n);
  // a wide input's factors are the other way round.
  const uRows = w.U ? rowMajor(w.U, m, n) : undefined;
  const vRows = w.V ? rowMajor(w.V, n, n) : undefined;
  const out: GkrSvd = { s };
  if (left) out.u = swapped ? vRows : uRows;
  if (right) out.v = swapped ? uRows : vRows;
  return out;
}

/** A factor accumulated transposed (`count` vectors of length `stride`, one per row) as the stride × count row-major matrix. */
function rowMajor(x: Float64Array, stride: number, count: number): Float64Array {
  const out = new Float64Array(stride * count);
  transposeInto(x, out, count, stride);
  return out;
}

/** The state the phases share: sizes, diagonal s, superdiagonal e, the transposed factors (null without vectors). */
interface Work {
  m: number;
  n: number;
  s: Float64Array;
  e: Float64Array;
  U: Float64Array | null;
  V: Float64Array | null;
  /** The iteration's operations on U and V (core's linalg/plane.ts: recorded and run after it, or at once). */
  uOps: PlaneOps | null;
  vOps: PlaneOps | null;
}

/**
 * Householder bidiagonalization of the working matrix (transposed in `at`): s (diagonal), e
 * (superdiagonal). Its steps are small functions of their own: V8 compiles a loop nest of this
 * size on stack replacement during the first call and deoptimizes it at every branch that call did
 * not reach (measured: 4–7 recompilations per isolate as one function).
 */
function bidiagonalize(at: Float64Array, w: Work, nct: number, nrt: number): void {
  const { m, n, s, e, U, V } = w;
  const work = new Float64Array(m);
  const mrc = Math.max(nct, nrt);
  for (let k = 0; k < mrc; k++) {
    if (k < nct) s[k] = columnReflector(at, m, k);
    if (k < nct && s[k] !== 0) reflectColumns(at, m, k * m, k, k + 1, n);
    for (let j = k + 1; j < n; j++) e[j] = at[j * m + k];
    if (U && k < nct) for (let i = k; i < m; i++) U[k * m + i] = at[k * m + i];
    if (k < nrt) {
      e[k] = rowReflector(e, n, k);
      if (k + 1 < m && e[k] !== 0) applyRowReflector(at, e, work, m, n, k);
      if (V) for (let i = k + 1; i < n; i++) V[k * n + i] = e[i];
    }
  }
}

/** Column k's reflector: its norm (signed) returned as s[k], the column scaled in place. */
function columnReflector(at: Float64Array, m: number, k: number): number {
  const ck = k * m;
  let sk = 0;
  for (let i = k; i < m; i++) sk = hypotenuse(sk, at[ck + i]);
  if (sk !== 0) {
    if (at[ck + k] < 0) sk = -sk;
    for (let i = k; i < m; i++) at[ck + i] = at[ck + i] / sk;
    at[ck + k] = at[ck + k] + 1;
  }
  return -sk;
}

/**
 * Columns j = j0…j1−1 of X (stored as rows of length w) ← x_j + t_j·x_k over entries from…w−1, with
 * t_j = −⟨x_k, x_j⟩ / x_k[from] (the inner product summed over i = from…w−1 in order): the
 * Householder update of the bidiagonalization and of both accumulations. Columns are independent
 * (x_k is not written), so two are taken per pass — two dependent chains of additions side by side
 * instead of one after the other; every t_j and every entry is the same operations as one column
 * at a time (issue 14: the incremental SVD's 49 × 49 cores).
 */
function reflectColumns(X: Float64Array, w: number, ck: number, from: number, j0: number, j1: number): void {
  let j = j0;
  for (; j + 1 < j1; j += 2) {
    const c0 = j * w;
    const c1 = c0 + w;
    let t0 = 0;
    let t1 = 0;
    for (let i = from; i < w; i++) {
      const x = X[ck + i];
      t0 += x * X[c0 + i];
      t1 += x * X[c1 + i];
    }
    t0 = -t0 / X[ck + from];
    t1 = -t1 / X[ck + from];
    for (let i = from; i < w; i++) {
      const x = X[ck + i];
      X[c0 + i] = X[c0 + i] + t0 * x;
      X[c1 + i] = X[c1 + i] + t1 * x;
    }
  }
  if (j < j1) {
    const cj = j * w;
    let t = 0;
    for (let i = from; i < w; i++) t += X[ck + i] * X[cj + i];
    t = -t / X[ck + from];
    for (let i = from; i < w; i++) X[cj + i] = X[cj + i] + t * X[ck + i];
  }
}

/** Row k's reflector on e[k+1…n−1] (scaled in place); returns the new e[k]. */
function rowReflector(e: Float64Array, n: number, k: number): number {
  let ek = 0;
  for (let i = k + 1; i < n; i++) ek = hypotenuse(ek, e[i]);
  if (ek !== 0) {
    if (e[k + 1] < 0) ek = 0 - ek;
    for (let i = k + 1; i < n; i++) e[i] /= ek;
    e[k + 1] += 1;
  }
  return -ek;
}

/**
 * Row k's reflector applied to the trailing block (columns k+1…, rows k+1…): w = A e, then
 * A −= (w eᵀ)/e[k+1]. Two functions, not two loops in one: V8 compiled the first loop on-stack
 * before the second's division had ever run, and re-entered that code — bailing out at the division
 * — on every later call (29 bailouts per quickstart, issue 14, `--trace-deopt`). Same operations.
 */
function applyRowReflector(at: Float64Array, e: Float64Array, work: Float64Array, m: number, n: number, k: number): void {
  rowReflectorProducts(at, e, work, m, n, k);
  rowReflectorUpdate(at, e, work, m, n, k);
}

/**
 * work[i] = Σ_j e[j]·A[i, j] over rows and columns k+1… (A stored transposed in `at`). Column by
 * column (j outer): each work[i] still receives its terms in the order of j, so the same bits as
 * the row-by-row loop, with contiguous reads and no chain of dependent additions across i.
 */
function rowReflectorProducts(at: Float64Array, e: Float64Array, work: Float64Array, m: number, n: number, k: number): void {
  for (let i = k + 1; i < m; i++) work[i] = 0;
  for (let j = k + 1; j < n; j++) {
    const ej = e[j];
    const cj = j * m;
    for (let i = k + 1; i < m; i++) work[i] += ej * at[cj + i];
  }
}

/** A[i, j] += (−e[j]/e[k+1])·work[i] over rows and columns k+1…. */
function rowReflectorUpdate(at: Float64Array, e: Float64Array, work: Float64Array, m: number, n: number, k: number): void {
  for (let j = k + 1; j < n; j++) {
    const t = -e[j] / e[k + 1];
    const cj = j * m;
    for (let i = k + 1; i < m; i++) at[cj + i] = at[cj + i] + t * work[i];
  }
}

/** U from the left Householder vectors (transposed, nu rows of length m). */
function accumulateLeft(U: Float64Array, m: number, nu: number, nct: number, s: Float64Array): void {
  for (let j = nct; j < nu; j++) {
    for (let i = 0; i < m; i++) U[j * m + i] = 0;
    U[j * m + j] = 1;
  }
  for (let k = nct - 1; k >= 0; k--) {
    const ck = k * m;
    if (s[k] !== 0) {
      reflectColumns(U, m, ck, k, k + 1, nu);
      for (let i = k; i < m; i++) U[ck + i] = -U[ck + i];
      U[ck + k] = 1 + U[ck + k];
      for (let i = 0; i < k - 1; i++) U[ck + i] = 0;
    } else {
      for (let i = 0; i < m; i++) U[ck + i] = 0;
      U[ck + k] = 1;
    }
  }
}

/** V from the right Householder vectors (transposed, n × n). */
function accumulateRight(V: Float64Array, n: number, nrt: number, e: Float64Array): void {
  for (let k = n - 1; k >= 0; k--) {
    const ck = k * n;
    if (k < nrt && e[k] !== 0) {
      reflectColumns(V, n, ck, k + 1, k + 1, n);
    }
    for (let i = 0; i < n; i++) V[ck + i] = 0;
    V[ck + k] = 1;
  }
}

/** Implicit-shift QR on the bidiagonal (s, e) of order p until every superdiagonal entry is negligible. */
function diagonalize(w: Work, p: number): void {
  const { s, e } = w;
  const pp = p - 1;
  const eps = Number.EPSILON;
  while (p > 0) {
    let k: number;
    let kase: number;
    for (k = p - 2; k >= -1; k--) {
      if (k === -1) break;
      const alpha = Number.MIN_VALUE + eps * Math.abs(s[k] + Math.abs(s[k + 1]));
      if (Math.abs(e[k]) <= alpha || Number.isNaN(e[k])) {
        e[k] = 0;
        break;
      }
    }
    if (k === p - 2) {
      kase = 4;
    } else {
      let ks: number;
      for (ks = p - 1; ks >= k; ks--) {
        if (ks === k) break;
        const t = (ks !== p ? Math.abs(e[ks]) : 0) + (ks !== k + 1 ? Math.abs(e[ks - 1]) : 0);
        if (Math.abs(s[ks]) <= eps * t) {
          s[ks] = 0;
          break;
        }
      }
      if (ks === k) kase = 3;
      else if (ks === p - 1) kase = 1;
      else {
        kase = 2;
        k = ks;
      }
    }
    k++;
    if (kase === 1) deflateLast(w, k, p);
    else if (kase === 2) splitAt(w, k, p);
    else if (kase === 3) qrStep(w, k, p);
    else {
      converge(w, k, pp);
      p--;
    }
  }
}

/** Case 1: s(p) is negligible — chase e(p−2) out by rotations on the right. */
function deflateLast(w: Work, k: number, p: number): void {
  const { s, e, vOps, n } = w;
  let f = e[p - 2];
  e[p - 2] = 0;
  for (let j = p - 2; j >= k; j--) {
    const t = hypotenuse(s[j], f);
    const cs = s[j] / t;
    const sn = f / t;
    s[j] = t;
    if (j !== k) {
      f = -sn * e[j - 1];
      e[j - 1] = cs * e[j - 1];
    }
    if (vOps) vOps.rotate(j, p - 1, n, cs, sn);
  }
}

/** Case 2: s(k) is negligible — split there by rotations on the left. */
function splitAt(w: Work, k: number, p: number): void {
  const { s, e, uOps, m } = w;
  let f = e[k - 1];
  e[k - 1] = 0;
  for (let j = k; j < p; j++) {
    const t = hypotenuse(s[j], f);
    const cs = s[j] / t;
    const sn = f / t;
    s[j] = t;
    f = -sn * e[j];
    e[j] = cs * e[j];
    if (uOps) uOps.rotate(j, k - 1, m, cs, sn);
  }
}

/** Case 3: one QR step on rows k…p−1 with the shift from the trailing 2 × 2 block. */
function qrStep(w: Work, k: number, p: number): void {
  const { s, e, uOps, vOps, m, n } = w;
  const scale = Math.max(Math.abs(s[p - 1]), Math.abs(s[p - 2]), Math.abs(e[p - 2]), Math.abs(s[k]), Math.abs(e[k]));
  const sp = s[p - 1] / scale;
  const spm1 = s[p - 2] / scale;
  const epm1 = e[p - 2] / scale;
  const sk = s[k] / scale;
  const ek = e[k] / scale;
  const b = ((spm1 + sp) * (spm1 - sp) + epm1 * epm1) / 2;
  const c = sp * epm1 * (sp * epm1);
  let shift = 0;
  if (b !== 0 || c !== 0) {
    if (b < 0) shift = 0 - Math.sqrt(b * b + c);
    else shift = Math.sqrt(b * b + c);
    shift = c / (b + shift);
  }
  let f = (sk + sp) * (sk - sp) + shift;
  let g = sk * ek;
  for (let j = k; j < p - 1; j++) {
    let t = hypotenuse(f, g);
    if (t === 0) t = Number.MIN_VALUE;
    let cs = f / t;
    let sn = g / t;
    if (j !== k) e[j - 1] = t;
    f = cs * s[j] + sn * e[j];
    e[j] = cs * e[j] - sn * s[j];
    g = sn * s[j + 1];
    s[j + 1] = cs * s[j + 1];
    if (vOps) vOps.rotate(j, j + 1, n, cs, sn);
    t = hypotenuse(f, g);
    if (t === 0) t = Number.MIN_VALUE;
    cs = f / t;
    sn = g / t;
    s[j] = t;
    f = cs * e[j] + sn * s[j + 1];
    s[j + 1] = -sn * e[j] + cs * s[j + 1];
    g = sn * e[j + 1];
    e[j + 1] = cs * e[j + 1];
    if (uOps && j < m - 1) uOps.rotate(j, j + 1, m, cs, sn);
  }
  e[p - 2] = f;
}

/** Case 4: s(k) has converged — make it non-negative and move it into place (decreasing order). */
function converge(w: Work, k: number, pp: number): void {
  const { s, uOps, vOps, m, n } = w;
  if (s[k] <= 0) {
    s[k] = s[k] < 0 ? -s[k] : 0;
    if (vOps) vOps.negate(k, pp + 1);
  }
  while (k < pp) {
    if (s[k] >= s[k + 1]) break;
    const t = s[k];
    s[k] = s[k + 1];
    s[k + 1] = t;
    if (vOps && k < n - 1) vOps.swap(k);
    if (uOps && k < m - 1) uOps.swap(k);
    k++;
  }
}
