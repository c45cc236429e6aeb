/**
 * The float32 range decision's scans of whole operands (range32.ts) on the kernel module (issue 14,
 * stop 42): a float64 array of at least `SCAN_MIN` entries is copied into a kernel instance of its
 * own, 256 KiB at a time (`set`, a memcpy), and `max_abs_block` (watModel.ts: pmax over |x|, NaN
 * tracked apart) takes its maximum — 0.57 ns per entry against 1.7 for `maxAbsOf`'s JavaScript
 * loop, measured over 2¹⁸ entries. Max is exact, so the result is `maxAbsOf`'s (NaN when an entry
 * is NaN, +∞ when one is ±∞). The instance's own memory means a scan never disturbs the operands
 * another driver keeps in the shared instance. The scalar backend, a runtime without SIMD and small
 * or float32 arrays take `maxAbsOf`.
 */
import type { DenseArray } from "./dense.js";
import { type Kernels, ensureKernelMemory, getKernelBackend, newKernelInstance, wasmSimdAvailable } from "./gemm.js";
import { attentionMaximaInFloat32Range, maxAbsOf } from "./range32.js";
import { KERNEL_RESERVED_BYTES } from "./wat.js";

/** Fewest entries scanned on the kernel module (below, the copy's fixed costs are not worth it). */
const SCAN_MIN = 1 << 14;
/** Entries per copy into the scanning instance (256 KiB). */
const SCAN_CHUNK = 1 << 15;

/** This thread's scanning instance (created on first use). */
let scanner: Kernels | undefined;

/** max |x[i]| over the first `len` entries, as {@link maxAbsOf} (the same value), large float64 arrays on the kernel module. */
export function maxAbsScan(x: DenseArray, len: number = x.length): number {
  if (!(x instanceof Float64Array) || len < SCAN_MIN || getKernelBackend() === "scalar" || !wasmSimdAvailable()) return maxAbsOf(x, len);
  if (!scanner) {
    scanner = newKernelInstance();
    ensureKernelMemory(scanner, KERNEL_RESERVED_BYTES + SCAN_CHUNK * 8);
  }
  const k = scanner;
  const view = k.f64;
  const at = KERNEL_RESERVED_BYTES / 8;
  let m = 0;
  for (let i = 0; i < len; i += SCAN_CHUNK) {
    const n = Math.min(SCAN_CHUNK, len - i);
    view.set(x.subarray(i, i + n), at);
    m = Math.max(m, k.max_abs_block(KERNEL_RESERVED_BYTES, n, 1, n));
  }
  return m;
}

/** max |x| over rows × cols entries with row stride ld (NaN if any is NaN, as `maxAbsOf`). */
function maxAbsStrided(x: DenseArray, rows: number, cols: number, ld: number): number {
  let m = 0;
  for (let i = 0; i < rows; i++) for (let j = 0, o = i * ld; j < cols; j++) m = Math.max(m, Math.abs(x[o + j]));
  return m;
}

/**
 * Whether softmax attention on Q (nQ × d, row stride ldQ), K (nKV × d), V (nKV × dV) with this
 * logit scale is safe in float32 (range32.ts' module doc). False on NaN/±∞ entries.
 */
export function attentionInFloat32Range(
  Q: DenseArray,
  K: DenseArray,
  V: DenseArray,
  nQ: number,
  nKV: number,
  d: number,
  dV: number,
  scale: number,
  ldQ: number = d,
): boolean {
  const q = ldQ === d ? maxAbsScan(Q, nQ * d) : maxAbsStrided(Q, nQ, d, ldQ);
  return attentionMaximaInFloat32Range(q, maxAbsScan(K, nKV * d), maxAbsScan(V, nKV * dV), nKV, d, scale);
}
