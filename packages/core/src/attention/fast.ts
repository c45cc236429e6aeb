/**
 * Exact softmax attention Y = Z⁻¹ A V with A = exp(scale · Q Kᵀ) (paper §2.1), on the fast kernels,
 * in float32 (f32x4, twice the SIMD width) or float64 — materialized (S = Q Kᵀ, row softmax with the
 * max subtracted, P V) or streaming (online softmax, FlashAttention-style: never N_Q × N_KV; key
 * blocks update a running row max m, normalizer l and unnormalized output, each rescaled by
 * exp(m_old − m_new) when the max grows).
 *
 * Precision: in float32 the inputs are rounded to float32 in the kernels' packing, Q Kᵀ and P V are
 * float32 products; on the WebAssembly path the max shift S − m and the exp are float32 too (the
 * f32x4 exp of kernels/wat.ts, ≤ 2 ulp; the materialized form without a mask shifts by an integer
 * upper bound of the row instead, exactly, and takes 2^(S − M) with ≤ 1.2 ulp), on the JavaScript path they are float64; the normalizer Z
 * is a float64 sum and the result is a float64 `Matrix`. Error bound (u = 2⁻²⁴, Higham Thm 3.5 for
 * the dot products):
 *   |Y₃₂ − Y| ≤ max|V| · u · (2·scale·(d_QK + 4)·max_ij Σ_p |Q_ip K_jp| + N_KV + 2·⌈N_KV/blockSize⌉ + 12),
 * logit error (d_QK + 2 roundings of the dot product, 2 more for the float32 shift S − m, whose
 * size is ≤ 2·max|S|) → relative error of the weights, ×2 through the normalization; 12 = the former
 * 4 + 2·4 for the float32 exp (≤ 2 ulp ≤ 4u relative); N_KV + 2⌈N_KV/blockSize⌉ for the float32
 * accumulation of P V; `float32AttentionErrorBound` computes it. Typical errors are far smaller
 * (≈ √N_KV·u rather than N_KV·u): see docs/performance.md.
 *
 * Masks: the row-prefix masks — causal (query i sees keys j ≤ offset + i, offset default N_KV − N_Q,
 * ERRATA) and padding (keys j < keyLength) — with the same semantics as `attention/`.
 */
import { NumericalError, ValueError } from "../errors.js";
import { matmulInto, matmulTransBInto } from "../linalg/matmul.js";
import { Matrix } from "../matrix.js";
import {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  assertShape,
  assertOptions,
} from "../validate.js";
import type { DenseArray } from "../kernels/gemm.js";
import { matmul32Into, matmulTransB32Into } from "../linalg/matmul32.js";
import { type KnownMaxima, attentionMaximaInFloat32Range } from "../kernels/range32.js";
import { attentionInFloat32Range, maxAbsScan } from "../kernels/scan.js";
import { fusedSoftmaxAttention, prefixTileMask, useFusedSoftmax } from "../kernels/softmaxWasm.js";

/** Arithmetic of the two products: `"float32"` (f32x4 kernels) or `"float64"`. */
export type AttentionPrecision = "float32" | "float64";
/** `"materialized"` forms the N_Q × N_KV weights; `"streaming"` uses the online softmax in blocks. */
export type AttentionMode = "materialized" | "streaming";

/** The masks the fast path supports: both allow a prefix of the keys to each query row. */
export type PrefixMask = { kind: "causal"; offset?: number } | { kind: "padding"; keyLength: number };

/** Options of `attention32`, `streamingAttention32` and `fastAttention`. */
export interface FastAttentionOptions {
  /** Logit scale in exp(scale·⟨q, k⟩). @default 1/√d_QK */
  scale?: number;
  /** Causal or padding mask. @default none */
  mask?: PrefixMask;
  /** A query row with no allowed key: `"error"` throws NumericalError, `"zero"` gives a zero row. @default "error" */
  onEmptyRow?: "error" | "zero";
  /** Keys per block in streaming mode. @default 256 */
  blockSize?: number;
  /** Queries per block in streaming mode (bounds the block of scores at queryBlockSize × blockSize). @default 512 */
  queryBlockSize?: number;
}

/** Options of `fastAttention`. */
export interface FastAttentionFullOptions extends FastAttentionOptions {
  /**
   * Arithmetic of Q Kᵀ and P V. `"float32"` computes in float64 instead when the inputs, the scale
   * or the logits leave float32's safe range (largest |entry| outside [2⁻⁶⁰, 2⁶⁰] ≈ [8.7e-19, 1.2e18],
   * |logits| beyond 2¹⁰⁰; see range32.ts) or the float32 pass is not finite — the same fallback as
   * core's `attention`, never a silent NaN/±∞ or a 0 from flushed inputs. @default "float64"
   */
  precision?: AttentionPrecision;
  /** @default "materialized" */
  mode?: AttentionMode;
}

/** Validated, plain-data parameters of one attention call (what a worker receives). */
export interface AttentionPlan {
  precision: AttentionPrecision;
  mode: AttentionMode;
  scale: number;
  mask: PrefixMask | undefined;
  onEmptyRow: "error" | "zero";
  blockSize: number;
  queryBlockSize: number;
}

/** Validates options into a plan (shape-independent parts; `scale` NaN means "1/√d_QK"). */
export function attentionPlan(options: FastAttentionFullOptions = {}, argument = "options"): AttentionPlan {
  if (options === null || typeof options !== "object") throw new ValueError(argument, "an options object", String(options));
  const precision = options.precision ?? "float64";
  assertOneOf(precision, `${argument}.precision`, ["float32", "float64"] as const);
  const mode = options.mode ?? "materialized";
  assertOneOf(mode, `${argument}.mode`, ["materialized", "streaming"] as const);
  const onEmptyRow = options.onEmptyRow ?? "error";
  assertOneOf(onEmptyRow, `${argument}.onEmptyRow`, ["error", "zero"] as const);
  if (options.scale !== undefined) assertNumber(options.scale, `${argument}.scale`);
  const blockSize = options.blockSize ?? 256;
  assertInteger(blockSize, `${argument}.blockSize`, 1);
  const queryBlockSize = options.queryBlockSize ?? 512;
  assertInteger(queryBlockSize, `${argument}.queryBlockSize`, 1);
  const mask = options.mask;
  if (mask !== undefined) {
    if (mask === null || typeof mask !== "object") throw new ValueError(`${argument}.mask`, "a causal or padding mask", String(mask));
    assertOneOf(mask.kind, `${argument}.mask.kind`, ["causal", "padding"] as const);
    if (mask.kind === "causal" && mask.offset !== undefined) assertInteger(mask.offset, `${argument}.mask.offset`, Number.MIN_SAFE_INTEGER);
    if (mask.kind === "padding") assertInteger(mask.keyLength, `${argument}.mask.keyLength`, 0);
  }
  return { precision, mode, scale: options.scale ?? Number.NaN, mask, onEmptyRow, blockSize, queryBlockSize };
}

/** Per-query count of allowed keys (keys 0…limit−1), or undefined when unmasked. */
function rowLimits(mask: PrefixMask | undefined, nQ: number, nKV: number): Int32Array | undefined {
  if (!mask) return undefined;
  const limit = new Int32Array(nQ);
  if (mask.kind === "causal") {
    // ERRATA: query i sits at absolute position offset + i, offset = N_KV − N_Q by default.
    const offset = mask.offset ?? nKV - nQ;
    for (let i = 0; i < nQ; i++) limit[i] = Math.max(0, Math.min(nKV, offset + i + 1));
  } else {
    if (mask.keyLength > nKV)
      throw new ValueError("options.mask.keyLength", `an integer in [0, ${nKV}] (keys.rows)`, String(mask.keyLength));
    limit.fill(mask.keyLength);
  }
  return limit;
}

function emptyRow(plan: AttentionPlan, i: number): void {
  if (plan.onEmptyRow === "error") {
    throw new NumericalError(`mask (query row ${i})`, "at least one allowed key per query row", 'no allowed key (use onEmptyRow: "zero")');
  }
}

/**
 * Raw attention on flat row-major arrays: writes Y (nQ × dV) into `out`. Q is nQ × dQK, K nKV × dQK,
 * V nKV × dV. No argument checks beyond the plan; used per head by `fastAttention` and the workers.
 *
 * float32 falls back to float64 (issue #6, as core's `attention` / `streamingAttention`): when the
 * magnitudes of Q, K, V, the scale or the logits leave float32's safe range (range32.ts) — beyond it
 * float32 overflows to ±∞/NaN, below it V and the logits flush to 0 — and, as a last guard, when the
 * float32 pass yields a non-finite normalizer or output. float64 is at least as accurate.
 * `known`: max |K| and max |V| from the caller (an exact cache's, range32.ts `KnownMaxima`) instead
 * of a scan of K and V for that decision.
 * @throws NumericalError on a query row with no allowed key (unless `onEmptyRow: "zero"`), or when
 *   even float64 overflows (a logit scale·⟨q, k⟩ beyond ≈ 1.8e308).
 */
export function attentionInto(
  plan: AttentionPlan,
  Q: Float64Array,
  K: Float64Array,
  V: Float64Array,
  out: Float64Array,
  nQ: number,
  nKV: number,
  dQK: number,
  dV: number,
  known?: KnownMaxima,
): void {
  const scale = Number.isNaN(plan.scale) ? 1 / Math.sqrt(dQK) : plan.scale;
  let p = plan;
  if (p.precision === "float32") {
    const inRange = known
      ? attentionMaximaInFloat32Range(maxAbsScan(Q, nQ * dQK), known.keys, known.values, nKV, dQK, scale)
      : attentionInFloat32Range(Q, K, V, nQ, nKV, dQK, dV, scale);
    if (inRange) {
      try {
        attentionOnce(p, scale, Q, K, V, out, nQ, nKV, dQK, dV);
        if (allFinite(out)) return;
      } catch (e) {
        // An overflow inside float32 is retried in float64; an empty row throws again there.
        if (!(e instanceof NumericalError)) throw e;
      }
    }
    p = { ...p, precision: "float64" };
  }
  attentionOnce(p, scale, Q, K, V, out, nQ, nKV, dQK, dV);
  if (allFinite(out)) return;
  // float64 with finite logits and normalizers: Σ_j A_ij V_j (A_ij ≤ 1) overflowed although Y, a
  // convex combination of the rows of V, fits. V·2⁻⁶⁴ (exact, a power of two) gives Y·2⁻⁶⁴.
  const Vs = new Float64Array(nKV * dV);
  for (let i = 0; i < Vs.length; i++) Vs[i] = V[i] * 2 ** -64;
  attentionOnce(p, scale, Q, K, Vs, out, nQ, nKV, dQK, dV);
  for (let i = 0; i < out.length; i++) out[i] *= 2 ** 64;
  if (!allFinite(out)) {
    throw new NumericalError("values", "a weighted average of the rows of values within float64 range", "an overflow");
  }
}

/** True when no entry is NaN or ±∞. */
export function allFinite(x: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) return false;
  return true;
}

function logitOverflow(i: number): NumericalError {
  return new NumericalError(`queries, keys (query row ${i})`, "finite logits scale·⟨q, k⟩", "a logit that overflowed");
}

/** One pass in the plan's precision. @throws NumericalError on an empty row or a logit overflow. */
function attentionOnce(
  plan: AttentionPlan,
  scale: number,
  Q: Float64Array,
  K: Float64Array,
  V: Float64Array,
  out: Float64Array,
  nQ: number,
  nKV: number,
  dQK: number,
  dV: number,
): void {
  const limit = rowLimits(plan.mask, nQ, nKV);
  if (useFusedSoftmax(nQ, nKV, dQK)) {
    // The fused WebAssembly driver (S, SIMD exp and A V in kernel memory; softmaxWasm.ts), with the
    // same float32 error model as the loops below when precision is float32.
    const stats = fusedSoftmaxAttention({
      queries: Q,
      keys: K,
      values: V,
      nQ,
      nKV,
      d: dQK,
      dV,
      scale,
      mask: limit ? prefixTileMask(limit) : undefined,
      keyBlock: plan.mode === "streaming" ? plan.blockSize : undefined,
      queryBlock: plan.mode === "streaming" ? plan.queryBlockSize : undefined,
      out,
      precision: plan.precision,
    });
    if (stats !== null) {
      for (let i = 0; i < nQ; i++) {
        const l = stats.normalizer[i];
        if (l === 0)
          emptyRow(plan, i); // the driver wrote the zero row
        else if (!(l < Number.POSITIVE_INFINITY)) throw logitOverflow(i);
      }
      return;
    }
  }
  if (plan.mode === "materialized") materialized(plan, scale, limit, Q, K, V, out, nQ, nKV, dQK, dV);
  else streaming(plan, scale, limit, Q, K, V, out, nQ, nKV, dQK, dV);
}

function kernels(precision: AttentionPrecision) {
  return precision === "float32"
    ? { Arr: Float32Array, transB: matmulTransB32Into, mul: matmul32Into }
    : {
        Arr: Float64Array,
        transB: matmulTransBInto as (A: DenseArray, B: DenseArray, C: DenseArray, m: number, k: number, n: number) => void,
        mul: matmulInto as (A: DenseArray, B: DenseArray, C: DenseArray, m: number, k: number, n: number, acc: boolean) => void,
      };
}

// The row loops exist once per element type so each stays monomorphic (a loop that sees both
// Float32Array and Float64Array runs markedly slower in V8).
function rowMax64(S: Float64Array, o: number, lim: number, scale: number): number {
  let mx = Number.NEGATIVE_INFINITY;
  for (let j = o, e = o + lim; j < e; j++) {
    const t = scale * S[j];
    if (t > mx) mx = t;
  }
  return mx;
}

function rowMax32(S: Float32Array, o: number, lim: number, scale: number): number {
  let mx = Number.NEGATIVE_INFINITY;
  for (let j = o, e = o + lim; j < e; j++) {
    const t = scale * S[j];
    if (t > mx) mx = t;
  }
  return mx;
}

/** S[o…o+lim) ← exp(scale·S − mx); returns their float64 sum. */
function rowExp64(S: Float64Array, o: number, lim: number, scale: number, mx: number): number {
  let z = 0;
  for (let j = o, e = o + lim; j < e; j++) {
    const x = Math.exp(scale * S[j] - mx);
    S[j] = x;
    z += x;
  }
  return z;
}

function rowExp32(S: Float32Array, o: number, lim: number, scale: number, mx: number): number {
  let z = 0;
  for (let j = o, e = o + lim; j < e; j++) {
    const x = Math.exp(scale * S[j] - mx);
    S[j] = x;
    z += x;
  }
  return z;
}

function materialized(
  plan: AttentionPlan,
  scale: number,
  limit: Int32Array | undefined,
  Q: Float64Array,
  K: Float64Array,
  V: Float64Array,
  out: Float64Array,
  nQ: number,
  nKV: number,
  dQK: number,
  dV: number,
): void {
  const { Arr, transB, mul } = kernels(plan.precision);
  const S: DenseArray = new Arr(nQ * nKV);
  transB(Q, K, S, nQ, dQK, nKV); // S = Q Kᵀ
  const zInv = new Float64Array(nQ);
  for (let i = 0; i < nQ; i++) {
    const o = i * nKV;
    const lim = limit ? limit[i] : nKV;
    if (lim === 0) {
      emptyRow(plan, i);
      S.fill(0, o, o + nKV);
      continue;
    }
    // Row max of the scaled logits: exp(t − max) ≤ 1, so logits of ±1e4 stay finite (§2.1).
    const mx = S instanceof Float64Array ? rowMax64(S, o, lim, scale) : rowMax32(S, o, lim, scale);
    const z = S instanceof Float64Array ? rowExp64(S, o, lim, scale, mx) : rowExp32(S, o, lim, scale, mx);
    // z ≥ 1 (the max term is exp(0)) unless a logit overflowed: then mx = ±∞ and z = NaN.
    if (!(z < Number.POSITIVE_INFINITY)) throw logitOverflow(i);
    if (lim < nKV) S.fill(0, o + lim, o + nKV);
    zInv[i] = 1 / z;
  }
  const Y: DenseArray = plan.precision === "float64" ? out : new Arr(nQ * dV);
  mul(S, V, Y, nQ, nKV, dV, false); // A V, then Z⁻¹ row by row
  for (let i = 0; i < nQ; i++) {
    const zi = zInv[i];
    for (let c = i * dV, e = c + dV; c < e; c++) out[c] = Y[c] * zi;
  }
}

function streaming(
  plan: AttentionPlan,
  scale: number,
  limit: Int32Array | undefined,
  Q: Float64Array,
  K: Float64Array,
  V: Float64Array,
  out: Float64Array,
  nQ: number,
  nKV: number,
  dQK: number,
  dV: number,
): void {
  const { Arr, transB, mul } = kernels(plan.precision);
  const qb = Math.min(plan.queryBlockSize, nQ);
  const kb = Math.min(plan.blockSize, nKV);
  const S: DenseArray = new Arr(qb * kb);
  const acc: DenseArray = new Arr(qb * dV);
  const m = new Float64Array(qb);
  const l = new Float64Array(qb);
  for (let q0 = 0; q0 < nQ; q0 += qb) {
    const rows = Math.min(qb, nQ - q0);
    m.fill(Number.NEGATIVE_INFINITY);
    l.fill(0);
    acc.fill(0);
    let kEnd = nKV;
    if (limit) {
      kEnd = 0;
      for (let r = 0; r < rows; r++) kEnd = Math.max(kEnd, limit[q0 + r]);
    }
    const Qb = Q.subarray(q0 * dQK, (q0 + rows) * dQK);
    for (let k0 = 0; k0 < kEnd; k0 += kb) {
      const cols = Math.min(kb, kEnd - k0);
      transB(Qb, K.subarray(k0 * dQK, (k0 + cols) * dQK), S, rows, dQK, cols);
      for (let r = 0; r < rows; r++) {
        const o = r * cols;
        const lim = limit ? Math.min(cols, limit[q0 + r] - k0) : cols;
        if (lim <= 0) {
          S.fill(0, o, o + cols);
          continue;
        }
        const mx = Math.max(m[r], S instanceof Float64Array ? rowMax64(S, o, lim, scale) : rowMax32(S, o, lim, scale));
        // Online softmax: rescale what was accumulated under the old max (exp(−∞) = 0 on the first block).
        const alpha = Math.exp(m[r] - mx);
        const sum = S instanceof Float64Array ? rowExp64(S, o, lim, scale, mx) : rowExp32(S, o, lim, scale, mx);
        if (lim < cols) S.fill(0, o + lim, o + cols);
        l[r] = l[r] * alpha + sum;
        m[r] = mx;
        if (alpha !== 1) for (let c = r * dV, e = c + dV; c < e; c++) acc[c] *= alpha;
      }
      mul(S, V.subarray(k0 * dV, (k0 + cols) * dV), acc, rows, cols, dV, true);
    }
    for (let r = 0; r < rows; r++) {
      const oo = (q0 + r) * dV;
      if (l[r] === 0) {
        emptyRow(plan, q0 + r);
        out.fill(0, oo, oo + dV);
        continue;
      }
      if (!(l[r] < Number.POSITIVE_INFINITY)) throw logitOverflow(q0 + r); // NaN from ∞ − ∞

      const li = 1 / l[r];
      for (let c = 0; c < dV; c++) out[oo + c] = acc[r * dV + c] * li;
    }
  }
}

/** Checks queries/keys/values and returns their dimensions. */
export function checkQKV(queries: Matrix, keys: Matrix, values: Matrix): { nQ: number; nKV: number; dQK: number; dV: number } {
  assertMatrix(queries, "queries");
  assertNonEmpty(queries, "queries");
  assertShape(keys, "keys", undefined, queries.cols, `cols = queries.cols = ${queries.cols}`);
  assertNonEmpty(keys, "keys");
  assertShape(values, "values", keys.rows, undefined, `rows = keys.rows = ${keys.rows}`);
  assertNonEmpty(values, "values");
  assertFinite(queries, "queries");
  assertFinite(keys, "keys");
  assertFinite(values, "values");
  return { nQ: queries.rows, nKV: keys.rows, dQK: queries.cols, dV: values.cols };
}

/**
 * Exact softmax attention on the fast kernels, in the chosen precision and mode (float32 falls
 * back to float64 outside float32's range: see `FastAttentionFullOptions.precision`).
 * @throws ShapeError on mismatched or empty inputs, NonFiniteError on NaN/±Inf, ValueError on bad
 * options, NumericalError on a query row with no allowed key (unless `onEmptyRow: "zero"`) or a
 * logit beyond float64's range.
 */
export function fastAttention(queries: Matrix, keys: Matrix, values: Matrix, options: FastAttentionFullOptions = {}): Matrix {
  const plan = attentionPlan(options);
  const { nQ, nKV, dQK, dV } = checkQKV(queries, keys, values);
  const out = new Matrix(nQ, dV);
  attentionInto(plan, queries.data, keys.data, values.data, out.data, nQ, nKV, dQK, dV);
  return out;
}

/**
 * Exact softmax attention computed in float32 (Q Kᵀ and P V on the f32x4 kernels), materialized;
 * returns a float64 `Matrix`. See `float32AttentionErrorBound` for its accuracy. Inputs, scale or
 * logits beyond float32's safe range are computed in float64 (as `fastAttention`).
 * @throws as `fastAttention`.
 */
export function attention32(queries: Matrix, keys: Matrix, values: Matrix, options: FastAttentionOptions = {}): Matrix {
  assertOptions(options, "options");
  return fastAttention(queries, keys, values, { ...options, precision: "float32", mode: "materialized" });
}

/**
 * Exact softmax attention in float32 with the online softmax over key blocks: memory
 * O((queryBlockSize + N_Q)·d + queryBlockSize·blockSize), never N_Q × N_KV. Beyond float32's safe
 * range it computes in float64 (as `fastAttention`).
 * @throws as `fastAttention`.
 */
export function streamingAttention32(queries: Matrix, keys: Matrix, values: Matrix, options: FastAttentionOptions = {}): Matrix {
  assertOptions(options, "options");
  return fastAttention(queries, keys, values, { ...options, precision: "float32", mode: "streaming" });
}

/**
 * The a-priori bound on max_ij |Y₃₂ − Y₆₄| of `attention32` / `streamingAttention32` (module doc):
 * max|V|·u·(2·scale·(d_QK + 4)·max_ij Σ_p |Q_ip K_jp| + N_KV + 2·⌈N_KV/blockSize⌉ + 12), u = 2⁻²⁴ —
 * or u = 2⁻⁵³ when the inputs are beyond float32's safe range, where those functions compute in
 * float64 (the same analysis with float64's unit roundoff).
 * @throws as `fastAttention` for bad arguments; NumericalError when the bound itself exceeds
 *   float64's range (logits beyond ≈ 1e308).
 */
export function float32AttentionErrorBound(queries: Matrix, keys: Matrix, values: Matrix, options: FastAttentionOptions = {}): number {
  const { nQ, nKV, dQK, dV } = checkQKV(queries, keys, values);
  const plan = attentionPlan(options);
  const scale = Number.isNaN(plan.scale) ? 1 / Math.sqrt(dQK) : plan.scale;
  let qk = 0;
  for (let i = 0; i < nQ; i++) {
    for (let j = 0; j < nKV; j++) {
      let s = 0;
      for (let p = 0; p < dQK; p++) s += Math.abs(queries.data[i * dQK + p] * keys.data[j * dQK + p]);
      if (s > qk) qk = s;
    }
  }
  let vmax = 0;
  for (const v of values.data) vmax = Math.max(vmax, Math.abs(v));
  const f32 = attentionInFloat32Range(queries.data, keys.data, values.data, nQ, nKV, dQK, dV, scale);
  const u = f32 ? 2 ** -24 : 2 ** -53;
  const bound = vmax * u * (2 * Math.abs(scale) * (dQK + 4) * qk + nKV + 2 * Math.ceil(nKV / plan.blockSize) + 12);
  if (!Number.isFinite(bound)) {
    throw new NumericalError("queries, keys, values", "an error bound within float64 range", `${bound} (logits beyond float64 range)`);
  }
  return bound;
}
