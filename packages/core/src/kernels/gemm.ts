/**
 * WebAssembly SIMD128 GEMM driver: C (+)= op(A) · op(B) for the three shapes of `linalg/matmul.ts`
 * (A B, A Bᵀ, Aᵀ B), in float64 (f64x2) or float32 (f32x4).
 *
 * Blocking (GotoBLAS / BLIS): for each row chunk of C (so the C buffer in WebAssembly memory stays
 * ≤ `C_CHUNK` elements whatever m·n is), for each NC-column block and KC-deep slice, op(B) is packed
 * into NR-column panels (KC × NR, 8 KiB in f64: stays in L1 across the row loop), then for each
 * MC-row block op(A) is packed into MR-row panels (MC × KC, 128 KiB: L2) and the macro-kernel of
 * `wat.ts` adds the block product into C. Packing from the caller's arrays *is* the copy into
 * WebAssembly memory, so operands are copied once; C is copied in (only when accumulating) and out
 * once per row chunk. Transposes cost nothing extra: they only change the packing's strides.
 *
 * One `WebAssembly.Memory` per thread (each worker instantiates its own), grown on demand and never
 * shrunk; with the chunking its size is bounded by ≈ 8 MiB (C) + 2 MiB (B panels) + 128 KiB (A) + a
 * little per precision, independent of the problem size.
 */
import { ValueError } from "../errors.js";
import { KERNEL_WASM_BASE64 } from "./kernelBytes.js";
import { KERNEL_FMA_WASM_BASE64 } from "./kernelBytesFma.js";
import { F32_MR, F32_NR, F64_MR, F64_NR, KERNEL_RESERVED_BYTES, RA_FIXED_LDA } from "./wat.js";
import type { DenseArray } from "./dense.js";
import { maxAbsOf } from "./range32.js";
import { type WasmMemory, type WasmModule, wasmApi } from "./wasmApi.js";

/**
 * Depth of a packed slice (shared index p). Within one slice every C entry is the sum
 * (((0 + a₀b₀) + a₁b₁) + …) in order of p; past it the slices' sums are added to C — so a caller
 * that must reproduce a sequential loop's bits (sketch sampling/attention.ts) may use `gemmWasm` only
 * for depths ≤ this.
 */
export const GEMM_KC = 256;
const KC = GEMM_KC;
/**
 * Rows of op(A) packed per block (multiple of both MRs): the A block MC × KC (128 KiB in float64)
 * that every B panel sweeps. 64 since stop 24 (it was 128, never tuned): on the Intel host (2 MiB
 * L2) 1024³ f64 14.7–15.5 → 17.0–17.9 GFLOP/s, f32 32–34 → 34–38, 4096×64·64×4096 +20 %, other
 * shapes unchanged (performance.md, "Stop 24"); BLIS's Haswell and Zen double-precision blockings
 * pair KC = 256 with MC = 72 alike. Row blocking changes no entry's sums, so not the bits.
 */
const MC = 64;
/** Columns of op(B) packed per block (multiple of both NRs). */
const NC = 1024;
/** Largest C buffer in WebAssembly memory, in elements (8 MiB in float64). */
const C_CHUNK = 1 << 20;
/**
 * Largest float64 operand (entries) `gemmWasm` copies whole into kernel memory and packs there
 * (8 MiB: a 1024 × 1024 matrix); larger ones are packed block by block in JavaScript, which keeps
 * the kernel memory bounded (≈ 26 MiB at most with both operands staged).
 */
export const STAGE_MAX = 1 << 20;
let stageMax = STAGE_MAX;

/**
 * Sets the largest operand `gemmWasm` stages (entries; 0: none, so every operand takes the
 * JavaScript packers) and returns the previous value — for the tests that compare the two packing
 * paths bit for bit and for the bench's A/B. Per thread.
 */
export function setGemmStageMax(entries: number): number {
  const previous = stageMax;
  stageMax = entries;
  return previous;
}
/** Rows of B packed across all panels at a time (see `packB`): 8 rows measured best of 2–32. */
const PACK_B_ROWS = 8;

/** Float64 or float32 arithmetic inside the kernel. */
export type GemmPrecision = "float64" | "float32";

export type { DenseArray } from "./dense.js";

/** The arguments of a row-major-A kernel after A's address (and leading dimension): B, C, the block sizes, acc. */
type RowsKernelOperands = [bp: number, ldb: number, cp: number, ldc: number, mc: number, nc: number, kc: number, acc: number];

/** Row-major-A macro-kernel: (ap, lda, bp, ldb, cp, ldc, mc, nc, kc, acc) — see `wat.ts`. */
export type GemmRowsKernel = (ap: number, lda: number, ...operands: RowsKernelOperands) => void;

/** rows × kc float64 at src (row stride ld) → R-row panels at dst; returns max |x| (watPack.ts). */
/** `(x, b, c, k, panels)`: see `Kernels.gemv_f64_g4`. */
type GemvKernel = (x: number, b: number, c: number, k: number, panels: number) => void;
type PackRows = (src: number, ld: number, rows: number, kc: number, dst: number) => number;
/** kc × nc float64 at src (row stride ld) → C-column panels at dst; returns max |x| (watPack.ts). */
type PackCols = (src: number, ld: number, kc: number, nc: number, dst: number) => number;

/** This thread's instance of the kernel module, with typed views of its memory (internal). */
export interface Kernels {
  memory: WasmMemory;
  gemm_f64: (ap: number, bp: number, cp: number, ldc: number, mc: number, nc: number, kc: number) => void;
  gemm_f32: (ap: number, bp: number, cp: number, ldc: number, mc: number, nc: number, kc: number) => void;
  gemm_f64_ra: GemmRowsKernel;
  gemm_f32_ra: GemmRowsKernel;
  exp_f64: (src: number, dst: number, n: number) => void;
  exp_f32: (src: number, dst: number, n: number) => void;
  rows_affine_exp_panels_f64: (
    src: number,
    ld: number,
    dst: number,
    kb: number,
    rows: number,
    cols: number,
    s: number,
    mxp: number,
    ep: number,
    tmp: number,
  ) => void;
  rows_max_f64: (src: number, ld: number, rows: number, cols: number, mxp: number, abs: number) => void;
  rows_affine_exp_f64: (
    src: number,
    ld: number,
    dst: number,
    ldd: number,
    rows: number,
    cols: number,
    s: number,
    mxp: number,
    ep: number,
  ) => void;
  softmax_rows_f64: (
    sp: number,
    rows: number,
    cols: number,
    ld: number,
    mp: number,
    lp: number,
    yp: number,
    ldy: number,
    dv: number,
  ) => void;
  /**
   * The exp pass under a fixed row shift, logits in units of ln2/2048 (wat.ts `softmax_shift_rows_f64`): S ← 2^((S − m)/2048), l += Σ.
   * `sym` 1: the caller promises |S| ≤ m on every row it keeps (rows with m ≤ 334 nats then skip the per-group range test).
   */
  softmax_shift_rows_f64: (sp: number, rows: number, cols: number, ld: number, mp: number, lp: number, sym: number) => void;
  /**
   * Its float32 form for logits in units of log₂ (wat.ts `softmax_shift_rows_f32`): S ← 2^(S − M) with the integer
   * M = m[r] ≤ 62, l += Σ; the caller promises |S| ≤ M (no range test).
   */
  softmax_shift_rows_f32: (sp: number, rows: number, cols: number, ld: number, mp: number, lp: number) => void;
  softmax_rows_f32: (
    sp: number,
    rows: number,
    cols: number,
    ld: number,
    mp: number,
    lp: number,
    yp: number,
    ldy: number,
    dv: number,
  ) => void;
  /**
   * The exp pass of one prefix-masked (causal) block, no −∞ written (wat.ts `softmax_prefix_f64` /
   * `_f32`): row r allows keys c < m[r] on entry; m[r] (row max), l[r] and S ← exp(S − m) out.
   */
  softmax_prefix_f64: (sp: number, rows: number, cols: number, ld: number, mp: number, lp: number) => void;
  softmax_prefix_f32: (sp: number, rows: number, cols: number, ld: number, mp: number, lp: number) => void;
  /** Largest eigenvalue of the symmetric n × n matrix at m (row stride ld), overwritten (watJacobi.ts; linalg/eigen.ts). */
  sym_max_eig_f64: (m: number, n: number, ld: number) => number;
  /**
   * out[i·n8 + j] = Σ_c (bt[c·ldb + j] − a[i·d + c])², c in order, for i < rows, j < n8 (a multiple of 8, ≤ ldb;
   * watDistance.ts; linalg/distances.ts).
   */
  sq_dist_rows_f64: (a: number, d: number, rows: number, bt: number, n8: number, out: number, ldb: number) => void;
  /**
   * A recorded sequence of `count` plane operations (6 float64 each at `ops`: rotations, swaps and
   * sign flips of rows) applied in order to the rows of the matrix at x (w float64 per row):
   * watPlane.ts; the singular vectors' share of sketch's Golub–Kahan–Reinsch SVD.
   */
  plane_ops_f64: (x: number, w: number, ops: number, count: number) => void;
  /** Model-step passes of `watModel.ts` (pretrained/resident.ts). */
  /** Returns 1 when every value written is finite (see watModel.ts). */
  rms_rows_f64: (src: number, dst: number, rows: number, cols: number, gain: number, eps: number, out32: number) => number;
  rope_half_f64: (p: number, ld: number, rows: number, blocks: number, dh: number, tab: number) => void;
  swiglu_f64: (gp: number, hp: number, rows: number, n: number, in32: number) => void;
  add_rows_f64: (a: number, b: number, dst: number, n: number, a32: number) => void;
  all_finite: (p: number, n: number, is32: number) => number;
  copy_cols_f64: (src: number, ld: number, dst: number, rows: number, cols: number) => void;
  scale_rows_f64: (src: number, ld: number, dst: number, rows: number, cols: number, s: number, out32: number) => void;
  rows_normalize_out: (yp: number, lp: number, out: number, ldo: number, rows: number, cols: number, in32: number) => number;
  /** float32 → float64 (exact) and float64 → float32 (rounded) over n elements (watModel.ts). */
  widen_f32: (src: number, dst: number, n: number) => void;
  narrow_f64: (src: number, dst: number, n: number) => void;
  /** MLA prefill passes of `watModel.ts` (pretrained/residentMla.ts). */
  rope_pairs_f64: (p: number, ld: number, rows: number, blocks: number, bstride: number, dr: number, tab: number) => void;
  pack_key_panels: (
    src: number,
    ld: number,
    n: number,
    cols: number,
    src32: number,
    dst: number,
    depth: number,
    nr: number,
    dst32: number,
    withMax: number,
  ) => number;
  pack_value_panels: (
    src: number,
    ld: number,
    n: number,
    cols: number,
    src32: number,
    dst: number,
    nr: number,
    dst32: number,
    withMax: number,
  ) => number;
  scatter_add_rows: (out: number, y: number, rowsp: number, wp: number, te: number, d: number, y32: number) => void;
  gather_rows: (src: number, dst: number, rowsp: number, te: number, bytes: number) => void;
  max_abs_block: (src: number, ld: number, rows: number, cols: number) => number;
  /**
   * The `rowShift: "bound"` driver's passes (watBounds.ts): per key panel (nr = 4 float64 / 8 float32 keys)
   * Σ_p k_jp² in p order → their maximum (NaN when some k_jp is), and kabs[p] = max_j |k_jp| (16·depth bytes at kabs).
   */
  key_panel_norms_f64: (panels: number, count: number, depth: number, kabs: number) => number;
  key_panel_norms_f32: (panels: number, count: number, depth: number, kabs: number) => number;
  /** z[l] += Σ_p φ[p, l] over a block of kb keys in 4-column panels, in p order (watFeatures.ts; sketch's resident RF attention). */
  panel_column_sums_f64: (panels: number, kb: number, count: number, z: number) => void;
  /** dst[r] = Σ_c x[r·ld + c]² in c order for each row → 1 when every entry is finite (watFeatures.ts). */
  rows_sumsq_f64: (src: number, ld: number, rows: number, cols: number, dst: number) => number;
  /** dst[r·cols + c] = src[r·ld + c]·(1/src[r·ld + cols]) when every such divisor is > 0 → 1; else 0, nothing written (watFeatures.ts). */
  divide_rows_f64: (src: number, ld: number, rows: number, cols: number, dst: number) => number;
  /** Scaled query rows into the block at dst (float32 rounded when dst32) and each row's shift ⌈bound⌉ (0 past maxshift) at mp. */
  scale_rows_bounds: (
    src: number,
    ld: number,
    rows: number,
    d: number,
    factor: number,
    dst: number,
    dst32: number,
    kabs: number,
    knorm: number,
    slack: number,
    maxshift: number,
    mp: number,
  ) => void;
  /**
   * c = x · W for ONE row x (k float64 at x) and W in `panels` NR-column panels of depth k at b,
   * into panels · NR float64 at c (watGemv.ts): `_g4` with linalg/matmul.ts' smallRowsMatmul sums
   * (C = A B), `_seq` with smallRowsMatmulTransB's (C = A Bᵀ, b the packed Bᵀ); `f32`: float32
   * panels widened, float64 arithmetic (pretrained/residentGemv.ts).
   */
  gemv_f64_g4: GemvKernel;
  gemv_f64_seq: GemvKernel;
  gemv_f32_g4: GemvKernel;
  gemv_f32_seq: GemvKernel;
  /** gemmWasm's packers from staged float64 rows (watPack.ts) → max |x| of the block. */
  pack_rows_f64_r4: PackRows;
  pack_rows_f32_r4: PackRows;
  pack_rows_f32_r8: PackRows;
  pack_cols_f64_c4: PackCols;
  pack_cols_f32_c4: PackCols;
  pack_cols_f32_c8: PackCols;
  f64: Float64Array;
  f32: Float32Array;
}

let kernelBytes: Uint8Array | undefined;
let fmaBytes: Uint8Array | undefined;
let compiled: WasmModule | undefined;
let compiledFma: WasmModule | undefined;
let kernels: Kernels | undefined;
let simdChecked: boolean | undefined;
let relaxedOk = false;

function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** The pre-assembled kernel module's bytes (decoded once from `kernelBytes.ts`). */
export function wasmKernelBytes(): Uint8Array {
  if (!kernelBytes) kernelBytes = fromBase64(KERNEL_WASM_BASE64);
  return kernelBytes;
}

/** The pre-assembled fused-multiply-add GEMM module's bytes (`kernelBytesFma.ts`, wat.ts `fmaKernelWat`). */
export function wasmFmaKernelBytes(): Uint8Array {
  if (!fmaBytes) fmaBytes = fromBase64(KERNEL_FMA_WASM_BASE64);
  return fmaBytes;
}

/**
 * Whether this runtime accepts the relaxed-SIMD kernels that `setKernelArithmetic("fma")` needs:
 * Node ≥ 22 and Chrome ≥ 114 do by default; Node 20 only with V8's
 * `--experimental-wasm-relaxed-simd` (on the command line, or `enableRelaxedSimd()` from
 * `@randattn/core/node` before the first use). A positive answer is kept; a negative one is checked
 * again on the next call, so enabling the flag later is seen.
 */
export function relaxedSimdAvailable(): boolean {
  if (!relaxedOk) {
    try {
      relaxedOk = wasmSimdAvailable() && wasmApi()?.validate(wasmFmaKernelBytes()) === true;
    } catch {
      relaxedOk = false;
    }
  }
  return relaxedOk;
}

/**
 * Whether this runtime can run the SIMD128 kernels (WebAssembly present and the module validates:
 * Node ≥ 16.4, every current browser). Checked once.
 */
export function wasmSimdAvailable(): boolean {
  if (simdChecked === undefined) {
    try {
      const api = wasmApi();
      simdChecked = api?.validate(wasmKernelBytes()) === true;
    } catch {
      simdChecked = false;
    }
  }
  return simdChecked === true;
}

/**
 * The compiled kernel module, compiled synchronously at first use and cached. Synchronous
 * compilation is fine in Node and in workers; browsers refuse it on the main thread only for
 * modules over 4 KiB (some browsers), and this one is ≈ 76 KiB — Node and workers are the targets.
 */
export function wasmKernelModule(): WasmModule {
  const api = wasmApi();
  if (!api) throw new ValueError("WebAssembly", "a runtime with WebAssembly", "none");
  if (!compiled) compiled = new api.Module(wasmKernelBytes());
  return compiled;
}

/**
 * This thread's kernel instance (instantiated on first use). Internal: for the fused drivers of
 * fast/ that keep their operands in WebAssembly memory; they must not hold views across a call
 * that may grow the memory (`ensureKernelMemory`).
 */
export function getKernels(): Kernels {
  if (!kernels) kernels = newKernelInstance();
  return kernels;
}

/**
 * A fresh instance of the kernel module with a memory of its own (`kernels/arena.ts`: data that
 * must outlive other drivers' calls, which all lay out the shared instance's memory from
 * `KERNEL_RESERVED_BYTES` on). The module is compiled once; each instance costs one 64 KiB page
 * plus its exp table.
 */
export function newKernelInstance(): Kernels {
  const inst = new (wasmApi()!.Instance)(wasmKernelModule(), {});
  const ex = inst.exports as unknown as Omit<Kernels, "f64" | "f32">;
  const mulAdd = gemmSet(inst.exports);
  const k: Kernels = { ...ex, ...mulAdd, f64: new Float64Array(ex.memory.buffer), f32: new Float32Array(ex.memory.buffer) };
  gemmSets.set(k, { mulAdd });
  if (liveInstances.length >= pruneAt) {
    const alive = liveInstances.filter((r) => r.deref() !== undefined);
    liveInstances.splice(0, liveInstances.length, ...alive);
    pruneAt = Math.max(16, 2 * alive.length);
  }
  liveInstances.push(new WeakRef(k));
  if (arithmetic === "fma") useGemms(k, "fma");
  return k;
}

/** The GEMM macro-kernels a `Kernels` object calls, as the drivers call them (ra through its dispatch). */
type GemmSet = Pick<Kernels, "gemm_f64" | "gemm_f32" | "gemm_f64_ra" | "gemm_f32_ra">;

function gemmSet(exports: Record<string, unknown>): GemmSet {
  const raw = exports as Record<string, FixedLdaRowsKernel>;
  const ex = exports as unknown as GemmSet;
  return {
    gemm_f64: ex.gemm_f64,
    gemm_f32: ex.gemm_f32,
    gemm_f64_ra: rowsKernelDispatch(ex.gemm_f64_ra, raw, "gemm_f64_ra", F64_MR, 8),
    gemm_f32_ra: rowsKernelDispatch(ex.gemm_f32_ra, raw, "gemm_f32_ra", F32_MR, 4),
  };
}

/**
 * Every kernel instance of this thread (the shared one and the arenas', `kernels/arena.ts`):
 * `setKernelArithmetic` swaps the four GEMM entries on each, so drivers that read `k.gemm_*` at each
 * call follow. Both structures are weak — an arena that is dropped must take its memory (a model's
 * placed weights) with it: the list holds `WeakRef`s (pruned as it doubles), and each instance's
 * mul+add GEMMs and, once asked for, its fused ones (an instance of the FMA module on the same
 * memory) sit in a `WeakMap` keyed by the `Kernels` object, whose values live only as long as it.
 */
const liveInstances: WeakRef<Kernels>[] = [];
let pruneAt = 16;
const gemmSets = new WeakMap<Kernels, { mulAdd: GemmSet; fma?: GemmSet }>();

function useGemms(k: Kernels, mode: KernelArithmetic): void {
  const sets = gemmSets.get(k)!;
  if (mode === "fma" && !sets.fma) {
    if (!compiledFma) compiledFma = new (wasmApi()!.Module)(wasmFmaKernelBytes());
    const inst = new (wasmApi()!.Instance)(compiledFma, { kernels: { memory: k.memory } });
    sets.fma = gemmSet(inst.exports);
  }
  Object.assign(k, mode === "fma" ? sets.fma : sets.mulAdd);
}

/** A `gemm_*_ra<lda>` form (wat.ts): the row-major-A kernel with A's leading dimension built in. */
type FixedLdaRowsKernel = (ap: number, ...operands: RowsKernelOperands) => void;

/**
 * `gemm_*_ra` as the drivers call it: where A's leading dimension has a fixed-stride form
 * (`RA_FIXED_LDA`) and there is at least one whole row tile, the whole tiles run there and the
 * mc mod MR rows left through the general form (the same sums, so the same bits; wat.ts).
 */
function rowsKernelDispatch(
  general: GemmRowsKernel,
  exports: Record<string, FixedLdaRowsKernel>,
  prefix: string,
  MR: number,
  es: number,
): GemmRowsKernel {
  const top = RA_FIXED_LDA[RA_FIXED_LDA.length - 1];
  const fixed = new Array<FixedLdaRowsKernel | undefined>(top + 1).fill(undefined); // dense: no holey-array lookups
  for (const lda of RA_FIXED_LDA) fixed[lda] = exports[`${prefix}${lda}`];
  return (ap, lda, bp, ldb, cp, ldc, mc, nc, kc, acc) => {
    const f = lda <= top ? fixed[lda] : undefined;
    if (f === undefined || mc < MR) {
      general(ap, lda, bp, ldb, cp, ldc, mc, nc, kc, acc);
      return;
    }
    const whole = mc - (mc % MR);
    f(ap, bp, ldb, cp, ldc, whole, nc, kc, acc);
    if (whole < mc) general(ap + whole * lda * es, lda, bp, ldb, cp + whole * ldc * es, ldc, mc - whole, nc, kc, acc);
  };
}

/** Grows the memory to at least `bytes` and refreshes the views (growth detaches the old buffer). */
export function ensureKernelMemory(k: Kernels, bytes: number): void {
  const have = k.memory.buffer.byteLength;
  if (have < bytes) k.memory.grow(Math.ceil((bytes - have) / 65536));
  if (k.f64.buffer !== k.memory.buffer) {
    k.f64 = new Float64Array(k.memory.buffer);
    k.f32 = new Float32Array(k.memory.buffer);
  }
}

/** Current size of this thread's kernel memory in bytes (0 before first use). */
export function wasmMemoryBytes(): number {
  return kernels ? kernels.memory.buffer.byteLength : 0;
}

const roundUp = (x: number, m: number) => Math.ceil(x / m) * m;

/** Time split of `gemmWasm` calls while profiling is on (milliseconds). */
export interface GemmProfile {
  /** Calls profiled. */
  calls: number;
  /** Packing op(A) and op(B) into WebAssembly memory (this is the operand copy-in). */
  packMs: number;
  /** Copying C in (accumulate) and out, and zeroing it. */
  copyMs: number;
  /** Inside the SIMD macro-kernel. */
  kernelMs: number;
}

const profile: GemmProfile = { calls: 0, packMs: 0, copyMs: 0, kernelMs: 0 };
let profiling = false;

/**
 * Turns the time split of `gemmWasm` on or off and resets it; `gemmProfile()` reads it. For the
 * bench's copy-cost measurement (a `performance.now()` per block when on, nothing when off).
 */
export function setGemmProfiling(on: boolean): void {
  profiling = on;
  profile.calls = 0;
  profile.packMs = 0;
  profile.copyMs = 0;
  profile.kernelMs = 0;
}

/** A copy of the accumulated profile (see `setGemmProfiling`). */
export function gemmProfile(): GemmProfile {
  return { ...profile };
}

/**
 * Packs rows i0…i0+mcur−1, depth p0…p0+kcur−1 of op(A) into MR-row panels at `dst[off…]`
 * (panel-major, `p·MR + ii` inside a panel), zero-padding the last panel.
 * op(A)(i, p) = A[i·k + p] (`transA` false, A is m×k) or A[p·m + i] (`transA` true, A is k×m).
 */
function packA(
  A: DenseArray,
  transA: boolean,
  m: number,
  k: number,
  dst: DenseArray,
  off: number,
  i0: number,
  mcur: number,
  p0: number,
  kcur: number,
  MR: number,
): void {
  for (let ip = 0; ip < mcur; ip += MR) {
    const base = off + ip * kcur;
    const rows = Math.min(MR, mcur - ip);
    if (!transA) {
      if (rows === 4 && MR === 4) {
        // Four row streams read in step, written contiguously (the common full panel).
        const s0 = (i0 + ip) * k + p0;
        const s1 = s0 + k;
        const s2 = s1 + k;
        const s3 = s2 + k;
        let d = base;
        for (let p = 0; p < kcur; p++, d += 4) {
          dst[d] = A[s0 + p];
          dst[d + 1] = A[s1 + p];
          dst[d + 2] = A[s2 + p];
          dst[d + 3] = A[s3 + p];
        }
      } else {
        for (let ii = 0; ii < rows; ii++) {
          const src = (i0 + ip + ii) * k + p0;
          let d = base + ii;
          for (let p = 0; p < kcur; p++, d += MR) dst[d] = A[src + p];
        }
      }
    } else {
      for (let p = 0; p < kcur; p++) {
        const src = (p0 + p) * m + i0 + ip;
        const d = base + p * MR;
        for (let ii = 0; ii < rows; ii++) dst[d + ii] = A[src + ii];
      }
    }
    if (rows < MR) {
      for (let ii = rows; ii < MR; ii++) {
        let d = base + ii;
        for (let p = 0; p < kcur; p++, d += MR) dst[d] = 0;
      }
    }
  }
}

/**
 * Packs depth p0…p0+kcur−1, columns j0…j0+ncur−1 of op(B) into NR-column panels at `dst[off…]`
 * (`p·NR + jj` inside a panel), zero-padding the last panel.
 * op(B)(p, j) = B[p·n + j] (`transB` false, B is k×n) or B[j·k + p] (`transB` true, B is n×k).
 */
function packB(
  B: DenseArray,
  transB: boolean,
  k: number,
  n: number,
  dst: DenseArray,
  off: number,
  p0: number,
  kcur: number,
  j0: number,
  ncur: number,
  NR: number,
): void {
  let jFull = 0;
  if (!transB && (NR === 4 || NR === 8)) {
    // The full panels, unrolled (the generic loop of NR was ≈ 10 % of a 1024³ product) and in
    // blocks of PACK_B_ROWS rows across all panels: panel by panel, each panel walked kcur rows
    // of B (kcur·n·8 bytes, 2 MiB at 256 × 1024 — past L2) for NR elements a row, so every panel
    // re-fetched the rows' lines from L3 (≈ 10 ns per element). A block of 8 rows (64 KiB at
    // n = 1024) stays in L2 across the panels: 3× faster (bench: packB 1024×1024), same bytes.
    jFull = ncur - (ncur % NR);
    for (let pb = 0; pb < kcur; pb += PACK_B_ROWS) {
      const pe = Math.min(kcur, pb + PACK_B_ROWS);
      for (let jp = 0; jp < jFull; jp += NR) {
        let src = (p0 + pb) * n + j0 + jp;
        let d = off + jp * kcur + pb * NR;
        if (NR === 4) {
          for (let p = pb; p < pe; p++, src += n, d += 4) {
            dst[d] = B[src];
            dst[d + 1] = B[src + 1];
            dst[d + 2] = B[src + 2];
            dst[d + 3] = B[src + 3];
          }
        } else {
          for (let p = pb; p < pe; p++, src += n, d += 8) {
            dst[d] = B[src];
            dst[d + 1] = B[src + 1];
            dst[d + 2] = B[src + 2];
            dst[d + 3] = B[src + 3];
            dst[d + 4] = B[src + 4];
            dst[d + 5] = B[src + 5];
            dst[d + 6] = B[src + 6];
            dst[d + 7] = B[src + 7];
          }
        }
      }
    }
  }
  for (let jp = jFull; jp < ncur; jp += NR) {
    const base = off + jp * kcur;
    const cols = Math.min(NR, ncur - jp);
    if (!transB) {
      for (let p = 0; p < kcur; p++) {
        const src = (p0 + p) * n + j0 + jp;
        const d = base + p * NR;
        for (let jj = 0; jj < cols; jj++) dst[d + jj] = B[src + jj];
      }
    } else if (cols === 4 && NR === 4) {
      // Q Kᵀ's K panel: four rows of B read in step, written contiguously.
      const s0 = (j0 + jp) * k + p0;
      const s1 = s0 + k;
      const s2 = s1 + k;
      const s3 = s2 + k;
      let d = base;
      for (let p = 0; p < kcur; p++, d += 4) {
        dst[d] = B[s0 + p];
        dst[d + 1] = B[s1 + p];
        dst[d + 2] = B[s2 + p];
        dst[d + 3] = B[s3 + p];
      }
    } else {
      for (let jj = 0; jj < cols; jj++) {
        const src = (j0 + jp + jj) * k + p0;
        let d = base + jj;
        for (let p = 0; p < kcur; p++, d += NR) dst[d] = B[src + p];
      }
    }
    if (cols < NR) {
      for (let p = 0; p < kcur; p++) {
        const d = base + p * NR;
        for (let jj = cols; jj < NR; jj++) dst[d + jj] = 0;
      }
    }
  }
}

/**
 * C (m×n, row-major) (+)= op(A) · op(B) on the WebAssembly SIMD kernels. op(A) is m×k (A stored m×k,
 * or k×m when `transA`), op(B) is k×n (B stored k×n, or n×k when `transB`). With `accumulate`
 * false C is overwritten. Operands may be float64 or float32 arrays whatever the precision; in
 * float32 they are rounded to float32 while packing and every product and sum is float32.
 *
 * A float64 operand of at most `STAGE_MAX` entries is copied whole into kernel memory by one
 * `set` and its blocks are packed there (watPack.ts: the same panels as `packA` / `packB`, so the
 * same bits), which also yields max |entry|; larger or float32 operands are packed by the
 * JavaScript loops. With `maxima` (length ≥ 2) given, maxima[0] = max |A| and maxima[1] = max |B|
 * over all entries (NaN when one is NaN, as `maxAbsOf`) — the float32 products' range check,
 * without a separate scan where the operand was staged.
 * Raw kernel: no argument checks (the public wrappers check shapes).
 */
export function gemmWasm(
  precision: GemmPrecision,
  transA: boolean,
  transB: boolean,
  A: DenseArray,
  B: DenseArray,
  C: DenseArray,
  m: number,
  k: number,
  n: number,
  accumulate: boolean,
  maxima?: Float64Array,
): void {
  const stagedA = A instanceof Float64Array && m * k <= stageMax;
  const stagedB = B instanceof Float64Array && k * n <= stageMax;
  if (maxima) {
    // Scanned here: what the staged packers will not see — a float32 operand (packed in
    // JavaScript), or both when nothing is packed.
    const packs = m > 0 && n > 0 && k > 0;
    maxima[0] = stagedA && packs ? 0 : maxAbsOf(A, m * k);
    maxima[1] = stagedB && packs ? 0 : maxAbsOf(B, k * n);
  }
  if (m === 0 || n === 0) return;
  if (k === 0) {
    if (!accumulate) C.fill(0, 0, m * n);
    return;
  }
  const f64 = precision === "float64";
  const MR = f64 ? F64_MR : F32_MR;
  const NR = f64 ? F64_NR : F32_NR;
  const es = f64 ? 8 : 4;
  const kcMax = Math.min(KC, k);
  const mcMax = Math.min(MC, roundUp(m, MR));
  const ncMax = Math.min(NC, roundUp(n, NR));
  const chunkRows = Math.min(m, Math.max(MR, Math.floor(C_CHUNK / n)));
  // Byte layout: [scratch + exp table | A panels | B panels | C chunk | A | B], each 16-byte
  // aligned; the whole float64 A and B (before packing) only when staged.
  const aAddr = KERNEL_RESERVED_BYTES;
  const bAddr = aAddr + roundUp(mcMax * kcMax * es, 16);
  const cAddr = bAddr + roundUp(ncMax * kcMax * es, 16);
  const saAddr = roundUp(cAddr + chunkRows * n * es, 16);
  const sbAddr = saAddr + (stagedA ? m * k * 8 : 0);
  const end = sbAddr + (stagedB ? k * n * 8 : 0);
  const K = getKernels();
  ensureKernelMemory(K, end);
  const view: DenseArray = f64 ? K.f64 : K.f32;
  if (stagedA) K.f64.set(A, saAddr / 8);
  if (stagedB) K.f64.set(B, sbAddr / 8);
  const kernel = f64 ? K.gemm_f64 : K.gemm_f32;
  // op(A) from A's rows (MR-row panels) or from Aᵀ's columns; op(B) from B's columns (NR-column
  // panels) or from Bᵀ's rows.
  const packRowsA = f64 ? K.pack_rows_f64_r4 : K.pack_rows_f32_r4;
  const packColsA = f64 ? K.pack_cols_f64_c4 : K.pack_cols_f32_c4;
  const packColsB = f64 ? K.pack_cols_f64_c4 : K.pack_cols_f32_c8;
  const packRowsB = f64 ? K.pack_rows_f64_r4 : K.pack_rows_f32_r8;
  const aOff = aAddr / es;
  const bOff = bAddr / es;
  const cOff = cAddr / es;
  let maxA = 0;
  let maxB = 0;
  if (profiling) profile.calls++;
  let t = profiling ? performance.now() : 0;
  const lap = (field: "packMs" | "copyMs" | "kernelMs") => {
    const now = performance.now();
    profile[field] += now - t;
    t = now;
  };
  for (let r0 = 0; r0 < m; r0 += chunkRows) {
    const rows = Math.min(chunkRows, m - r0);
    const cView = view.subarray(cOff, cOff + rows * n);
    if (accumulate) cView.set(C.subarray(r0 * n, (r0 + rows) * n));
    else cView.fill(0);
    if (profiling) lap("copyMs");
    for (let j0 = 0; j0 < n; j0 += NC) {
      const ncur = Math.min(NC, n - j0);
      for (let p0 = 0; p0 < k; p0 += KC) {
        const kcur = Math.min(KC, k - p0);
        if (!stagedB) packB(B, transB, k, n, view, bOff, p0, kcur, j0, ncur, NR);
        else if (!transB) maxB = Math.max(maxB, packColsB(sbAddr + (p0 * n + j0) * 8, n, kcur, ncur, bAddr));
        else maxB = Math.max(maxB, packRowsB(sbAddr + (j0 * k + p0) * 8, k, ncur, kcur, bAddr));
        for (let i0 = 0; i0 < rows; i0 += MC) {
          const mcur = Math.min(MC, rows - i0);
          if (!stagedA) packA(A, transA, m, k, view, aOff, r0 + i0, mcur, p0, kcur, MR);
          else if (!transA) maxA = Math.max(maxA, packRowsA(saAddr + ((r0 + i0) * k + p0) * 8, k, mcur, kcur, aAddr));
          else maxA = Math.max(maxA, packColsA(saAddr + (p0 * m + r0 + i0) * 8, m, kcur, mcur, aAddr));
          if (profiling) lap("packMs");
          kernel(aAddr, bAddr, cAddr + (i0 * n + j0) * es, n, mcur, ncur, kcur);
          if (profiling) lap("kernelMs");
        }
      }
    }
    C.set(cView, r0 * n);
    if (profiling) lap("copyMs");
  }
  if (maxima) {
    if (stagedA) maxima[0] = maxA;
    if (stagedB) maxima[1] = maxB;
  }
}

/**
 * op(B) packed once into the NR-column panels of `gemmWasm` (float64): for a weight matrix that
 * many products reuse (a model's projections), so each product copies the panels into kernel memory
 * in one `set` instead of repacking B. Only for one-block shapes, k ≤ KC and n ≤ NC.
 */
export interface PackedOperand {
  /** Shared (depth) dimension. */
  readonly k: number;
  /** Columns of op(B). */
  readonly n: number;
  /** The panels, roundUp(n, NR) · k floats, in `packB`'s layout. */
  readonly panels: Float64Array;
}

/**
 * Packs op(B) (B k×n, or n×k when `transB`) for {@link gemmWasmPacked}; undefined when the shape
 * takes more than one KC × NC block (then `gemmWasm` packs per call).
 */
export function packOperandF64(B: Float64Array, transB: boolean, k: number, n: number): PackedOperand | undefined {
  if (!packableOperand(k, n)) return undefined;
  const panels = new Float64Array(roundUp(n, F64_NR) * k);
  packPanelsF64(B, transB, k, n, panels, 0);
  return { k, n, panels };
}

/**
 * op(B) (k × n; B stored n × k when `transB`) whole into NR-column float64 panels of depth k at
 * element offset `off` of `dst`, the last panel zero-padded: the layout `gemm_f64_ra` and the one-row
 * kernels `gemv_f64_*` read (⌈n/NR⌉·NR·k floats).
 */
export function packPanelsF64(B: DenseArray, transB: boolean, k: number, n: number, dst: DenseArray, off: number): void {
  packB(B, transB, k, n, dst, off, 0, k, 0, n, F64_NR);
}

/** Whether `packOperandF64` / `packOperandF32` pack a k × n op(B) (one KC × NC block). */
export function packableOperand(k: number, n: number): boolean {
  return k > 0 && n > 0 && k <= KC && n <= NC;
}

/**
 * C (m×n) (+)= A (m×k, row-major) · op(B) with op(B) already packed (`packOperandF64`), on the
 * row-major-A macro-kernel `gemm_f64_ra`: A is copied into kernel memory in one `set` per row chunk
 * (no MR-panel packing) and `acc` = 0 overwrites C (no zeroing pass) — at a model's sizes
 * (128 × 64 · 64 × 384) packing and zeroing cost ≈ a third of the kernel time. Each C[i, j] is the
 * same sequential sum over p as in `gemmWasm`. Raw kernel: no argument checks.
 */
export function gemmWasmPacked(A: DenseArray, B: PackedOperand, C: DenseArray, m: number, accumulate: boolean): void {
  const { k, n } = B;
  if (m === 0) return;
  const es = 8;
  const chunkRows = Math.min(m, Math.max(F64_MR, Math.floor(C_CHUNK / Math.max(n, k))));
  const bAddr = KERNEL_RESERVED_BYTES;
  const aAddr = bAddr + roundUp(B.panels.length * es, 16);
  const cAddr = aAddr + roundUp(chunkRows * k * es, 16);
  // Room for a whole edge tile past the last row (the kernel clamps, but memory stays in bounds).
  const end = cAddr + roundUp(chunkRows, F64_MR) * n * es;
  const K = getKernels();
  ensureKernelMemory(K, end);
  const view = K.f64;
  const aOff = aAddr / es;
  const cOff = cAddr / es;
  view.set(B.panels, bAddr / es);
  for (let r0 = 0; r0 < m; r0 += chunkRows) {
    const rows = Math.min(chunkRows, m - r0);
    view.set(A.subarray(r0 * k, (r0 + rows) * k), aOff);
    const cView = view.subarray(cOff, cOff + rows * n);
    if (accumulate) cView.set(C.subarray(r0 * n, (r0 + rows) * n));
    K.gemm_f64_ra(aAddr, k, bAddr, k, cAddr, n, rows, n, k, accumulate ? 1 : 0);
    C.set(cView, r0 * n);
  }
}

/** op(B) packed once into the 8-column float32 panels of `gemm_f32_ra` (see {@link PackedOperand}). */
export interface PackedOperand32 {
  /** Shared (depth) dimension. */
  readonly k: number;
  /** Columns of op(B). */
  readonly n: number;
  /** The panels, roundUp(n, F32_NR) · k floats (B rounded to float32 once), in `packB`'s layout. */
  readonly panels: Float32Array;
}

/** {@link packOperandF64} in float32 (B rounded to float32 once, while packing). */
export function packOperandF32(B: Float64Array, transB: boolean, k: number, n: number): PackedOperand32 | undefined {
  if (!packableOperand(k, n)) return undefined;
  const panels = new Float32Array(roundUp(n, F32_NR) * k);
  packB(B, transB, k, n, panels, 0, 0, k, 0, n, F32_NR);
  return { k, n, panels };
}

/**
 * {@link gemmWasmPacked} in float32: C (m×n) = A (m×k, row-major, rounded to float32 as it is
 * copied into kernel memory) · op(B) (packed by `packOperandF32`) on `gemm_f32_ra`, every product
 * and sum in float32 (`gemmWasm("float32", …)`'s arithmetic: |C₃₂ − C| ≤ (k + 2)·u·(|A||B|), u = 2⁻²⁴);
 * C receives the float32 results widened. Raw kernel: no argument checks, no range guard (the
 * caller knows its operands are far inside float32's range).
 */
export function gemmWasmPacked32(A: DenseArray, B: PackedOperand32, C: DenseArray, m: number): void {
  const { k, n } = B;
  if (m === 0) return;
  const es = 4;
  const chunkRows = Math.min(m, Math.max(F32_MR, Math.floor(C_CHUNK / Math.max(n, k))));
  const bAddr = KERNEL_RESERVED_BYTES;
  const aAddr = bAddr + roundUp(B.panels.length * es, 16);
  const cAddr = aAddr + roundUp(chunkRows * k * es, 16);
  const end = cAddr + roundUp(chunkRows, F32_MR) * n * es;
  const K = getKernels();
  ensureKernelMemory(K, end);
  const view = K.f32;
  const aOff = aAddr / es;
  const cOff = cAddr / es;
  view.set(B.panels, bAddr / es);
  for (let r0 = 0; r0 < m; r0 += chunkRows) {
    const rows = Math.min(chunkRows, m - r0);
    view.set(A.subarray(r0 * k, (r0 + rows) * k), aOff);
    K.gemm_f32_ra(aAddr, k, bAddr, k, cAddr, n, rows, n, k, 0);
    C.set(view.subarray(cOff, cOff + rows * n), r0 * n);
  }
}

/** Which kernels the `matmul*` functions use: `"auto"` picks per call (see `kernelBackendFor`). */
export type KernelBackend = "scalar" | "wasm" | "auto";

const BACKENDS: readonly KernelBackend[] = ["scalar", "wasm", "auto"];
/** Environment variable read once to set the initial backend (`scalar`, `wasm` or `auto`). */
export const KERNEL_BACKEND_ENV = "RANDATTN_KERNEL_BACKEND";

let backend: KernelBackend | undefined;

/**
 * Below this many multiply-adds (m·k·n) the scalar kernel wins: packing and the JS→WebAssembly
 * call cost a few microseconds, the size of a 16³ product (measured; see docs/performance.md).
 */
export const AUTO_MIN_WORK = 16 * 16 * 16;

/** Products with fewer output rows than this run on the scalar few-rows kernels under "auto". */
export const SMALL_M_ROWS = 4;

/**
 * PROCESS-WIDE switch (per thread: each worker has its own): selects the matmul kernels for every
 * later call in this thread — prefer the scoped {@link withKernelBackend}, which restores the
 * previous setting. `"scalar"` (the register-tiled JavaScript kernels of
 * `linalg/matmul.ts`), `"wasm"` (always the SIMD128 kernels) or `"auto"` (WebAssembly when SIMD is
 * available and the product is large enough to amortize packing). The initial value comes from the
 * `RANDATTN_KERNEL_BACKEND` environment variable, else `"auto"`. Returns the previous setting.
 * @throws ValueError for an unknown backend, or `"wasm"` when WebAssembly SIMD is unavailable.
 */
export function setKernelBackend(value: KernelBackend): KernelBackend {
  if (typeof value !== "string" || !BACKENDS.includes(value)) {
    throw new ValueError("backend", `one of ${BACKENDS.map((b) => `"${b}"`).join(", ")}`, String(value));
  }
  if (value === "wasm" && !wasmSimdAvailable()) {
    throw new ValueError("backend", '"scalar" or "auto" (WebAssembly SIMD128 is unavailable in this runtime)', '"wasm"');
  }
  const previous = getKernelBackend();
  backend = value;
  return previous;
}

/**
 * Runs `fn` with the matmul kernels set to `backend`, then restores the previous setting (also
 * when `fn` throws) — the scoped form of {@link setKernelBackend}. Synchronous only: an async `fn`
 * would leave the scope before its awaited work runs, so a returned promise is refused.
 * @throws ValueError as {@link setKernelBackend}, or when `fn` returns a promise.
 * @example
 * const exact = withKernelBackend("scalar", () => matmul(a, b)); // the reference kernels, just here
 */
export function withKernelBackend<T>(value: KernelBackend, fn: () => T): T {
  return scoped(
    setKernelBackend(value),
    (previous: KernelBackend) => {
      backend = previous;
    },
    fn,
    "backend",
  );
}

/**
 * How the WebAssembly GEMM macro-kernels add each term: `"mul-add"` — `f64x2.mul` then `f64x2.add`,
 * two roundings per term, the same bits on every machine and engine (the default, and what every
 * committed result was computed with); `"fma"` — relaxed SIMD's `relaxed_madd`, one rounding per
 * term where the CPU has fused multiply-add (x86-64 with FMA3, arm64), ≈ 1.2× the throughput here,
 * and results whose last bits depend on the machine (the relaxed-SIMD proposal allows either form).
 */
export type KernelArithmetic = "mul-add" | "fma";

const ARITHMETICS: readonly KernelArithmetic[] = ["mul-add", "fma"];
let arithmetic: KernelArithmetic = "mul-add";

/**
 * PER-THREAD switch (each worker has its own; `attentionParallel` and `parallelMultiHeadAttention`
 * hand theirs to their workers): the arithmetic of every WebAssembly GEMM macro-kernel — matmul,
 * the attention drivers' two products, the models' projections — for every later call in this
 * thread. Only those kernels change: the exp passes, packing, the few-row JavaScript products and
 * the decode kernels keep their sums. Prefer the scoped {@link withKernelArithmetic}. Returns the
 * previous setting. Every product stays a sum of the same terms in the same order, so the usual
 * bound holds, |fl(Σ) − Σ| ≤ γ_k Σ|a_p b_p|, with fewer roundings.
 * @throws ValueError for an unknown value, or `"fma"` where the runtime refuses relaxed SIMD
 * (see {@link relaxedSimdAvailable}).
 * @example
 * ```ts
 * import { attention, randomMatrix, withKernelArithmetic } from "@randattn/core";
 * import { enableRelaxedSimd } from "@randattn/core/node";
 * const x = randomMatrix(512, 64, {}, [7, "x"]);
 * console.log(enableRelaxedSimd()); // true — on Node 20 this sets V8's --experimental-wasm-relaxed-simd
 * const plain = attention(x, x, x, { precision: "float32" });
 * const fused = withKernelArithmetic("fma", () => attention(x, x, x, { precision: "float32" }));
 * let worst = 0;
 * for (let i = 0; i < plain.data.length; i++) worst = Math.max(worst, Math.abs(fused.data[i] - plain.data[i]));
 * console.log(worst < 1e-5); // true — the same sums with one rounding less per term
 * ```
 */
export function setKernelArithmetic(value: KernelArithmetic): KernelArithmetic {
  if (typeof value !== "string" || !ARITHMETICS.includes(value)) {
    throw new ValueError("arithmetic", `one of ${ARITHMETICS.map((b) => `"${b}"`).join(", ")}`, String(value));
  }
  if (value === "fma" && !relaxedSimdAvailable()) {
    throw new ValueError(
      "arithmetic",
      '"mul-add", or a runtime with relaxed SIMD for "fma" (Node ≥ 22; Node 20 with --experimental-wasm-relaxed-simd or enableRelaxedSimd())',
      '"fma"',
    );
  }
  const previous = arithmetic;
  if (value !== arithmetic) {
    arithmetic = value;
    for (let i = liveInstances.length - 1; i >= 0; i--) {
      const k = liveInstances[i].deref();
      if (k) useGemms(k, value);
      else liveInstances.splice(i, 1);
    }
  }
  return previous;
}

/**
 * Runs `fn` with the GEMM kernels' arithmetic set to `value`, then restores the previous setting
 * (also when `fn` throws) — the scoped form of {@link setKernelArithmetic}. Synchronous only.
 * @throws ValueError as {@link setKernelArithmetic}, or when `fn` returns a promise.
 */
export function withKernelArithmetic<T>(value: KernelArithmetic, fn: () => T): T {
  return scoped(setKernelArithmetic(value), setKernelArithmetic, fn, "arithmetic");
}

/**
 * `fn()` with a per-thread setting already switched, then `restore(previous)` (also when `fn`
 * throws); a returned promise is refused, since the scope ends before its awaited work runs.
 */
function scoped<T, S>(previous: S, restore: (value: S) => unknown, fn: () => T, what: string): T {
  let out: T;
  try {
    out = fn();
  } finally {
    restore(previous);
  }
  if (out !== null && typeof out === "object" && typeof (out as { then?: unknown }).then === "function") {
    throw new ValueError("fn", `a synchronous function (the ${what} scope ends when fn returns)`, "a function returning a promise");
  }
  return out;
}

/** The current GEMM arithmetic of this thread (see {@link setKernelArithmetic}); `"mul-add"` until set. */
export function getKernelArithmetic(): KernelArithmetic {
  return arithmetic;
}

/**
 * The current backend setting (see `setKernelBackend`).
 * @throws ValueError when `RANDATTN_KERNEL_BACKEND` holds an unknown value.
 */
export function getKernelBackend(): KernelBackend {
  if (backend === undefined) {
    const env = typeof process === "object" ? process.env?.[KERNEL_BACKEND_ENV] : undefined;
    if (env === undefined || env === "") backend = "auto";
    else if ((BACKENDS as readonly string[]).includes(env)) backend = env as KernelBackend;
    else throw new ValueError(KERNEL_BACKEND_ENV, `one of ${BACKENDS.map((b) => `"${b}"`).join(", ")}`, JSON.stringify(env));
  }
  return backend;
}

/** The kernel a product of an m×k by a k×n matrix runs on under the current setting. */
export function kernelBackendFor(m: number, k: number, n: number): "scalar" | "wasm" {
  const b = getKernelBackend();
  if (b === "scalar") return "scalar";
  if (b === "wasm") return "wasm";
  // A few output rows (x·W for one decoded token, m < SMALL_M_ROWS) or one output column is a
  // matrix-vector-like product: the driver would repack the whole other operand for as many
  // multiply-adds as copies, so the scalar few-rows kernels of linalg/matmul.ts, which stream B
  // once, are faster (measured ≈ 1.3–4× for m = 1…3; docs/performance.md).
  if (m < SMALL_M_ROWS || n < 2 || m * k * n < AUTO_MIN_WORK) return "scalar";
  return wasmSimdAvailable() ? "wasm" : "scalar";
}

/** Bytes of A per row chunk of {@link gemmWasmRowsF64}: 32 rows at k = 512 (2^16 and 2^17 measured best, 2^20 no gain). */
const ROWS_CHUNK_BYTES = 1 << 17;

/**
 * C (m×n) = A (m×k, row-major) · B (k×n, row-major), float64, for a tall A and a narrow B (the range
 * finder's A·Ω and A·Z, n ≈ 74): B is packed once, whole depth, into NR-column panels, and A is
 * copied into kernel memory a few dozen rows at a time with one `set` and read in place by
 * `gemm_f64_ra` over the full depth k — no MR-panel packing of A (which `gemmWasm` repeats for
 * every product; ≈ a quarter of the product at 16384 × 512 · 512 × 74) and no C reloads between
 * KC blocks. Each C[i, j] is one sequential sum over p (another rounding order than `gemmWasm`'s
 * KC-blocked one). Raw kernel: no argument checks; B's panels must fit kernel memory beside a chunk.
 */
export function gemmWasmRowsF64(A: Float64Array, B: Float64Array, C: Float64Array, m: number, k: number, n: number): void {
  if (m === 0 || n === 0) return;
  if (k === 0) {
    C.fill(0, 0, m * n);
    return;
  }
  const es = 8;
  const np = roundUp(n, F64_NR);
  const chunkRows = Math.max(F64_MR, Math.min(m, Math.floor(ROWS_CHUNK_BYTES / (k * es))));
  const bAddr = KERNEL_RESERVED_BYTES;
  const aAddr = bAddr + roundUp(np * k * es, 16);
  const cAddr = aAddr + roundUp(chunkRows * k * es, 16);
  const end = cAddr + roundUp(chunkRows, F64_MR) * n * es;
  const K = getKernels();
  ensureKernelMemory(K, end);
  const view = K.f64;
  packPanelsF64(B, false, k, n, view, bAddr / es);
  const aOff = aAddr / es;
  const cOff = cAddr / es;
  for (let r0 = 0; r0 < m; r0 += chunkRows) {
    const rows = Math.min(chunkRows, m - r0);
    view.set(A.subarray(r0 * k, (r0 + rows) * k), aOff);
    K.gemm_f64_ra(aAddr, k, bAddr, k, cAddr, n, rows, n, k, 0);
    C.set(view.subarray(cOff, cOff + rows * n), r0 * n);
  }
}
