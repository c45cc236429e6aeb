/**
 * Matrix products on flat row-major Float64Arrays. These are the hot kernels of every exact and
 * randomized attention path (QKᵀ, PV, φ(K)ᵀV, sketches), so they are register-tiled rather than
 * the naive i-j-k loop:
 *  - `matmul`   C = A B     : i-k-j order, 4 rows of C updated per pass over a row of B
 *                             (B's row is streamed once per 4 output rows), blocked over k.
 *  - `matmulTransB` C = A Bᵀ: 4×4 tile of dot products of contiguous rows (QKᵀ's shape).
 *  - `matmulTransA` C = Aᵀ B: rank-1 updates over the shared row index (φ(K)ᵀV's shape).
 * Each kernel also has a form writing into a caller-supplied output (`…Into`) so streaming code can
 * reuse buffers. Behind these same signatures the WebAssembly SIMD128 kernels of `fast/gemm.ts`
 * (issue #5) take over when they win: `kernelBackendFor(m, k, n)` decides per call (scalar for tiny
 * or single-row/column products, or when SIMD is unavailable; `setKernelBackend` forces either).
 * The scalar kernels below stay the reference the fast path is tested against (≤ 1e-12 relative).
 */
import { Matrix } from "../matrix.js";
import { assertMatrix, assertVector } from "../validate.js";
import { transposeInto } from "./transpose.js";
import { ShapeError } from "../errors.js";
import {
  SMALL_M_ROWS,
  gemmWasm,
  gemmWasmRowsF64,
  getKernelArithmetic,
  getKernelBackend,
  kernelBackendFor,
  wasmSimdAvailable,
} from "../kernels/gemm.js";

const KB = 256; // k-block: keeps a 4×KB panel of A and KB rows of B's current column block hot.

function checkInner(a: Matrix, b: Matrix, aName: string, bName: string, aDim: number, bDim: number, what: string): void {
  if (aDim !== bDim) throw new ShapeError(bName, `${what} = ${aDim} (from ${aName} ${a.shape})`, b.shape);
}

/** C = A B. A is m×k, B is k×n. */
export function matmul(a: Matrix, b: Matrix): Matrix {
  assertMatrix(a, "a");
  assertMatrix(b, "b");
  checkInner(a, b, "a", "b", a.cols, b.rows, "rows");
  const out = new Matrix(a.rows, b.cols);
  matmulInto(a.data, b.data, out.data, a.rows, a.cols, b.cols, false);
  return out;
}

/**
 * Raw kernel: C (m×n) (+)= A (m×k) · B (k×n), all row-major. With `accumulate = false` C is overwritten.
 */
export function matmulInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number, accumulate: boolean): void {
  if (kernelBackendFor(m, k, n) === "wasm") gemmWasm("float64", false, false, A, B, C, m, k, n, accumulate);
  else if (m < SMALL_M) smallRowsMatmul(A, k, 1, B, C, m, k, n, accumulate);
  else scalarMatmulInto(A, B, C, m, k, n, accumulate);
}

/** Widest B that {@link tallNarrowMatmulInto} sends to the row-major-A kernel. */
const NARROW_MAX_COLS = 128;

/**
 * C (m×n) = A (m×k) · B (k×n), row-major, for a tall A times a narrow B (n ≤ 128: the range
 * finder's A·Ω and A·Z, 16384 × 512 · 512 × 74): on the WebAssembly path, `gemmWasmRowsF64` packs
 * B once and reads A in place, skipping the MR-panel repack of the whole of A that `matmulInto`
 * does on every product (issue 14: 1.12–1.35× on that shape, docs/performance.md). Same product,
 * another rounding order (one sum over the full depth); otherwise `matmulInto`.
 */
export function tallNarrowMatmulInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  if (n <= NARROW_MAX_COLS && m >= 4 * n && k <= 4096 && kernelBackendFor(m, k, n) === "wasm") gemmWasmRowsF64(A, B, C, m, k, n);
  else matmulInto(A, B, C, m, k, n, false);
}

/** Multiply-adds below which {@link sequentialMatmulInto} stays in JavaScript (the kernel's B packing and copies cost more). */
const SEQUENTIAL_WASM_MIN_WORK = 4096;

/**
 * C (m×n) = A (m×k) · B (k×n), row-major, where every entry is ONE sum in the order of the literal
 * loop: s = 0, then s += A[i, p]·B[p, j] for p = 0…k−1, each product and each sum rounded. A caller
 * whose results were defined by that loop (the incremental SVD of sketch's kvcache/latent.ts, whose
 * sweeps are committed byte for byte) gets the same bits here, fast: WebAssembly's row-major-A kernel
 * (`gemmWasmRowsF64`: one full-depth slice, accumulators from +0, `f64x2.mul` then `f64x2.add`) where
 * SIMD is available, the backend is not `"scalar"` and the GEMM arithmetic is `"mul-add"` (the opt-in
 * `"fma"` would round once per term); otherwise, or for products under 4096 multiply-adds, the loop
 * itself on a transposed copy of B (contiguous rows, the same operations). `matmulInto` is faster for
 * large products but sums in KC-deep blocks (another rounding order).
 * Raw kernel: no argument checks; C is overwritten.
 */
export function sequentialMatmulInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  if (m === 0 || n === 0) return;
  if (
    k > 0 &&
    m * k * n >= SEQUENTIAL_WASM_MIN_WORK &&
    getKernelBackend() !== "scalar" &&
    getKernelArithmetic() === "mul-add" &&
    wasmSimdAvailable()
  ) {
    gemmWasmRowsF64(A, B, C, m, k, n);
    return;
  }
  sequentialMatmulJs(A, B, C, m, k, n);
}

/** {@link sequentialMatmulInto}'s JavaScript form: the literal loop, B read through its transpose. */
export function sequentialMatmulJs(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  const bt = new Float64Array(n * k);
  transposeInto(B, bt, k, n);
  for (let i = 0; i < m; i++) {
    const a0 = i * k;
    for (let j = 0; j < n; j++) {
      const b0 = j * k;
      let s = 0;
      for (let p = 0; p < k; p++) s += A[a0 + p] * bt[b0 + p];
      C[i * n + j] = s;
    }
  }
}

/**
 * Fewer output rows than this take the few-rows kernels below (x·W for one decoded token, or a
 * handful): the SIMD driver would repack all of B for m·k·n multiply-adds — as many copies as
 * useful operations — so streaming B once in JavaScript is as fast or faster (measured, see
 * docs/performance.md), and `kernelBackendFor` sends m < SMALL_M to the scalar side.
 */
export const SMALL_M = SMALL_M_ROWS;

/**
 * C (m×n, m ≤ 3) (+)= op(A) B for a few rows, streaming B once: op(A)(i, p) = A[i·sI + p·sP]
 * (A B: sI = k, sP = 1; Aᵀ B: sI = 1, sP = m). Four rows of B are combined per pass over a row of C
 * (C[i, j] += Σ_{q<4} a_iq·B[p+q, j]), so C is read and written once per four B rows — the load/store
 * traffic of a plain axpy, not its arithmetic, is what limits x·W.
 */
function smallRowsMatmul(
  A: Float64Array,
  sI: number,
  sP: number,
  B: Float64Array,
  C: Float64Array,
  m: number,
  k: number,
  n: number,
  accumulate: boolean,
): void {
  if (!accumulate) C.fill(0, 0, m * n);
  let p = 0;
  for (; p + 3 < k; p += 4) {
    const b0 = p * n;
    const b1 = b0 + n;
    const b2 = b1 + n;
    const b3 = b2 + n;
    for (let i = 0; i < m; i++) {
      const ai = i * sI + p * sP;
      const x0 = A[ai];
      const x1 = A[ai + sP];
      const x2 = A[ai + 2 * sP];
      const x3 = A[ai + 3 * sP];
      const c = i * n;
      for (let j = 0; j < n; j++) C[c + j] += x0 * B[b0 + j] + x1 * B[b1 + j] + x2 * B[b2 + j] + x3 * B[b3 + j];
    }
  }
  for (; p < k; p++) {
    const b0 = p * n;
    for (let i = 0; i < m; i++) {
      const x0 = A[i * sI + p * sP];
      const c = i * n;
      for (let j = 0; j < n; j++) C[c + j] += x0 * B[b0 + j];
    }
  }
}

/**
 * C (m×n, m ≤ 3) = A Bᵀ for a few rows (q·Kᵀ of one decoded token): four rows of B at a time,
 * dotted with two rows of A at once — eight independent accumulators, so the adds overlap instead
 * of waiting on one another, and each B value loaded serves two rows; the four B rows stay in L1.
 */
function smallRowsMatmulTransB(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  let j = 0;
  for (; j + 3 < n; j += 4) {
    const b0 = j * k;
    const b1 = b0 + k;
    const b2 = b1 + k;
    const b3 = b2 + k;
    let i = 0;
    for (; i + 1 < m; i += 2) {
      const a = i * k;
      const a1 = a + k;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let t0 = 0;
      let t1 = 0;
      let t2 = 0;
      let t3 = 0;
      for (let p = 0; p < k; p++) {
        const x = A[a + p];
        const y = A[a1 + p];
        const v0 = B[b0 + p];
        const v1 = B[b1 + p];
        const v2 = B[b2 + p];
        const v3 = B[b3 + p];
        s0 += x * v0;
        s1 += x * v1;
        s2 += x * v2;
        s3 += x * v3;
        t0 += y * v0;
        t1 += y * v1;
        t2 += y * v2;
        t3 += y * v3;
      }
      const c = i * n + j;
      C[c] = s0;
      C[c + 1] = s1;
      C[c + 2] = s2;
      C[c + 3] = s3;
      C[c + n] = t0;
      C[c + n + 1] = t1;
      C[c + n + 2] = t2;
      C[c + n + 3] = t3;
    }
    if (i < m) {
      const a = i * k;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let p = 0; p < k; p++) {
        const x = A[a + p];
        s0 += x * B[b0 + p];
        s1 += x * B[b1 + p];
        s2 += x * B[b2 + p];
        s3 += x * B[b3 + p];
      }
      const c = i * n + j;
      C[c] = s0;
      C[c + 1] = s1;
      C[c + 2] = s2;
      C[c + 3] = s3;
    }
  }
  for (; j < n; j++) {
    const b0 = j * k;
    for (let i = 0; i < m; i++) {
      const a = i * k;
      let s = 0;
      for (let p = 0; p < k; p++) s += A[a + p] * B[b0 + p];
      C[i * n + j] = s;
    }
  }
}

function scalarMatmulInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number, accumulate: boolean): void {
  if (!accumulate) C.fill(0, 0, m * n);
  for (let k0 = 0; k0 < k; k0 += KB) {
    const k1 = Math.min(k, k0 + KB);
    let i = 0;
    for (; i + 3 < m; i += 4) {
      const c0 = i * n;
      const c1 = c0 + n;
      const c2 = c1 + n;
      const c3 = c2 + n;
      for (let p = k0; p < k1; p++) {
        const a0 = A[i * k + p];
        const a1 = A[(i + 1) * k + p];
        const a2 = A[(i + 2) * k + p];
        const a3 = A[(i + 3) * k + p];
        const bo = p * n;
        for (let j = 0; j < n; j++) {
          const bv = B[bo + j];
          C[c0 + j] += a0 * bv;
          C[c1 + j] += a1 * bv;
          C[c2 + j] += a2 * bv;
          C[c3 + j] += a3 * bv;
        }
      }
    }
    for (; i < m; i++) {
      const c0 = i * n;
      for (let p = k0; p < k1; p++) {
        const a0 = A[i * k + p];
        const bo = p * n;
        for (let j = 0; j < n; j++) C[c0 + j] += a0 * B[bo + j];
      }
    }
  }
}

/** C = A Bᵀ. A is m×k, B is n×k (e.g. Q Kᵀ with Q N_Q×d and K N_KV×d). */
export function matmulTransB(a: Matrix, b: Matrix): Matrix {
  assertMatrix(a, "a");
  assertMatrix(b, "b");
  checkInner(a, b, "a", "b", a.cols, b.cols, "cols");
  const out = new Matrix(a.rows, b.rows);
  matmulTransBInto(a.data, b.data, out.data, a.rows, a.cols, b.rows);
  return out;
}

/** Raw kernel: C (m×n) = A (m×k) · Bᵀ where B is n×k, all row-major. Overwrites C. */
export function matmulTransBInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  if (kernelBackendFor(m, k, n) === "wasm") gemmWasm("float64", false, true, A, B, C, m, k, n, false);
  else if (m < SMALL_M) smallRowsMatmulTransB(A, B, C, m, k, n);
  else scalarMatmulTransBInto(A, B, C, m, k, n);
}

function scalarMatmulTransBInto(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  let i = 0;
  for (; i + 3 < m; i += 4) {
    const a0 = i * k;
    const a1 = a0 + k;
    const a2 = a1 + k;
    const a3 = a2 + k;
    let j = 0;
    for (; j + 1 < n; j += 2) {
      const b0 = j * k;
      const b1 = b0 + k;
      let s00 = 0,
        s01 = 0,
        s10 = 0,
        s11 = 0,
        s20 = 0,
        s21 = 0,
        s30 = 0,
        s31 = 0;
      for (let p = 0; p < k; p++) {
        const x0 = B[b0 + p];
        const x1 = B[b1 + p];
        const y0 = A[a0 + p];
        const y1 = A[a1 + p];
        const y2 = A[a2 + p];
        const y3 = A[a3 + p];
        s00 += y0 * x0;
        s01 += y0 * x1;
        s10 += y1 * x0;
        s11 += y1 * x1;
        s20 += y2 * x0;
        s21 += y2 * x1;
        s30 += y3 * x0;
        s31 += y3 * x1;
      }
      C[i * n + j] = s00;
      C[i * n + j + 1] = s01;
      C[(i + 1) * n + j] = s10;
      C[(i + 1) * n + j + 1] = s11;
      C[(i + 2) * n + j] = s20;
      C[(i + 2) * n + j + 1] = s21;
      C[(i + 3) * n + j] = s30;
      C[(i + 3) * n + j + 1] = s31;
    }
    for (; j < n; j++) {
      const b0 = j * k;
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      for (let p = 0; p < k; p++) {
        const x = B[b0 + p];
        s0 += A[a0 + p] * x;
        s1 += A[a1 + p] * x;
        s2 += A[a2 + p] * x;
        s3 += A[a3 + p] * x;
      }
      C[i * n + j] = s0;
      C[(i + 1) * n + j] = s1;
      C[(i + 2) * n + j] = s2;
      C[(i + 3) * n + j] = s3;
    }
  }
  for (; i < m; i++) {
    const a0 = i * k;
    for (let j = 0; j < n; j++) {
      const b0 = j * k;
      let s = 0;
      for (let p = 0; p < k; p++) s += A[a0 + p] * B[b0 + p];
      C[i * n + j] = s;
    }
  }
}

/** C = Aᵀ B. A is k×m, B is k×n (e.g. φ(K)ᵀ V). */
export function matmulTransA(a: Matrix, b: Matrix): Matrix {
  assertMatrix(a, "a");
  assertMatrix(b, "b");
  checkInner(a, b, "a", "b", a.rows, b.rows, "rows");
  const out = new Matrix(a.cols, b.cols);
  matmulTransAInto(a.data, b.data, out.data, a.rows, a.cols, b.cols, false);
  return out;
}

/** Raw kernel: C (m×n) (+)= Aᵀ B where A is k×m and B is k×n, row-major. */
export function matmulTransAInto(
  A: Float64Array,
  B: Float64Array,
  C: Float64Array,
  k: number,
  m: number,
  n: number,
  accumulate: boolean,
): void {
  if (kernelBackendFor(m, k, n) === "wasm") gemmWasm("float64", true, false, A, B, C, m, k, n, accumulate);
  else if (m < SMALL_M) smallRowsMatmul(A, 1, m, B, C, m, k, n, accumulate);
  else scalarMatmulTransAInto(A, B, C, k, m, n, accumulate);
}

function scalarMatmulTransAInto(
  A: Float64Array,
  B: Float64Array,
  C: Float64Array,
  k: number,
  m: number,
  n: number,
  accumulate: boolean,
): void {
  if (!accumulate) C.fill(0, 0, m * n);
  for (let p = 0; p < k; p++) {
    const ao = p * m;
    const bo = p * n;
    let i = 0;
    for (; i + 3 < m; i += 4) {
      const a0 = A[ao + i],
        a1 = A[ao + i + 1],
        a2 = A[ao + i + 2],
        a3 = A[ao + i + 3];
      const c0 = i * n,
        c1 = c0 + n,
        c2 = c1 + n,
        c3 = c2 + n;
      for (let j = 0; j < n; j++) {
        const bv = B[bo + j];
        C[c0 + j] += a0 * bv;
        C[c1 + j] += a1 * bv;
        C[c2 + j] += a2 * bv;
        C[c3 + j] += a3 * bv;
      }
    }
    for (; i < m; i++) {
      const av = A[ao + i];
      const c0 = i * n;
      for (let j = 0; j < n; j++) C[c0 + j] += av * B[bo + j];
    }
  }
}

/** y = A x for a vector x (length A.cols). */
export function matvec(a: Matrix, x: ArrayLike<number>): Float64Array {
  assertMatrix(a, "a");
  // Checked before x.length is read: `null` / a number would otherwise be a TypeError (issue #6).
  assertVector(x, "x", a.cols, "a.cols");
  const y = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    const o = i * a.cols;
    for (let j = 0; j < a.cols; j++) s += a.data[o + j] * x[j];
    y[i] = s;
  }
  return y;
}
