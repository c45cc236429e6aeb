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
import { KernelArena } from "../kernels/arena.js";
import { type Kernels, ensureKernelMemory, getKernelBackend, getKernels, wasmSimdAvailable } from "../kernels/gemm.js";
import { unaliasedStride } from "../kernels/stride.js";
import { KERNEL_RESERVED_BYTES } from "../kernels/wat.js";
import { Matrix } from "../matrix.js";
import { assertOutputBuffer } from "../validate.js";

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
  assertOutputBuffer(into, m * n, "into", `${m}×${n}`);
  const out = new Matrix(m, n, into?.subarray(0, m * n));
  if (m === 0 || n === 0 || d === 0 || getKernelBackend() === "scalar" || !wasmSimdAvailable()) return squaredDistancesJs(a, b, out);
  const n8 = Math.ceil(n / 8) * 8;
  const ldb = unaliasedStride(n8); // the kernel walks Bᵀ down its d rows (kernels/stride.ts)
  const rowsPerCall = Math.max(1, Math.min(m, Math.floor(BLOCK_ENTRIES / n8)));
  const k = getKernels();
  const bt = KERNEL_RESERVED_BYTES;
  const ap = bt + d * ldb * 8;
  const op = ap + rowsPerCall * d * 8;
  ensureKernelMemory(k, op + rowsPerCall * n8 * 8);
  const mem = k.f64;
  packTransposed(mem, bt, b, ldb);
  for (let i0 = 0; i0 < m; i0 += rowsPerCall) {
    const rows = Math.min(rowsPerCall, m - i0);
    distanceRows(k, a, i0, rows, ap, bt, n8, ldb, op);
    for (let i = 0; i < rows; i++) out.data.set(mem.subarray(op / 8 + i * n8, op / 8 + i * n8 + n), (i0 + i) * n);
  }
  return out;
}

/** The kernel instance of {@link squaredDistanceBlocks} (its own memory: a visitor may use the shared one). */
let blockArena: KernelArena | undefined;
let blockArenaBusy = false;

/**
 * D = {@link squaredDistances}(a, b) a block of rows at a time, for a caller that reduces each block
 * and never needs all of D (a.rows × b.rows may be far larger than memory wants): `visit(i0, block)`
 * receives rows i0 … i0 + rows − 1 of D as a rows × b.rows matrix in storage reused for every block
 * (read it before returning, never keep it: when b.rows is a multiple of 8 it is a view of the
 * kernel memory itself; otherwise of `into`, ≥ blockRows·b.rows floats when lent). The same bits as
 * squaredDistances. Bᵀ is packed into the kernel memory once for all blocks — per block it was
 * packed again, which for the experiments' first-order ratio error at N = 4096 (64 blocks per head)
 * cost as much CPU as the distances themselves (issue 14, stop 34). The packed Bᵀ lives in a kernel
 * instance of its own, so `visit` may call anything, the WebAssembly kernels included.
 * @throws ShapeError when a and b differ in their number of columns, blockRows is not a positive
 *   integer, or `into` is too short.
 */
export function squaredDistanceBlocks(
  a: Matrix,
  b: Matrix,
  blockRows: number,
  visit: (i0: number, block: Matrix) => void,
  into?: Float64Array,
): void {
  if (a.cols !== b.cols) throw new ShapeError("b", `${a.cols} columns (as a)`, `${b.rows}×${b.cols}`);
  if (!Number.isInteger(blockRows) || blockRows < 1) throw new ShapeError("blockRows", "a positive integer", String(blockRows));
  const m = a.rows;
  const n = b.rows;
  const d = a.cols;
  const need = Math.min(blockRows, m) * n;
  assertOutputBuffer(into, need);
  const storage = into ?? new Float64Array(need);
  const rowsOf = (i0: number) => new Matrix(Math.min(blockRows, m - i0), d, a.data.subarray(i0 * d, Math.min(m, i0 + blockRows) * d));
  if (n === 0 || d === 0 || getKernelBackend() === "scalar" || !wasmSimdAvailable()) {
    for (let i0 = 0; i0 < m; i0 += blockRows) {
      const rows = rowsOf(i0);
      visit(i0, squaredDistancesJs(rows, b, new Matrix(rows.rows, n, storage.subarray(0, rows.rows * n))));
    }
    return;
  }
  // A nested call (from a visitor) gets an arena of its own: the outer call's Bᵀ must survive it.
  const nested = blockArenaBusy;
  const arena = nested ? new KernelArena() : (blockArena ??= new KernelArena());
  blockArenaBusy = true;
  try {
    blocksOnArena(arena, a, b, blockRows, visit, storage);
  } finally {
    if (!nested) blockArenaBusy = false;
  }
}

function blocksOnArena(
  arena: KernelArena,
  a: Matrix,
  b: Matrix,
  blockRows: number,
  visit: (i0: number, block: Matrix) => void,
  storage: Float64Array,
): void {
  const m = a.rows;
  const n = b.rows;
  const d = a.cols;
  const n8 = Math.ceil(n / 8) * 8;
  const ldb = unaliasedStride(n8); // the kernel walks Bᵀ down its d rows (kernels/stride.ts)
  const rowsPerBlock = Math.min(blockRows, m);
  // A whole block of D in the arena: when b.rows is a multiple of 8 the kernel's rows are D's rows
  // and the visitor reads them in place (no copy); else they are compacted into `storage`.
  const [bt, ap, op] = arena.frame([d * ldb * 8, rowsPerBlock * d * 8, rowsPerBlock * n8 * 8]);
  const k = arena.k;
  const mem = k.f64;
  const opf = op / 8;
  packTransposed(mem, bt, b, ldb);
  for (let i0 = 0; i0 < m; i0 += blockRows) {
    const rows = Math.min(blockRows, m - i0);
    distanceRows(k, a, i0, rows, ap, bt, n8, ldb, op);
    if (n8 === n) visit(i0, new Matrix(rows, n, mem.subarray(opf, opf + rows * n)));
    else {
      const block = new Matrix(rows, n, storage.subarray(0, rows * n));
      for (let i = 0; i < rows; i++) block.data.set(mem.subarray(opf + i * n8, opf + i * n8 + n), i * n);
      visit(i0, block);
    }
  }
}

/** Bᵀ (d × n8, n8 = b.rows rounded up to 8; row stride ldb ≥ n8) at byte address `bt` of the kernel memory, its padding zero (the padding columns' distances are computed and never read). */
function packTransposed(mem: Float64Array, bt: number, b: Matrix, ldb: number): void {
  const n = b.rows;
  const d = b.cols;
  const btf = bt / 8;
  mem.fill(0, btf, btf + d * ldb);
  for (let j = 0; j < n; j++) for (let c = 0; c < d; c++) mem[btf + c * ldb + j] = b.data[j * d + c];
}

/** Rows i0 … i0 + rows − 1 of a copied to byte address `ap`, their distances to Bᵀ (at `bt`, row stride ldb) written at `op`, n8 per row. */
function distanceRows(k: Kernels, a: Matrix, i0: number, rows: number, ap: number, bt: number, n8: number, ldb: number, op: number): void {
  const d = a.cols;
  k.f64.set(a.data.subarray(i0 * d, (i0 + rows) * d), ap / 8);
  k.sq_dist_rows_f64(ap, d, rows, bt, n8, op, ldb);
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
