/**
 * Fused float64 softmax attention in WebAssembly memory (issue #5, second pass): the exact
 * Y = Z⁻¹AV with A = exp(S − rowShift), S = (scale·Q)Kᵀ (paper §2.1), where every large operand
 * stays in the kernel module's memory between the steps:
 *
 *   K and V are packed once per call into NR-column panels (K: 4 keys × d_QK; V: 4 value columns ×
 *   N_KV), then for each block of query rows (and, streaming, each block of keys):
 *     S_tile = Q_blk K_blkᵀ             `gemm_f64_ra` reading the scaled query rows in place,
 *     masked logits ← −∞                (only for partial mask tiles),
 *     online-softmax update of the tile `softmax_rows_f64`: row max, α = exp(m − m'), l and Y
 *                                       rescaled, S ← exp(S − m') in place with the SIMD exp,
 *     Y_blk += S_tile V_blk             `gemm_f64_ra` reading the exponentiated rows in place.
 *
 * The materialized form is the one-key-block case (each query block's full N_KV-wide row block, so
 * exactly one row max and one exp pass per row as in the literal formula); the streaming form is
 * FlashAttention's recurrence over key blocks. The materialized form without a mask or score output
 * (float64, and float32 since stop 20) shifts each row by an upper bound of its logits instead of its
 * max (`rowShift: "bound"`, `boundSoftmaxAttention`): no max pass, and L2-sized key chunks from S through exp to A V. Nothing crosses the JS/WebAssembly boundary per
 * element except the scaled queries coming in and Y (and, when asked, the score rows) going out,
 * and no N_Q × N_KV array exists unless the caller asks for the scores.
 *
 * Accuracy: the products are the same f64x2 sums as `gemm_f64` (≤ 2γ_k componentwise from the
 * scalar kernels), the exp is within 1 ulp of Math.exp (measured over 10⁶ arguments; see
 * `wat.ts`), so results agree with the scalar reference path to ≈ 1e-15 relative (tested at 1e-12).
 *
 * Memory: O(N_KV·(d_QK + d_V)) for the packed K and V plus one query block's tiles (≈ 1 MiB), in
 * the thread's kernel memory (which grows on demand and is not shrunk). Calls needing more than
 * `FUSED_MAX_BYTES` return `false` so the caller can take its JavaScript path.
 */
import { ValueError } from "../errors.js";
import { F32_NR, F64_NR, KERNEL_RESERVED_BYTES, SHIFT_F32_MAX } from "./wat.js";
import { type Kernels, ensureKernelMemory, getKernels, getKernelBackend, wasmSimdAvailable } from "./gemm.js";
import { attentionInFloat32Range } from "./scan.js";

const EMPTY = new Float64Array(0);

/** Depth of a P V slice (keys per call of the macro-kernel): a 4 × 256 V panel (8 KiB) stays in L1. */
const KC = 256;
/** Largest kernel memory the fused path may use; beyond it the callers fall back to JavaScript. */
export const FUSED_MAX_BYTES = 1 << 30;
/** Target size of one materialized row block of scores (query rows × N_KV float64s): L2-sized. */
const ROW_BLOCK_BYTES = 1 << 20;
/** Below this many multiply-adds (N_Q·N_KV·d_QK) the "auto" backend keeps the JavaScript path. */
export const FUSED_MIN_WORK = 16 * 16 * 16;

/** Tile status codes, as `CompiledMask.tile` of attention/mask.ts returns them. */
const TILE_NONE = 0;
const TILE_PARTIAL = 2;

/**
 * A mask queried tile by tile (structurally `CompiledMask` of attention/): status of rows
 * [i0, i1) × keys [j0, j1) — 0 none allowed, 1 all allowed, 2 mixed with the 0/1 tile (row stride
 * j1 − j0) written to `out`.
 */
export interface TileMask {
  tile(i0: number, i1: number, j0: number, j1: number, out: Uint8Array): number;
  /**
   * Row-prefix masks (causal, padding) only: the limits (query i may attend to keys j < limit[i]),
   * so the materialized driver computes each query block's scores only up to the block's largest
   * limit — a causal prefill skips the masked triangle (≈ half the products and exps) instead of
   * computing it and overwriting it with −∞. Absent for other masks.
   */
  prefixLimits?(): Int32Array | undefined;
}

/** Inputs and outputs of `fusedSoftmaxAttention` (flat row-major float64). */
export interface FusedSoftmaxSpec {
  /** Q, nQ × d (unscaled; the scale is applied while copying the query block in). */
  queries: Float64Array;
  /**
   * Row stride of `queries`: row i is queries[i·queryStride … + d) — one head's columns of a joined
   * [Q_0 | Q_1 | …] block read in place (`queries` a subarray starting at the head's column). @default d
   */
  queryStride?: number;
  /** Row stride of `out` (row i of Y at out[i·outStride …]), e.g. one head's columns of concat(Y_h). @default dV */
  outStride?: number;
  /** K, nKV × d. */
  keys: Float64Array;
  /** V, nKV × dV; omitted when only the scores are wanted. */
  values?: Float64Array;
  nQ: number;
  nKV: number;
  d: number;
  dV: number;
  /** Logit scale (folded into the query copy, as the JavaScript path does). */
  scale: number;
  /** Query rows per block. @default a materialized row block of ≈ 1 MiB (streaming: 128) */
  queryBlock?: number;
  /** Keys per block; ≥ nKV (the default) is the materialized form. Rounded up to a multiple of 4. */
  keyBlock?: number;
  /** Allowed keys per query; masked logits become −∞ (exp gives exactly 0). */
  mask?: TileMask;
  /** Y out (nQ × dV): Y[i,:] = (Σ_j A[i,j]V[j,:]) / l[i]; a zero row where l[i] is 0 or not finite. */
  out?: Float64Array;
  /** Scores out (nQ × nKV): exp(S[i,j] − rowShift[i]), masked entries 0. Materialized float64 only. */
  scores?: Float64Array;
  /**
   * Arithmetic of the two products and of the stored weights: `"float32"` runs S = Q Kᵀ and A V on
   * the f32x4 kernels (`gemm_f32_ra`, 4 × 8 tiles) with the weights rounded to float32, while the
   * max, exp, l and the final division stay float64 (`softmax_rows_f32`). When Q, K, V, the scale
   * or the logits leave float32's safe range (range32.ts: float32 would overflow to ±∞/NaN or flush
   * V to 0) the call computes in float64 instead (issue #6). @default "float64"
   */
  precision?: "float64" | "float32";
  /**
   * The row shift m[i] of A = exp(S − m): `"max"` the row max (a max pass over each score row
   * before its exp pass); `"bound"` an upper bound of the row's logits known before any score is
   * computed (see `boundSlack`), so no max pass runs and each query block is done in key chunks
   * of `BOUND_KEY_CHUNK` whose scores stay in L2 from S = Q Kᵀ through the exp to A V. `"bound"`
   * applies to the materialized form with no mask and no `scores`, in float64 and (since stop 20)
   * float32; elsewhere `"max"` is used. Rows where the bound is far above the true max (l <
   * `BOUND_MIN_NORMALIZER`, float32: `BOUND_MIN_NORMALIZER_F32`), too large or not finite are
   * recomputed with `"max"`, so every row has l ≥ 2⁻²⁰⁰ (2⁻⁴⁰) or its exact-max result. @default "bound"
   */
  rowShift?: "max" | "bound";
  /**
   * With `precision: "float32"`: the caller's `attentionInFloat32Range` of exactly these operands
   * (e.g. from maxima it found while writing them, `attentionMaximaInFloat32Range`), so the call
   * does not rescan Q, K and V. @default undefined (the call scans them)
   */
  inFloat32Range?: boolean;
  /**
   * Blocks of query rows claimed at run time instead of taken in order (`attentionParallel`'s
   * workers share one counter, so a core the host slows takes fewer blocks): called with the
   * driver's query block qb before each block, it returns the block — its first row and 1 … qb
   * rows (fewer near the end of the call: guided scheduling, row-task.ts) — and a start ≥ nQ ends
   * the call. Rows of unclaimed blocks are left untouched in `out` and get 0 in the returned stats.
   * Each row's result does not depend on which blocks a thread ran nor on their sizes, so the rows
   * claimed by all threads together are the whole call's bits.
   * @default undefined (every block of qb rows, in order)
   */
  claimBlock?: (qb: number) => QueryBlock;
}

/** Query rows [start, start + rows) of one driver block (`FusedSoftmaxSpec.claimBlock`). */
export interface QueryBlock {
  start: number;
  rows: number;
}

/**
 * The driver's next query block: claimed (`claimBlock`) or, in order, the qb rows from `end` (the
 * previous block's end). A claimed block must lie within [0, nQ) and hold 1 … qb rows (the driver's
 * buffers are sized for qb), unless its start ≥ nQ ends the call.
 */
function nextQueryBlock(claim: ((qb: number) => QueryBlock) | undefined, qb: number, nQ: number, end: number): QueryBlock {
  if (!claim) return { start: end, rows: Math.min(qb, nQ - end) };
  const b = claim(qb);
  if (b.start < nQ && !(Number.isInteger(b.start) && b.start >= 0 && b.rows >= 1 && b.rows <= qb && b.start + b.rows <= nQ)) {
    throw new ValueError("claimBlock(qb)", `a block of 1 … ${qb} rows within [0, ${nQ})`, `rows [${b.start}, ${b.start + b.rows})`);
  }
  return b;
}

/**
 * Per-row results: the shift m[i] and normalizer l[i] = Σ_j exp(S[i,j] − m[i]). m[i] is the row's
 * max logit (−∞ for a row with no allowed key), or under `rowShift: "bound"` the upper bound used
 * (then m[i] ≥ max_j S[i,j] up to its conversion from the kernel's units, and l[i] ∈ [2⁻²⁰⁰, N_KV]); log l[i] + m[i] is the row's log-sum-exp
 * either way.
 */
export interface FusedSoftmaxStats {
  rowMax: Float64Array;
  normalizer: Float64Array;
  /**
   * True when the driver found every entry of Y finite itself (the float32 `"bound"` form, whose
   * `rows_normalize_out` checks each entry it writes), so the caller's scan of Y can be skipped;
   * false or absent when it did not check (not that some entry is not finite).
   */
  outputsFinite?: boolean;
}

/**
 * Keys per chunk of the `rowShift: "bound"` form: a 128-row score tile of 256 keys is 256 KiB, so
 * it stays in the 512 KiB L2 from its product through the exp pass to A V (the materialized row
 * block, 32 × 4096 × 8 B = 1 MiB at N = 4096, went out to L3 between the three steps). A multiple
 * of KC, so A V sums the same KC-deep slices from key 0 as the materialized form.
 */
const BOUND_KEY_CHUNK = 256;
/**
 * Query rows per block of the `"bound"` form: 128 rows stream the K and V panels (2 MiB each at
 * N = 4096, d = 64) from L3 a quarter as often as the materialized form's 32-row blocks (measured
 * at N = 4096: the whole call 0.90–0.91× against 0.94–0.99× with 32 rows × 512 keys).
 */
const BOUND_QUERY_BLOCK = 128;
/**
 * Smallest normalizer a `"bound"` row keeps (else it is recomputed with the row max): l ≥ 2⁻²⁰⁰
 * means the largest weight is ≥ 2⁻²⁰⁰/N_KV, so every weight within a factor 2⁻⁷⁵⁰ of it — all
 * that can reach the sum — is a normal float64 with its full 1-ulp accuracy, and A V's products
 * stay as far from underflow as V's entries allow.
 */
const BOUND_MIN_NORMALIZER = 2 ** -200;
/**
 * The float32 form's smallest normalizer: l ≥ 2⁻⁴⁰ keeps the largest weight ≥ 2⁻⁴⁰/N_KV, so A V's
 * float32 products w·v stay ~80 binades above float32's underflow for any V of normal magnitude (the
 * weights themselves are normal floats by `SHIFT_F32_MAX`). Rows of N(0, 1) inputs at d = 64 have
 * their bound ≈ 13 bits above the max.
 */
const BOUND_MIN_NORMALIZER_F32 = 2 ** -40;
/** Logit units of the `"bound"` form's exp pass per natural unit (`softmax_shift_rows_f64`: 2^(y/2048) = e^x). */
const Y_PER_NAT = 2048 / Math.LN2;
const NAT_PER_Y = Math.LN2 / 2048;
/**
 * Largest bound the `"bound"` form takes, 1024 in logits (in y units; larger ones use the row max).
 * The scaled query copy fl(σ·q) adds one rounding per product term to each logit, an error
 * ≤ 2⁻⁵³·Σ_p |q_p k_p| ≤ 2⁻⁵³·bound in the exponent, so ≤ 1.2e-13 relative in the weights at this
 * limit — the order of the rounding of a stored logit of that size (ulp(1024)/2) that the
 * max-shift path carries, except where that logit happens to be exact (integer logits such as
 * ±1e4 stay exact with the row max). Also keeps |y| < 2²² for the exp's rounding trick and the
 * bound's slack (m·(d + 4)·2⁻⁵¹) far below one unit.
 */
const BOUND_MAX = 1024 * Y_PER_NAT;

/**
 * The relative raise of the `rowShift: "bound"` form's row bounds. Those bounds m[i] ≥ max_j S[i,j]
 * of the logits S = (scale·Q) Kᵀ, taken before computing them (by `scale_rows_bounds`, watBounds.ts,
 * in whatever units the scaled queries give S), are the smaller of Cauchy–Schwarz, ‖q_i‖·max_j ‖k_j‖, and the coordinate
 * bound Σ_p |q_ip|·max_j |k_jp| (tighter when a few channels of K carry the large values), each
 * raised by (d + 4)·2⁻⁵¹ relative (float32 products: (d + 4)·2⁻²²) to cover the rounding of both the bound (≤ γ_{d+3}) and of the
 * computed logit (|fl(q·k) − q·k| ≤ γ_d Σ_p |q_p k_p| ≤ γ_d·bound), so S − m ≤ 0 in floating point
 * — and, the bound being one of |q·k|, also S + m ≥ 0: |S| ≤ m, which lets `softmax_shift_rows_f64`
 * skip its per-group range test on rows with m ≤ 334 nats (all of S − m then lies in [−2m, 0]).
 * Both are of the scaled query rows exactly as the product reads them, and of max_j ‖k_j‖ and
 * max_j |k_jp| (`keyNorms`); NaN where an input is not finite (the row then uses the row max).
 */
function boundSlack(d: number, f32: boolean): number {
  // float32 products (gemm_f32_ra): |fl(q·k) − q·k| ≤ γ_d Σ|q_p k_p| with u = 2⁻²⁴, so the slack is
  // (d + 4)·2⁻²² (the scaled queries and max |K|, ‖K‖ are then of the float32-rounded operands the product reads).
  return 1 + (d + 4) * (f32 ? 2 ** -22 : 2 ** -51);
}

/** Bytes of float64 per staging chunk of `packOperands`: a chunk is copied in and packed while it sits in L2. */
const STAGE_CHUNK_BYTES = 1 << 17;

/**
 * The fused driver's staging region (after its other regions, from byte `at`): chunks of K and V
 * rows for `packOperands`, a query block's rows (row stride ldQ) for `scale_rows_f64` /
 * `scale_rows_bounds`, a block's Y out of `rows_normalize_out`. Returns its address, the K/V chunk
 * rows (a multiple of nr) and the first byte after it.
 */
function stagingRegion(
  at: number,
  d: number,
  dV: number,
  qb: number,
  ldQ: number,
  nr: number,
): { stage: number; stageRows: number; end: number } {
  const stageRows = Math.max(nr, Math.floor(STAGE_CHUNK_BYTES / (8 * Math.max(d, dV, 1)) / nr) * nr);
  const stage = roundUp(at, 16);
  return { stage, stageRows, end: stage + 8 * Math.max(stageRows * Math.max(d, dV), (qb - 1) * ldQ + d, qb * dV) };
}

/**
 * The fused driver's key and value panels (the panels `packPanels` writes: same elements, float32
 * rounded to nearest-even as a Float32Array store), by the kernel module's packers: each chunk of
 * rows copied into the staging region by one `set` (a memcpy), then `pack_key_panels` /
 * `pack_value_panels` (watModel.ts) write it into the panels — per column panel for V, whose panels
 * span all N_KV rows. Measured at N = 4096, d = 64 (stop 42): `packPanels` 1.34 ms (float32) /
 * 1.39 ms (float64) for K and V, this 0.65 / 0.36 ms.
 */
function packOperands(
  k: Kernels,
  K: Float64Array,
  V: Float64Array | undefined,
  nKV: number,
  d: number,
  dV: number,
  f32: boolean,
  addr: { keys: number; values: number; stage: number; stageRows: number },
): void {
  const es = f32 ? 4 : 8;
  const NR = f32 ? F32_NR : F64_NR;
  const d32 = f32 ? 1 : 0;
  const m64 = k.f64;
  const so = addr.stage / 8;
  // A last partial key panel's padding keys zero (pack_key_panels writes the keys only).
  const full = nKV - (nKV % NR);
  if (full < nKV) (f32 ? k.f32 : m64).fill(0, addr.keys / es + full * d, addr.keys / es + (full + NR) * d);
  for (let c0 = 0; c0 < nKV; c0 += addr.stageRows) {
    const rows = Math.min(addr.stageRows, nKV - c0);
    m64.set(K.subarray(c0 * d, (c0 + rows) * d), so);
    k.pack_key_panels(addr.stage, d, rows, d, 0, addr.keys + c0 * d * es, d, NR, d32, 0);
    if (!V || dV === 0) continue;
    m64.set(V.subarray(c0 * dV, (c0 + rows) * dV), so);
    for (let c = 0; c < dV; c += NR) {
      k.pack_value_panels(addr.stage + c * 8, dV, rows, Math.min(NR, dV - c), 0, addr.values + (c * nKV + c0 * NR) * es, NR, d32, 0);
    }
  }
}

/**
 * max_j ‖k_j‖ of the packed keys, and max_j |k_jp| into kabs (16·d bytes): `key_panel_norms_*`
 * (watBounds.ts) over the panels, as the product reads K — ≈ 0.1 ms at N = 4096, d = 64 against
 * ≈ 0.8 ms for the JavaScript loop over K it replaced (stop 42).
 */
function keyNorms(k: Kernels, keys: number, nKV: number, d: number, f32: boolean, kabs: number): number {
  const panels = Math.ceil(nKV / (f32 ? F32_NR : F64_NR));
  return Math.sqrt(f32 ? k.key_panel_norms_f32(keys, panels, d, kabs) : k.key_panel_norms_f64(keys, panels, d, kabs));
}

/**
 * Y/l of a block's rows out (`rows` × dV at yAddr, float32 or float64, normalizers at lAddr) into
 * `out` rows i0… (row stride ldOut): `rows_normalize_out` (y·(1/l), float32 widened — the
 * JavaScript loops' operations) into the staging region, then one copy (one per row when strided).
 * False, with nothing written to `out`, when some l is not in (0, ∞) or (float32) some entry is not
 * finite: the caller's loop then handles the block. True: every entry written is finite under float32.
 */
function normalizedRowsOut(
  k: Kernels,
  f32: boolean,
  yAddr: number,
  lAddr: number,
  stage: number,
  rows: number,
  dV: number,
  out: Float64Array,
  i0: number,
  ldOut: number,
): boolean {
  if (k.rows_normalize_out(yAddr, lAddr, stage, dV, rows, dV, f32 ? 1 : 0) !== 1) return false;
  const so = stage / 8;
  const m64 = k.f64;
  if (ldOut === dV) out.set(m64.subarray(so, so + rows * dV), i0 * dV);
  else for (let r = 0; r < rows; r++) out.set(m64.subarray(so + r * dV, so + (r + 1) * dV), (i0 + r) * ldOut);
  return true;
}

const roundUp = (x: number, m: number) => Math.ceil(x / m) * m;

/**
 * Query rows per block under a prefix mask in the materialized form (see `fusedSoftmaxAttention`),
 * at most: with causal limits a block of B rows computes keys up to its last row's limit, so a
 * prefill of N rows computes ≈ (1 + B/N)/2 of the N × N scores — in the two products and (the
 * masked tail of each row is skipped there) in the exp pass. `prefixQueryBlock` picks B.
 */
export const PREFIX_QUERY_BLOCK = 32;

/**
 * B for N_KV keys: 16 up to 512 keys (56 % of the square at N = 128, where 32 rows took 62.5 %;
 * four of the GEMM's 4-row tiles, so the products lose nothing to edge tiles), else 32 — where
 * (1 + B/N)/2 is ≈ ½ either way and each block streams all K and V panels, which halving B would
 * stream twice as often. Each row's result does not depend on B (see `prefixAttentionBlock`).
 */
export function prefixQueryBlock(nKV: number): number {
  return nKV <= 512 ? 16 : PREFIX_QUERY_BLOCK;
}
/** Key-width granularity of that skipping: a multiple of the softmax loops' step (8 f64, 16 f32) dividing KC. */
const PREFIX_KEY_STEP = 16;

/**
 * The factor the query rows of a prefix-mask block are scaled by before `prefixAttentionBlock`:
 * the softmax scale, or for float32 scale·log₂e (since stop 20 `softmax_prefix_f32` takes logits in
 * units of ln 2 and exponentiates with 2^x; its m comes out in those units, m·ln 2 in nats). One
 * function for the fused driver and the resident prefills, so the two round the same products.
 */
export function prefixQueryScale(scale: number, f32: boolean): number {
  return f32 ? scale * Math.LOG2E : scale;
}

/**
 * One block of `rows` query rows of the prefix-mask materialized form (the causal prefill): keys
 * [0, hi), hi = the block's largest limit rounded up to `PREFIX_KEY_STEP` (or N_KV), S = Q_blk Kᵀ
 * on them, the exp pass with row r allowing keys j < limits[i0 + r] (`softmax_prefix_f64` / `_f32`:
 * m, l and S ← exp(S − m), zeros past the limit, no −∞ written), then Y_blk += S V in KC-deep
 * slices from key 0. Y (rows × dV at yAddr) must be zero on entry; m and l (float64, rows each)
 * are written. Byte addresses; the queries at qAddr scaled by `prefixQueryScale` (row stride d), K panels by rows at
 * kAddr, V panels by columns (depth N_KV) at vAddr, the score tile at sAddr (row stride ldS ≥ hi).
 * Shared by `fusedSoftmaxAttention` and the resident prefills (pretrained/resident.ts attendHead),
 * so the two give the same bits. Each row's result is independent of the blocking: the rounding of
 * hi keeps the exp's groups and the product's slices aligned from key 0, and the skipped columns
 * (all exp(−∞) = 0 in the full-width form) would only have added +0.
 */
export function prefixAttentionBlock(
  k: Kernels,
  f32: boolean,
  qAddr: number,
  kAddr: number,
  vAddr: number,
  sAddr: number,
  ldS: number,
  yAddr: number,
  mAddr: number,
  lAddr: number,
  rows: number,
  limits: Int32Array,
  i0: number,
  nKV: number,
  d: number,
  dV: number,
): void {
  const m64 = k.f64;
  const mOff = mAddr / 8;
  let hi = 0;
  for (let r = 0; r < rows; r++) {
    const lim = limits[i0 + r];
    m64[mOff + r] = Math.max(lim, 0); // the kernel's input: row r's limit
    if (lim > hi) hi = lim;
  }
  hi = hi <= 0 ? 0 : Math.min(nKV, roundUp(hi, PREFIX_KEY_STEP));
  if (hi === 0) {
    m64.fill(Number.NEGATIVE_INFINITY, mOff, mOff + rows);
    m64.fill(0, lAddr / 8, lAddr / 8 + rows);
    return;
  }
  const es = f32 ? 4 : 8;
  const NR = f32 ? F32_NR : F64_NR;
  const gemm = f32 ? k.gemm_f32_ra : k.gemm_f64_ra;
  gemm(qAddr, d, kAddr, d, sAddr, ldS, rows, hi, d, 0);
  (f32 ? k.softmax_prefix_f32 : k.softmax_prefix_f64)(sAddr, rows, hi, ldS, mAddr, lAddr);
  for (let p0 = 0; dV > 0 && p0 < hi; p0 += KC) {
    const kc = Math.min(KC, hi - p0);
    gemm(sAddr + p0 * es, ldS, vAddr + p0 * NR * es, nKV, yAddr, dV, rows, dV, kc, 1);
  }
}

/** The `TileMask` of a row-prefix mask: query i may attend to keys j < limit[i] (causal, padding). */
export function prefixTileMask(limit: Int32Array): TileMask {
  return {
    prefixLimits: () => limit,
    tile(i0, i1, j0, j1, out) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let i = i0; i < i1; i++) {
        if (limit[i] < lo) lo = limit[i];
        if (limit[i] > hi) hi = limit[i];
      }
      if (hi <= j0) return TILE_NONE;
      if (lo >= j1) return 1;
      const w = j1 - j0;
      for (let i = i0; i < i1; i++) {
        const o = (i - i0) * w;
        const c = Math.max(0, Math.min(w, limit[i] - j0));
        out.fill(1, o, o + c);
        out.fill(0, o + c, o + w);
      }
      return TILE_PARTIAL;
    },
  };
}

/** Time split of `fusedSoftmaxAttention` calls while profiling is on (milliseconds). */
export interface FusedSoftmaxProfile {
  /** Calls profiled. */
  calls: number;
  /** Packing K and V, copying the scaled query blocks in and Y / scores out, masks. */
  copyMs: number;
  /** S = Q Kᵀ tiles (`gemm_f64_ra`). */
  scoresMs: number;
  /** Row max, exp, sums and rescaling (`softmax_rows_f64`). */
  softmaxMs: number;
  /** A V tiles (`gemm_f64_ra`). */
  valuesMs: number;
}

const profile: FusedSoftmaxProfile = { calls: 0, copyMs: 0, scoresMs: 0, softmaxMs: 0, valuesMs: 0 };
let profiling = false;
let lapT = 0;
function lap(field: "copyMs" | "scoresMs" | "softmaxMs" | "valuesMs"): void {
  const now = performance.now();
  profile[field] += now - lapT;
  lapT = now;
}

/**
 * Turns the time split of the fused softmax attention on or off and resets it (one
 * `performance.now()` per step when on, nothing when off); `fusedSoftmaxProfile()` reads it.
 */
export function setFusedSoftmaxProfiling(on: boolean): void {
  profiling = on;
  profile.calls = 0;
  profile.copyMs = 0;
  profile.scoresMs = 0;
  profile.softmaxMs = 0;
  profile.valuesMs = 0;
}

/** A copy of the accumulated profile (see `setFusedSoftmaxProfiling`). */
export function fusedSoftmaxProfile(): FusedSoftmaxProfile {
  return { ...profile };
}

/**
 * Whether the fused WebAssembly path should run for a softmax attention of this size under the
 * current kernel backend: never with `"scalar"` (the JavaScript reference), always with `"wasm"`,
 * and with `"auto"` when SIMD is available and N_Q·N_KV·d_QK ≥ `FUSED_MIN_WORK`.
 */
export function useFusedSoftmax(nQ: number, nKV: number, d: number): boolean {
  const b = getKernelBackend();
  if (b === "scalar" || !wasmSimdAvailable()) return false;
  return b === "wasm" || nQ * nKV * d >= FUSED_MIN_WORK;
}

/**
 * Runs the fused softmax attention of the module doc. Raw: no argument checks beyond sizes (the
 * attention functions validate). Returns the per-row max and normalizer, or `null` when the
 * kernel memory needed exceeds `FUSED_MAX_BYTES` (the caller then uses its JavaScript path).
 * Rows whose normalizer is 0 (no allowed key) or not finite (a logit overflowed) get a zero row of
 * Y; the caller decides whether that is an error.
 */
export function fusedSoftmaxAttention(spec: FusedSoftmaxSpec): FusedSoftmaxStats | null {
  const { queries: Q, keys: K, values: V, nQ, nKV, d, scale, mask, out, scores } = spec;
  // Outside float32's safe range float64 instead (issue #6): at least as accurate, never a silent NaN or 0.
  const ldQ = spec.queryStride ?? d;
  const f32 =
    spec.precision === "float32" &&
    (spec.inFloat32Range ?? attentionInFloat32Range(Q, K, V ?? EMPTY, nQ, nKV, d, V ? spec.dV : 0, scale, ldQ));
  if (spec.precision === "float32" && scores) throw new Error("fusedSoftmaxAttention: scores are float64 only");
  const es = f32 ? 4 : 8;
  const NR = f32 ? F32_NR : F64_NR;
  const dV = V ? spec.dV : 0;
  const ldOut = spec.outStride ?? dV;
  const materialized = spec.keyBlock === undefined || spec.keyBlock >= nKV;
  if (materialized && !mask && !scores && (spec.rowShift ?? "bound") === "bound") return boundSoftmaxAttention(spec, f32);
  const kb = materialized ? nKV : Math.max(NR, roundUp(spec.keyBlock!, NR));
  if (scores && !materialized) throw new Error("fusedSoftmaxAttention: scores need the materialized form");
  const rowsDefault = materialized ? Math.floor(ROW_BLOCK_BYTES / (es * nKV)) : 128;
  // A prefix mask in the materialized form: each query block stops at its largest allowed key. With
  // causal limits growing by one per row, blocks of B = prefixQueryBlock(N_KV) rows compute ≈ (1 + B/N)/2
  // of the N_Q × N_KV scores; the row results do not depend on the blocking.
  const limits = materialized && !scores ? mask?.prefixLimits?.() : undefined;
  const qbDefault = Math.min(limits ? prefixQueryBlock(nKV) : 256, Math.max(4, rowsDefault - (rowsDefault % 4)));
  const qb = Math.max(1, Math.min(nQ, spec.queryBlock ?? qbDefault));
  const nKVp = roundUp(nKV, NR);
  const dVp = roundUp(Math.max(dV, 1), NR);
  const ldS = Math.min(kb, nKVp); // row stride of the score tile (keys padded to whole panels)

  // Byte layout: [scratch + exp table | K panels | V panels | Q block | S tile | Y block | m | l].
  const kAddr = KERNEL_RESERVED_BYTES;
  const vAddr = roundUp(kAddr + nKVp * d * es, 16);
  const qAddr = roundUp(vAddr + (dV > 0 ? dVp * nKV * es : 0), 16);
  const sAddr = roundUp(qAddr + qb * d * es, 64);
  const yAddr = roundUp(sAddr + qb * ldS * es, 16);
  const mAddr = roundUp(yAddr + qb * Math.max(dV, 1) * es, 16);
  const lAddr = mAddr + qb * 8;
  const { stage: stageAddr, stageRows, end } = stagingRegion(lAddr + qb * 8, d, dV, qb, ldQ, NR);
  if (end > FUSED_MAX_BYTES) return null;

  if (profiling) {
    profile.calls++;
    lapT = performance.now();
  }
  const k = getKernels();
  ensureKernelMemory(k, end);
  const mem: Float64Array | Float32Array = f32 ? k.f32 : k.f64;
  const m64 = k.f64;
  const gemm = f32 ? k.gemm_f32_ra : k.gemm_f64_ra;
  const softmax = f32 ? k.softmax_rows_f32 : k.softmax_rows_f64;
  packOperands(k, K, V, nKV, d, dV, f32, { keys: kAddr, values: vAddr, stage: stageAddr, stageRows });

  const rowMax = new Float64Array(nQ);
  const normalizer = new Float64Array(nQ);
  const tmask = mask && !limits ? new Uint8Array(qb * ldS) : null; // the prefix path needs no 0/1 tile
  // float32 prefix blocks: logits in units of ln 2 (`prefixQueryScale`), their m back to nats below.
  const qScale = limits ? prefixQueryScale(scale, f32) : scale;
  const mToNats = limits && f32 ? Math.LN2 : 1;
  const sOff = sAddr / es;
  const yOff = yAddr / es;
  const mOff = mAddr / 8;
  const lOff = lAddr / 8;
  const claim = spec.claimBlock;
  for (let b = nextQueryBlock(claim, qb, nQ, 0); b.start < nQ; b = nextQueryBlock(claim, qb, nQ, b.start + b.rows)) {
    const i0 = b.start;
    const rows = b.rows;
    // Scaled query block in: scale·Q (the JavaScript path's `scaledQueries`, so S is the same), by
    // `scale_rows_f64` on the rows copied into the staging region.
    m64.set(Q.subarray(i0 * ldQ, (i0 + rows - 1) * ldQ + d), stageAddr / 8);
    k.scale_rows_f64(stageAddr, ldQ, qAddr, rows, d, qScale, f32 ? 1 : 0);
    m64.fill(Number.NEGATIVE_INFINITY, mOff, mOff + rows);
    m64.fill(0, lOff, lOff + rows);
    if (dV > 0) mem.fill(0, yOff, yOff + rows * dV);
    // A prefix mask: keys [0, hi) of the block only (`prefixAttentionBlock`).
    if (limits) prefixAttentionBlock(k, f32, qAddr, kAddr, vAddr, sAddr, ldS, yAddr, mAddr, lAddr, rows, limits, i0, nKV, d, dV);
    for (let j0 = 0; !limits && j0 < nKV; j0 += kb) {
      const w = Math.min(kb, nKV - j0);
      const status = mask ? mask.tile(i0, i0 + rows, j0, j0 + w, tmask!) : 1;
      if (status === TILE_NONE) continue;
      if (profiling) lap("copyMs");
      gemm(qAddr, d, kAddr + j0 * d * es, d, sAddr, ldS, rows, w, d, 0);
      if (profiling) lap("scoresMs");
      if (status === TILE_PARTIAL) {
        const t = tmask!;
        for (let r = 0; r < rows; r++) {
          const so = sOff + r * ldS;
          const to = r * w;
          for (let c = 0; c < w; c++) if (t[to + c] === 0) mem[so + c] = Number.NEGATIVE_INFINITY;
        }
      }
      if (profiling) lap("copyMs");
      softmax(sAddr, rows, w, ldS, mAddr, lAddr, yAddr, dV, dV);
      if (profiling) lap("softmaxMs");
      if (dV > 0) {
        for (let p0 = 0; p0 < w; p0 += KC) {
          const kc = Math.min(KC, w - p0);
          gemm(sAddr + p0 * es, ldS, vAddr + (j0 + p0) * NR * es, nKV, yAddr, dV, rows, dV, kc, 1);
        }
        if (profiling) lap("valuesMs");
      }
      if (scores) scores.set(mem.subarray(sOff, sOff + rows * nKV), i0 * nKV); // materialized: ldS = nKV
    }
    // Y/l in WebAssembly when every l is in (0, ∞) (else the loop below: zero rows, the same operations).
    const done = out !== undefined && dV > 0 && normalizedRowsOut(k, f32, yAddr, lAddr, stageAddr, rows, dV, out, i0, ldOut);
    for (let r = 0; r < rows; r++) {
      const i = i0 + r;
      const l = m64[lOff + r];
      rowMax[i] = m64[mOff + r] * mToNats;
      normalizer[i] = l;
      if (scores && rowMax[i] === Number.NEGATIVE_INFINITY) scores.fill(0, i * nKV, (i + 1) * nKV); // skipped tile
      if (!done && out && dV > 0) {
        const o = i * ldOut;
        const yo = yOff + r * dV;
        if (l > 0 && l < Number.POSITIVE_INFINITY) {
          const inv = 1 / l;
          for (let c = 0; c < dV; c++) out[o + c] = mem[yo + c] * inv;
        } else out.fill(0, o, o + dV);
      }
    }
  }
  if (profiling) lap("copyMs");
  return { rowMax, normalizer };
}

/**
 * The `rowShift: "bound"` form of `fusedSoftmaxAttention` (float64, materialized, no mask, no
 * scores): the row shifts m[i] come from `scale_rows_bounds` (watBounds.ts) before any score, so for each block of
 * query rows and each chunk of `BOUND_KEY_CHUNK` keys the three steps run back to back on an
 * L2-resident tile — S = (σ·Q) K_cᵀ (`gemm_f64_ra`, σ = scale·2048/ln 2: logits in units of
 * ln2/2048), S ← 2^((S − m)/2048) = e^(x − m_x) with l += Σ (`softmax_shift_rows_f64`: no max pass,
 * no rescaling since m is fixed, and no Cody–Waite pair in the exp's reduction), Y += S V_c (`gemm_f64_ra`, KC-deep slices from key 0 as
 * in the materialized form). The result is the same exact softmax attention as with the row max
 * (the shift cancels in Y = Σ_j e^{s_ij − m_i} v_j / Σ_j e^{s_ij − m_i}); only the last bits differ.
 * Rows whose bound is not finite or above `BOUND_MAX` (1024 in logits), or lies so far above the true max that
 * l < `BOUND_MIN_NORMALIZER`, are recomputed in one more call with `rowShift: "max"`; each row's
 * result depends only on that row (the products, the exp and the sums are per row), so it is the
 * same whatever the query blocking — as `attentionParallel`'s row splits need.
 *
 * `f32` (a `precision: "float32"` call within float32's range, since stop 20): the same steps on the
 * f32x4 kernels — σ = scale·log₂e (logits in units of ln 2), `gemm_f32_ra` for both products and
 * `softmax_shift_rows_f32` for S ← 2^(S − M), M = ⌈bound⌉ with the float32 product's slack; rows with
 * M > `SHIFT_F32_MAX` (62 bits, 43 nats: beyond it the check-free exp could leave float32's normal
 * range) or l < `BOUND_MIN_NORMALIZER_F32` are recomputed with the row max in float32. The exp then
 * takes 18 vector operations per four weights where the row-max form's takes 32 and a max pass.
 */
function boundSoftmaxAttention(spec: FusedSoftmaxSpec, f32: boolean): FusedSoftmaxStats | null {
  const { queries: Q, keys: K, values: V, nQ, nKV, d, scale, out } = spec;
  const ldQ = spec.queryStride ?? d;
  const dV = V ? spec.dV : 0;
  const ldOut = spec.outStride ?? dV;
  const es = f32 ? 4 : 8;
  const NR = f32 ? F32_NR : F64_NR;
  const qb = Math.max(1, Math.min(nQ, spec.queryBlock ?? BOUND_QUERY_BLOCK));
  const ch = BOUND_KEY_CHUNK;
  const nKVp = roundUp(nKV, NR);
  const dVp = roundUp(Math.max(dV, 1), NR);
  const kAddr = KERNEL_RESERVED_BYTES;
  const vAddr = roundUp(kAddr + nKVp * d * es, 16);
  const qAddr = roundUp(vAddr + (dV > 0 ? dVp * nKV * es : 0), 16);
  const sAddr = roundUp(qAddr + qb * d * es, 64);
  const yAddr = roundUp(sAddr + qb * ch * es, 16);
  const mAddr = roundUp(yAddr + qb * Math.max(dV, 1) * es, 16);
  const lAddr = mAddr + qb * 8;
  const kabsAddr = roundUp(lAddr + qb * 8, 16);
  const { stage: stageAddr, stageRows, end } = stagingRegion(kabsAddr + d * 16, d, dV, qb, ldQ, NR); // kabs: key_panel_norms' 16·d bytes
  if (end > FUSED_MAX_BYTES) return null;
  if (profiling) {
    profile.calls++;
    lapT = performance.now();
  }
  const k = getKernels();
  ensureKernelMemory(k, end);
  const mem: Float64Array | Float32Array = f32 ? k.f32 : k.f64;
  const m64 = k.f64;
  const gemm = f32 ? k.gemm_f32_ra : k.gemm_f64_ra;
  packOperands(k, K, V, nKV, d, dV, f32, { keys: kAddr, values: vAddr, stage: stageAddr, stageRows });
  const kNorm = keyNorms(k, kAddr, nKV, d, f32, kabsAddr);
  const slack = boundSlack(d, f32);
  const so = stageAddr / 8;

  // float64: logits in units of ln2/2048 (y = x·2048/ln 2); float32: in units of ln 2 (bits, x·log₂e).
  const sy = scale * (f32 ? Math.LOG2E : Y_PER_NAT);
  const maxShift = f32 ? SHIFT_F32_MAX : BOUND_MAX;
  const minNormalizer = f32 ? BOUND_MIN_NORMALIZER_F32 : BOUND_MIN_NORMALIZER;
  const natPerUnit = f32 ? Math.LN2 : NAT_PER_Y;
  const rowMax = new Float64Array(nQ);
  const normalizer = new Float64Array(nQ);
  const redo: number[] = [];
  // Whether every entry of Y was checked finite (float32 blocks through rows_normalize_out).
  let outputsFinite = f32 && out !== undefined && dV > 0;
  const yOff = yAddr / es;
  const mOff = mAddr / 8;
  const lOff = lAddr / 8;
  const claim = spec.claimBlock;
  for (let b = nextQueryBlock(claim, qb, nQ, 0); b.start < nQ; b = nextQueryBlock(claim, qb, nQ, b.start + b.rows)) {
    const i0 = b.start;
    const rows = b.rows;
    // Scaled by σ = sy (the logits come out in the exp pass's units) into the query block, and each
    // row's bound in whole units (the kernels fold an integer shift into their rounding constant;
    // 0 past maxShift or NaN: recomputed below) — `scale_rows_bounds` on the rows copied in.
    m64.set(Q.subarray(i0 * ldQ, (i0 + rows - 1) * ldQ + d), so);
    k.scale_rows_bounds(stageAddr, ldQ, rows, d, sy, qAddr, f32 ? 1 : 0, kabsAddr, kNorm, slack, maxShift, mAddr);
    m64.fill(0, lOff, lOff + rows);
    if (dV > 0) mem.fill(0, yOff, yOff + rows * dV);
    for (let c0 = 0; c0 < nKV; c0 += ch) {
      const w = Math.min(ch, nKV - c0);
      if (profiling) lap("copyMs");
      gemm(qAddr, d, kAddr + c0 * d * es, d, sAddr, ch, rows, w, d, 0);
      if (profiling) lap("scoresMs");
      // sym = 1: |S| ≤ m, not only S ≤ m (`scale_rows_bounds` bounds |fl(q·k)|); rows whose m was
      // replaced by 0 above break it, and are recomputed whatever the kernel left in them.
      if (f32) k.softmax_shift_rows_f32(sAddr, rows, w, ch, mAddr, lAddr);
      else k.softmax_shift_rows_f64(sAddr, rows, w, ch, mAddr, lAddr, 1);
      if (profiling) lap("softmaxMs");
      for (let p0 = 0; dV > 0 && p0 < w; p0 += KC) {
        const kc = Math.min(KC, w - p0);
        gemm(sAddr + p0 * es, ch, vAddr + (c0 + p0) * NR * es, nKV, yAddr, dV, rows, dV, kc, 1);
      }
      if (profiling && dV > 0) lap("valuesMs");
    }
    // Also catches a bound that was replaced by 0 above (its l is then not a softmax normalizer):
    // the bound's own row check is repeated from the query copy.
    const kept = (r: number) => {
      const l = m64[lOff + r];
      return l >= minNormalizer && l < Number.POSITIVE_INFINITY && m64[mOff + r] !== 0;
    };
    let all = true;
    for (let r = 0; r < rows && all; r++) all = kept(r);
    // Y/l of the whole block in WebAssembly when every row is kept (else, or when a float32 entry is
    // not finite, the loop below: the same operations).
    const done = all && out !== undefined && dV > 0 && normalizedRowsOut(k, f32, yAddr, lAddr, stageAddr, rows, dV, out, i0, ldOut);
    if (!done) outputsFinite = false;
    for (let r = 0; r < rows; r++) {
      const i = i0 + r;
      const l = m64[lOff + r];
      if (!all && !kept(r)) {
        redo.push(i);
        continue;
      }
      rowMax[i] = m64[mOff + r] * natPerUnit;
      normalizer[i] = l;
      if (!done && out && dV > 0) {
        const o = i * ldOut;
        const yo = yOff + r * dV;
        const inv = 1 / l;
        for (let c = 0; c < dV; c++) out[o + c] = mem[yo + c] * inv;
      }
    }
  }
  if (profiling) lap("copyMs");
  if (redo.length > 0) {
    // The rows the bound did not serve, with the row max, gathered into one call.
    const nr = redo.length;
    const qr = new Float64Array(nr * d);
    for (let t = 0; t < nr; t++) qr.set(Q.subarray(redo[t] * ldQ, redo[t] * ldQ + d), t * d);
    const yr = out && dV > 0 ? new Float64Array(nr * dV) : undefined;
    const st = fusedSoftmaxAttention({
      ...spec,
      queries: qr,
      queryStride: d,
      nQ: nr,
      out: yr,
      outStride: dV,
      queryBlock: undefined,
      claimBlock: undefined, // this thread's own rows, all of them
      rowShift: "max",
      // The call's own precision (a "float32" call out of float32's range reached here as float64).
      precision: f32 ? "float32" : "float64",
      inFloat32Range: f32 ? true : undefined,
    });
    if (st === null) return null;
    for (let t = 0; t < nr; t++) {
      const i = redo[t];
      rowMax[i] = st.rowMax[t];
      normalizer[i] = st.normalizer[t];
      if (yr && out) for (let c = 0; c < dV; c++) out[i * ldOut + c] = yr[t * dV + c];
    }
  }
  return { rowMax, normalizer, outputsFinite };
}

/**
 * X (rows × cols) into NR-wide panels. `byRows` (K for S = Q Kᵀ): panel jp holds X[NR·jp + jj, p]
 * at jp·NR·cols + NR·p + jj — NR keys, `cols` = d deep. Otherwise (V for A V): panel cp holds
 * X[p, NR·cp + jj] at cp·NR·rows + NR·p + jj — NR value columns, `rows` = N_KV deep. Zero-padded
 * to whole panels; float32 memory rounds while storing.
 */
export function packPanels(
  X: Float64Array,
  mem: Float64Array | Float32Array,
  off: number,
  rows: number,
  cols: number,
  NR: number,
  byRows: boolean,
): void {
  if (byRows) {
    for (let j = 0; j < rows; j += NR) {
      const base = off + j * cols;
      const n = Math.min(NR, rows - j);
      if (n < NR) mem.fill(0, base, base + NR * cols);
      for (let jj = 0; jj < n; jj++) {
        const src = (j + jj) * cols;
        for (let p = 0, t = base + jj; p < cols; p++, t += NR) mem[t] = X[src + p];
      }
    }
    return;
  }
  // In blocks of PANEL_ROWS rows across all panels, not panel by panel down all rows: a panel's
  // walk down V (N_KV·d_V·8 bytes, 2 MiB at 4096 × 64) re-fetched every row's lines from L3 for
  // each panel (as gemm.ts' packB did; same bytes, same order within a panel).
  for (let pb = 0; pb < rows; pb += PANEL_ROWS) {
    const pe = Math.min(rows, pb + PANEL_ROWS);
    for (let c = 0; c < cols; c += NR) {
      const base = off + c * rows;
      const n = Math.min(NR, cols - c);
      if (n === 4 && NR === 4) {
        for (let p = pb, t = base + pb * 4, s = pb * cols + c; p < pe; p++, t += 4, s += cols) {
          mem[t] = X[s];
          mem[t + 1] = X[s + 1];
          mem[t + 2] = X[s + 2];
          mem[t + 3] = X[s + 3];
        }
      } else if (n === 8 && NR === 8) {
        for (let p = pb, t = base + pb * 8, s = pb * cols + c; p < pe; p++, t += 8, s += cols) {
          mem[t] = X[s];
          mem[t + 1] = X[s + 1];
          mem[t + 2] = X[s + 2];
          mem[t + 3] = X[s + 3];
          mem[t + 4] = X[s + 4];
          mem[t + 5] = X[s + 5];
          mem[t + 6] = X[s + 6];
          mem[t + 7] = X[s + 7];
        }
      } else {
        for (let p = pb, t = base + pb * NR, s = pb * cols + c; p < pe; p++, t += NR, s += cols) {
          for (let jj = 0; jj < NR; jj++) mem[t + jj] = jj < n ? X[s + jj] : 0;
        }
      }
    }
  }
}

/** Rows of V packed across all panels at a time (`packPanels`). */
const PANEL_ROWS = 16;

/**
 * exp(x) elementwise with the SIMD exponential of the kernel module (≤ 1 ulp from Math.exp in
 * tests; −∞ → 0, underflow to subnormals/0, overflow → +∞, NaN → NaN). Falls back to Math.exp where
 * WebAssembly SIMD is unavailable. Writes into `out` (may be `x`); returns `out`.
 */
export function simdExp(x: Float64Array, out: Float64Array = new Float64Array(x.length)): Float64Array {
  const n = x.length;
  if (!wasmSimdAvailable()) {
    for (let i = 0; i < n; i++) out[i] = Math.exp(x[i]);
    return out;
  }
  const chunk = 1 << 16;
  const k = getKernels();
  const base = KERNEL_RESERVED_BYTES;
  ensureKernelMemory(k, base + chunk * 8);
  for (let i0 = 0; i0 < n; i0 += chunk) {
    const len = Math.min(chunk, n - i0);
    k.f64.set(x.subarray(i0, i0 + len), base / 8);
    k.exp_f64(base, base, len);
    out.set(k.f64.subarray(base / 8, base / 8 + len), i0);
  }
  return out;
}

/**
 * 2^(y/2048) elementwise (= e^x for y = x·2048/ln 2) with the exp of the `"bound"` form's exp pass
 * (`softmax_shift_rows_f64` with shift 0; ≤ 2 ulp from the exact value in tests; −∞ → 0, underflow
 * to subnormals/0, NaN → NaN). For y ≤ 2094800 (x ≤ 708.99) only: the exp pass's arguments are
 * y − m ≤ 0, so its fast path checks only their lower end. For tests of that kernel; falls back to
 * Math.pow(2, y/2048) where WebAssembly SIMD is unavailable. Writes into `out` (may be `y`).
 */
export function simdExpScaled(y: Float64Array, out: Float64Array = new Float64Array(y.length)): Float64Array {
  const n = y.length;
  if (!wasmSimdAvailable()) {
    for (let i = 0; i < n; i++) out[i] = 2 ** (y[i] / 2048);
    return out;
  }
  const chunk = 1 << 16;
  const k = getKernels();
  const base = KERNEL_RESERVED_BYTES;
  ensureKernelMemory(k, base + chunk * 8 + 16);
  const mp = base + chunk * 8;
  for (let i0 = 0; i0 < n; i0 += chunk) {
    const len = Math.min(chunk, n - i0);
    k.f64.set(y.subarray(i0, i0 + len), base / 8);
    k.f64[mp / 8] = 0;
    k.f64[mp / 8 + 1] = 0;
    k.softmax_shift_rows_f64(base, 1, len, len, mp, mp + 8, 0);
    out.set(k.f64.subarray(base / 8, base / 8 + len), i0);
  }
  return out;
}

/**
 * The `"bound"` form's exp pass on its own (tests), by `softmax_shift_rows_f64` for float64 logits
 * and `softmax_shift_rows_f32` for float32 ones: rows × cols logits `s` (row-major) under integer row
 * shifts `m`, the weights w and the row sums l[r] = Σ_c w[r,c] (float64). float64: s and m in units
 * of ln2/2048, w = 2^((s − m[r])/2048); `symmetric` is the driver's promise |s| ≤ m[r], with which
 * rows with m ≤ 334.1 nats run its check-free loop (same bits, when the promise holds). float32: s
 * and m in units of ln 2, w = 2^(s − m[r]) in float32, and the promise 0 ≤ m[r] ≤ 62, |s| ≤ m[r] is
 * the kernel's precondition (not checked; `symmetric` is ignored).
 */
export function simdShiftRowsExp<T extends Float64Array | Float32Array>(
  s: T,
  rows: number,
  cols: number,
  m: Float64Array,
  symmetric = true,
): { weights: T; sums: Float64Array } {
  const k = getKernels();
  const f32 = s instanceof Float32Array;
  const es = f32 ? 4 : 8;
  const base = KERNEL_RESERVED_BYTES;
  const mp = roundUp(base + rows * cols * es, 8);
  const lp = mp + rows * 8;
  ensureKernelMemory(k, lp + rows * 8);
  const mem = f32 ? k.f32 : k.f64;
  mem.set(s.subarray(0, rows * cols), base / es);
  k.f64.set(m.subarray(0, rows), mp / 8);
  k.f64.fill(0, lp / 8, lp / 8 + rows);
  if (f32) k.softmax_shift_rows_f32(base, rows, cols, cols, mp, lp);
  else k.softmax_shift_rows_f64(base, rows, cols, cols, mp, lp, symmetric ? 1 : 0);
  return { weights: mem.slice(base / es, base / es + rows * cols) as T, sums: k.f64.slice(lp / 8, lp / 8 + rows) };
}

/**
 * exp(x) elementwise in float32 with the f32x4 exponential of the float32 attention path (≤ 2 ulp
 * of float32 from the correctly rounded value in tests; −∞ → 0, underflow to subnormals/0, overflow
 * → +∞, NaN → NaN). Falls back to Math.fround(Math.exp(x)) where WebAssembly SIMD is unavailable.
 * Writes into `out` (may be `x`); returns `out`.
 */
export function simdExp32(x: Float32Array, out: Float32Array = new Float32Array(x.length)): Float32Array {
  const n = x.length;
  if (!wasmSimdAvailable()) {
    for (let i = 0; i < n; i++) out[i] = Math.fround(Math.exp(x[i]));
    return out;
  }
  const chunk = 1 << 16;
  const k = getKernels();
  const base = KERNEL_RESERVED_BYTES;
  ensureKernelMemory(k, base + chunk * 4);
  for (let i0 = 0; i0 < n; i0 += chunk) {
    const len = Math.min(chunk, n - i0);
    k.f32.set(x.subarray(i0, i0 + len), base / 4);
    k.exp_f32(base, base, len);
    out.set(k.f32.subarray(base / 4, base / 4 + len), i0);
  }
  return out;
}
