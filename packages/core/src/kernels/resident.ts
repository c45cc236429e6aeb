/**
 * WebAssembly-resident scratch for drivers that chain products and elementwise passes without
 * copying their operands in and out of the kernel memory between steps (issue 14: random-feature
 * attention spent ≈ 30 % of a call on copies, transposes and packing passes around its products).
 *
 * The scratch starts at {@link RESIDENT_BASE_BYTES}, above the largest region `gemmWasm` ever uses
 * (reserved bytes + A panels + B panels + its C chunk + the staged operands, for either
 * precision), so the caller may keep data there while it runs ordinary `matmul*Into` products:
 * once `residentKernels` has grown the memory, no product grows it again and the caller's offsets stay valid (views must still be read
 * from `k.f64` after a call, never cached across one that may grow memory). The caller writes its
 * operands in the kernels' own layouts (row-major rows for the row-major-A kernel, NR-column panels
 * for packed operands — see {@link panelIndex}), runs the SIMD exp in place, and calls the
 * macro-kernels on them directly: nothing is packed or copied twice.
 *
 * Single-threaded per instance (each worker has its own kernel memory), and nothing survives a
 * call that another driver (the fused softmax) could overwrite: data lives here for one call only.
 */
import { type Kernels, STAGE_MAX, ensureKernelMemory, getKernels } from "./gemm.js";
import { F64_MR, F64_NR, KERNEL_RESERVED_BYTES } from "./wat.js";

/**
 * First byte of the resident scratch: above the largest footprint of `gemmWasm` (KERNEL_RESERVED_BYTES
 * + A panels (MC × KC f64 = 128 KiB) + B panels (NC × KC f64 = 2 MiB) + C chunk (2²⁰ f64 = 8 MiB) +
 * the staged float64 A and B (≤ STAGE_MAX entries each: 2 × 8 MiB)) and of `gemmWasmPacked`
 * (reserved + B panels ≤ 2 MiB + A chunk ≤ 8 MiB + C chunk ≤ 8 MiB and one edge tile), with
 * alignment slack, rounded up to a 64 KiB page. Keep in step with gemm.ts' constants (the resident
 * test runs the largest products of both and checks the scratch survives).
 */
export const RESIDENT_BASE_BYTES =
  Math.ceil((KERNEL_RESERVED_BYTES + 1024 * 256 * 8 + 2 * (1 << 20) * 8 + 4 * 1024 * 8 + 2 * STAGE_MAX * 8 + 256) / 65536) * 65536;

/** Depth of one product slice (gemm.ts' KC): longer sums are split there so the bits match `matmulInto`. */
export const RESIDENT_KC = 256;

/** Columns of a packed panel (f64 kernels: MR = NR = 4, so A and B panels share one layout). */
export const RESIDENT_PANEL = F64_NR;

/**
 * This thread's kernels with at least `floats` float64s of resident scratch (memory grown now, so
 * no later product within the call grows it); element offset `RESIDENT_BASE_BYTES / 8` is the first.
 */
export function residentKernels(floats: number): Kernels {
  const k = getKernels();
  ensureKernelMemory(k, RESIDENT_BASE_BYTES + floats * 8);
  return k;
}

/**
 * Element offset (from the panel block's start) of entry (p, j) of a rows × cols operand stored in
 * NR-column panels of depth `rows`: panel ⌊j/NR⌋ holds its NR columns row after row — the layout
 * `gemm_f64` reads for B, and (MR = NR) for A = the transpose of such an operand.
 */
export function panelIndex(p: number, j: number, rows: number): number {
  return (j >> 2) * rows * 4 + p * 4 + (j & 3);
}

/**
 * C (mc × nc at element offset `c`, leading dimension `ldc`) += op(A) op(B) with both operands in
 * panels at element offsets `a` (mc rows: the panels of Aᵀ) and `b` (nc columns), depth kc ≤ RESIDENT_KC.
 * Per entry the same sum in the same order as `gemmWasm` (a depth-kc slice from 0, then added to C).
 */
export function residentGemmPanels(k: Kernels, a: number, b: number, c: number, ldc: number, mc: number, nc: number, kc: number): void {
  if (F64_MR !== 4 || F64_NR !== 4) throw new Error("resident panels assume a 4 × 4 f64 tile");
  k.gemm_f64(a * 8, b * 8, c * 8, ldc, mc, nc, kc);
}

/**
 * C (mc × nc at `c`, leading dimension `ldc`) = A B with A row-major in place (mc × kc at `a`,
 * leading dimension `lda`) and B in panels of depth `ldb` at `b` — split into RESIDENT_KC-deep
 * slices, the first overwriting C, the rest adding: the sums and bits of `matmulInto`.
 */
export function residentGemmRows(
  k: Kernels,
  a: number,
  lda: number,
  b: number,
  ldb: number,
  c: number,
  ldc: number,
  mc: number,
  nc: number,
  kc: number,
): void {
  for (let p0 = 0; p0 < kc; p0 += RESIDENT_KC) {
    const kcur = Math.min(RESIDENT_KC, kc - p0);
    k.gemm_f64_ra((a + p0) * 8, lda, (b + p0 * RESIDENT_PANEL) * 8, ldb, c * 8, ldc, mc, nc, kcur, p0 > 0 ? 1 : 0);
  }
}

/** exp in place over n float64s at element offset `o` (core's SIMD exp, ≤ 1 ulp from Math.exp). */
export function residentExp(k: Kernels, o: number, n: number): void {
  k.exp_f64(o * 8, o * 8, n);
}
