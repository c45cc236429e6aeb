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
 */
import { ShapeError } from "../errors.js";
import { matmulInto, matmulTransAInto, matmulTransBInto } from "../linalg/matmul.js";
import { Matrix } from "../linalg/matrix.js";
import { assertMatrix } from "../validate.js";
import { type DenseArray, gemmWasm, getKernelBackend, wasmSimdAvailable } from "./gemm.js";

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

function checked(a: Matrix, b: Matrix, aDim: number, bDim: number, what: string): void {
  assertMatrix(a, "a");
  assertMatrix(b, "b");
  if (aDim !== bDim) throw new ShapeError("b", `${what} = ${aDim} (from a ${a.shape})`, b.shape);
}

/** C = A B computed in float32 (f32x4 kernels), returned as a float64 `Matrix`. */
export function matmul32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, a.cols, b.rows, "rows");
  const out = new Matrix(a.rows, b.cols);
  matmul32Into(a.data, b.data, out.data, a.rows, a.cols, b.cols, false);
  return out;
}

/** C = A Bᵀ computed in float32, returned as a float64 `Matrix`. */
export function matmulTransB32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, a.cols, b.cols, "cols");
  const out = new Matrix(a.rows, b.rows);
  matmulTransB32Into(a.data, b.data, out.data, a.rows, a.cols, b.rows);
  return out;
}

/** C = Aᵀ B computed in float32, returned as a float64 `Matrix`. */
export function matmulTransA32(a: Matrix, b: Matrix): Matrix {
  checked(a, b, a.rows, b.rows, "rows");
  const out = new Matrix(a.cols, b.cols);
  matmulTransA32Into(a.data, b.data, out.data, a.rows, a.cols, b.cols, false);
  return out;
}
