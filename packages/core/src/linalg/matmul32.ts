/**
 * Float32 matrix products on the f32x4 WebAssembly kernels: four lanes per 128-bit vector instead
 * of two, so twice the arithmetic per instruction and half the memory traffic of float64. Inputs may
 * be float64 (rounded to float32 while packing) or float32; every product and partial sum is
 * float32 (unit roundoff u = 2⁻²⁴ ≈ 6e-8), so |C − C_exact| ≤ γ_k |A||B| with γ_k ≈ k·u (Higham,
 * Accuracy and Stability, Thm 3.5) plus the input rounding.
 *
 * Without WebAssembly SIMD (or with `setKernelBackend("scalar")`) the same functions round the
 * inputs to float32 and multiply them with the float64 scalar kernels, then round C to the output
 * type — at least as accurate, so callers' float32 tolerances still hold.
 *
 * The checked forms (`matmul32`, …) multiply in float64 when the operands' magnitudes leave
 * float32's safe range (range32.ts): beyond ≈ 1e19 the float32 sums overflow to ±∞/NaN and below
 * ≈ 1e-38 the inputs flush to 0, both silently. The raw `…Into` kernels have no such check.
 */
import { ShapeError } from "../errors.js";
import { matmul, matmulInto, matmulTransA, matmulTransAInto, matmulTransB, matmulTransBInto } from "./matmul.js";
import { Matrix } from "../matrix.js";
import { assertMatrix } from "../validate.js";
import { type DenseArray, gemmWasm, getKernelBackend, wasmSimdAvailable } from "../kernels/gemm.js";
import { maxAbsOf, productInFloat32Range } from "../kernels/range32.js";

function useWasm32(m: number, n: number): boolean {
  // The float32 path is opt-in, so only the backend setting and SIMD availability decide; a
  // single row or column still goes through the kernel (correct, just not faster).
  return getKernelBackend() !== "scalar" && wasmSimdAvailable() && m > 0 && n > 0;
}

function toF64Rounded(x: DenseArray, len: number): Float64Array {
  const out = new Float64Array(len);
  for (let i = 0; i < len; i++) out[i] = Math.fround(x[i]);
  return out;
}

function finishScalar(tmp: Float64Array, C: DenseArray, len: number, accumulate: boolean): void {
  if (accumulate) for (let i = 0; i < len; i++) C[i] = Math.fround(C[i] + tmp[i]);
  else for (let i = 0; i < len; i++) C[i] = Math.fround(tmp[i]);
}

/**
 * Raw float32 kernel: C (m×n) (+)= A (m×k) · B (k×n), row-major; C overwritten unless `accumulate`.
 * No argument checks (hot path); `matmul32` is the checked form.
 */
export function matmul32Into(A: DenseArray, B: DenseArray, C: DenseArray, m: number, k: number, n: number, accumulate: boolean): void {
  if (useWasm32(m, n)) {
    gemmWasm("float32", false, false, A, B, C, m, k, n, accumulate);
    return;
  }
  const tmp = new Float64Array(m * n);
  matmulInto(toF64Rounded(A, m * k), toF64Rounded(B, k * n), tmp, m, k, n, false);
  finishScalar(tmp, C, m * n, accumulate);
}

/** Raw float32 kernel: C (m×n) = A (m×k) · Bᵀ with B n×k (Q Kᵀ's shape). Overwrites C. */
export function matmulTransB32Into(A: DenseArray, B: DenseArray, C: DenseArray, m: number, k: number, n: number): void {
  if (useWasm32(m, n)) {
    gemmWasm("float32", false, true, A, B, C, m, k, n, false);
    return;
  }
  const tmp = new Float64Array(m * n);
  matmulTransBInto(toF64Rounded(A, m * k), toF64Rounded(B, n * k), tmp, m, k, n);
  finishScalar(tmp, C, m * n, false);
}

/** Raw float32 kernel: C (m×n) (+)= Aᵀ B with A k×m and B k×n. */
export function matmulTransA32Into(
  A: DenseArray,
  B: DenseArray,
  C: DenseArray,
  k: number,
  m: number,
  n: number,
  accumulate: boolean,
): void {
  if (useWasm32(m, n)) {
    gemmWasm("float32", true, false, A, B, C, m, k, n, accumulate);
    return;
  }
  const tmp = new Float64Array(m * n);
  matmulTransAInto(toF64Rounded(A, k * m), toF64Rounded(B, k * n), tmp, k, m, n, false);
  finishScalar(tmp, C, m * n, accumulate);
}

function checked(a: Matrix, b: Matrix, which: "AB" | "ABt" | "AtB"): void {
  // Types first: reading a.cols of `null` would be a TypeError instead of a named ShapeError (issue #6).
  assertMatrix(a, "a");
  assertMatrix(b, "b");
  const [aDim, bDim, what] =
    which === "AB" ? [a.cols, b.rows, "rows"] : which === "ABt" ? [a.cols, b.cols, "cols"] : [a.rows, b.rows, "rows"];
  if (aDim !== bDim) throw new ShapeError("b", `${what} = ${aDim} (from a ${a.shape})`, b.shape);
}

/**
 * The checked float32 product behind `matmul32` and its transposed forms. Operands whose largest
 * |entries| leave float32's safe range (range32.ts `productInFloat32Range`) would overflow to ±∞/NaN
 * or flush to 0 in float32, so that product is computed in float64 by `fallback` instead (at least
 * as accurate; NaN/±∞ entries pass through as in `matmul`). On the WebAssembly kernels the maxima
 * come out of the packing (gemmWasm's `maxima`: no separate scan, which was ≈ 4 % of a 1024³
 * product) and the check follows the product; on the scalar path the maxima are scanned first.
 */
function checkedProduct32(
  a: Matrix,
  b: Matrix,
  transA: boolean,
  transB: boolean,
  rows: number,
  k: number,
  cols: number,
  fallback: () => Matrix,
): Matrix {
  const out = new Matrix(rows, cols);
  if (useWasm32(rows, cols)) {
    const maxima = new Float64Array(2);
    gemmWasm("float32", transA, transB, a.data, b.data, out.data, rows, k, cols, false, maxima);
    return productInFloat32Range(maxima[0], maxima[1], k) ? out : fallback();
  }
  if (!productInFloat32Range(maxAbsOf(a.data), maxAbsOf(b.data), k)) return fallback();
  if (transA) matmulTransA32Into(a.data, b.data, out.data, k, rows, cols, false);
  else if (transB) matmulTransB32Into(a.data, b.data, out.data, rows, k, cols);
  else matmul32Into(a.data, b.data, out.data, rows, k, cols, false);
  return out;
}

/**
 * C = A B computed in float32 (f32x4 kernels), returned as a float64 `Matrix`. Inputs whose
 * magnitudes leave float32's safe range (largest |entry| outside [2⁻⁶⁰, 2⁶⁰], or a possible
 * overflow of the sums) are multiplied in float64 instead — never a silent ±∞/NaN or 0.
 * @throws ShapeError when `a` or `b` is not a Matrix or a.cols ≠ b.rows.
 */
export function matmul32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, "AB");
  return checkedProduct32(a, b, false, false, a.rows, a.cols, b.cols, () => matmul(a, b));
}

/**
 * C = A Bᵀ computed in float32, returned as a float64 `Matrix` (float64 outside float32's safe
 * range, as `matmul32`).
 * @throws ShapeError when `a` or `b` is not a Matrix or a.cols ≠ b.cols.
 */
export function matmulTransB32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, "ABt");
  return checkedProduct32(a, b, false, true, a.rows, a.cols, b.rows, () => matmulTransB(a, b));
}

/**
 * C = Aᵀ B computed in float32, returned as a float64 `Matrix` (float64 outside float32's safe
 * range, as `matmul32`).
 * @throws ShapeError when `a` or `b` is not a Matrix or a.rows ≠ b.rows.
 */
export function matmulTransA32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, "AtB");
  return checkedProduct32(a, b, true, false, a.cols, a.rows, b.cols, () => matmulTransA(a, b));
}
