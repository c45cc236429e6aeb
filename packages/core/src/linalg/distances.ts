/**
 * Squared Euclidean distances between the rows of two matrices, D_ij = ‖b_j − a_i‖², as the
 * written-out loop forms them: for each pair, Σ_c (B_jc − A_ic)² summed over c = 0 … d − 1 in order
 * from 0. Callers that replace such a loop keep its bits — the experiments' first-order error of the
 * ratio row-sampling estimator, Σ_ik P_ik² ‖V_k − Y_i‖² / p_k (packages/experiments
 * registry/sketch/sampling.ts), is in the committed results. The kernel module's
 * `sq_dist_rows_f64` (kernels/watDistance.ts) performs the same operations in the same order, eight
 * columns j per f64x2 quartet; the JavaScript form is the reference and the fallback without
 * WebAssembly SIMD.
 */
import { ShapeError } from "../errors.js";
import { ensureKernelMemory, getKernelBackend, getKernels, wasmSimdAvailable } from "../kernels/gemm.js";
import { KERNEL_RESERVED_BYTES } from "../kernels/wat.js";
import { Matrix } from "../matrix.js";

/** Output entries per kernel call (rows of D at a time): 2¹⁶ floats = 512 KiB of kernel memory. */
const BLOCK_ENTRIES = 1 << 16;

/**
 * D (a.rows × b.rows) with D_ij = Σ_c (b_jc − a_ic)², c in order (module comment): the WebAssembly
 * kernel unless the backend is "scalar" or SIMD is unavailable; both give the same bits. Non-finite
 * entries propagate as IEEE arithmetic does (∞ − ∞ = NaN).
 * `into`: storage of ≥ a.rows·b.rows floats for D (the result wraps its first a.rows·b.rows), so a
 * caller that asks for many blocks reuses one array instead of first-touching a fresh one each
 * time (page faults, ≈ 4 µs per 4 KiB page on the stop-30 VM: ≈ 2 ms per 2 MiB block, as much as
 * the kernel's own work on it). @default a new array
 * @throws ShapeError when a and b differ in their number of columns or `into` is too short.
 */
export function squaredDistances(a: Matrix, b: Matrix, into?: Float64Array): Matrix {
  if (a.cols !== b.cols) throw new ShapeError("b", `${a.cols} columns (as a)`, `${b.rows}×${b.cols}`);
  const m = a.rows;
  const n = b.rows;
  const d = a.cols;
  if (into !== undefined && !(into instanceof Float64Array && into.length >= m * n)) {
    throw new ShapeError(
      "into",
      `a Float64Array of at least ${m * n} floats (${m}×${n})`,
      into instanceof Float64Array ? `length ${into.length}` : typeof into,
    );
  }
  const out = new Matrix(m, n, into?.subarray(0, m * n));
  if (m === 0 || n === 0 || d === 0 || getKernelBackend() === "scalar" || !wasmSimdAvailable()) return squaredDistancesJs(a, b, out);
  const n8 = Math.ceil(n / 8) * 8;
  const rowsPerCall = Math.max(1, Math.min(m, Math.floor(BLOCK_ENTRIES / n8)));
  const k = getKernels();
  const bt = KERNEL_RESERVED_BYTES;
  const ap = bt + d * n8 * 8;
  const op = ap + rowsPerCall * d * 8;
  ensureKernelMemory(k, op + rowsPerCall * n8 * 8);
  const mem = k.f64;
  // Bᵀ, its padding columns zero (their distances are computed and never read).
  const btf = bt / 8;
  mem.fill(0, btf, btf + d * n8);
  for (let j = 0; j < n; j++) for (let c = 0; c < d; c++) mem[btf + c * n8 + j] = b.data[j * d + c];
  for (let i0 = 0; i0 < m; i0 += rowsPerCall) {
    const rows = Math.min(rowsPerCall, m - i0);
    mem.set(a.data.subarray(i0 * d, (i0 + rows) * d), ap / 8);
    k.sq_dist_rows_f64(ap, d, rows, bt, n8, op);
    for (let i = 0; i < rows; i++) out.data.set(mem.subarray(op / 8 + i * n8, op / 8 + i * n8 + n), (i0 + i) * n);
  }
  return out;
}

/** The JavaScript form of {@link squaredDistances} (the reference the kernel is tested against); `out`: D's a.rows × b.rows storage. */
export function squaredDistancesJs(a: Matrix, b: Matrix, out = new Matrix(a.rows, b.rows)): Matrix {
  if (a.cols !== b.cols) throw new ShapeError("b", `${a.cols} columns (as a)`, `${b.rows}×${b.cols}`);
  const m = a.rows;
  const n = b.rows;
  const d = a.cols;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += (b.data[j * d + c] - a.data[i * d + c]) ** 2;
      out.data[i * n + j] = s;
    }
  }
  return out;
}
