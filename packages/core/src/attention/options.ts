/**
 * Options shared by every exact attention form, and their validation. Kept apart from attend.ts so
 * the materialized and the streaming loops resolve kernel, mask and empty-row policy identically.
 */
import { NumericalError, ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { maxAbsScan } from "../kernels/scan.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertOneOf, assertShape, describe } from "../validate.js";
import { type Kernel, type ResolvedKernel, resolveKernel } from "./kernel.js";
import { type CompiledMask, MASK_FORMS, type Mask, type MaskForm, compileMask } from "./mask.js";

/** What to do with a query row whose normalizer Z[i,i] is 0 (no allowed key, or κ = 0 on all of them). */
export type EmptyRowPolicy = "error" | "zero";
/** Both empty-row policies. */
export const EMPTY_ROW_POLICIES: readonly EmptyRowPolicy[] = ["error", "zero"];

/** Options of single-head attention Y = Z⁻¹AV (§2.1, §3.2). */
export interface AttentionOptions {
  /** The kernel κ. @default { kind: "softmax" } (scale 1/√d_QK) */
  kernel?: Kernel;
  /** Which keys each query may attend to. @default undefined (every key) */
  mask?: Mask;
  /**
   * κ(QKᵀ + M) or κ(QKᵀ) ⊙ M̃ — equal results (§3.2). A kernel without ∅_κ always runs
   * multiplicatively. @default "additive"
   */
  maskForm?: MaskForm;
  /**
   * A row with Z[i,i] = 0 (fully masked, or a kernel vanishing on every allowed key): `"error"`
   * throws NumericalError naming the row; `"zero"` outputs a zero row (and zero weights,
   * normalizer 0, rowShift 0) — Y is then "no information", never NaN. @default "error"
   */
  onEmptyRow?: EmptyRowPolicy;
  /**
   * Arithmetic of Y = Z⁻¹AV in `attention` / `streamingAttention` (and so `multiHeadAttention`):
   * `"float64"`, or `"float32"` — Q Kᵀ and A V on the f32x4 WebAssembly kernels (twice the SIMD
   * width), row max, exp and Z in float64, Y returned as float64 (`fast/attention32.ts`; measured
   * max|Y₃₂ − Y₆₄|/max|Y₆₄| ≈ 5e-7 at N = 1024, d = 64, a-priori bound `float32AttentionErrorBound`).
   * Float32 supports the softmax kernel with no, causal or padding mask (a `ValueError` otherwise);
   * `attentionScores` / `attentionWeights` always compute in float64. @default "float64"
   */
  precision?: AttentionPrecisionOption;
}

/** The arithmetic of the attention products (`AttentionOptions.precision`). */
export type AttentionPrecisionOption = "float64" | "float32";
/** Both precisions. */
export const ATTENTION_PRECISIONS: readonly AttentionPrecisionOption[] = ["float64", "float32"];

/** Options resolved against concrete N_Q, N_KV, d_QK. */
export interface ResolvedAttention {
  readonly kernel: ResolvedKernel;
  readonly mask: CompiledMask | undefined;
  /** The form actually used (multiplicative when the kernel has no ∅_κ). */
  readonly form: MaskForm;
  readonly onEmptyRow: EmptyRowPolicy;
  /** Arithmetic of the products (see `AttentionOptions.precision`). */
  readonly precision: AttentionPrecisionOption;
}

/**
 * max |entry| of the operands, filled in by `checkQueriesKeys` / `checkValues` when asked: the values
 * float32's range decision needs (range32.ts `KnownMaxima`), taken by the finiteness check itself.
 */
export interface OperandMaxima {
  queries: number;
  keys: number;
  values: number;
}

/**
 * Finiteness from the maximum (NaN or +∞ exactly when some entry is not finite: then assertFinite,
 * for its error naming the entry); returns max |entry|.
 */
function finiteMaxAbs(m: Matrix, argument: string): number {
  const x = maxAbsScan(m.data);
  if (!(x < Number.POSITIVE_INFINITY)) assertFinite(m, argument);
  return x;
}

/**
 * Validates queries (N_Q×d_QK) and keys (N_KV×d_QK): matrices, non-empty, same width, finite.
 * `maxima`: finiteness from max |entry| instead, stored there (issue 14: float32 attention needs
 * the maxima, and one scan of each operand then serves both).
 */
export function checkQueriesKeys(queries: unknown, keys: unknown, maxima?: OperandMaxima): asserts queries is Matrix {
  assertMatrix(queries, "queries");
  assertNonEmpty(queries, "queries");
  assertShape(keys, "keys", undefined, queries.cols, `cols = queries.cols = ${queries.cols}`);
  assertNonEmpty(keys, "keys");
  if (maxima) {
    maxima.queries = finiteMaxAbs(queries, "queries");
    maxima.keys = finiteMaxAbs(keys, "keys");
    return;
  }
  assertFinite(queries, "queries");
  assertFinite(keys, "keys");
}

/** Validates values: N_KV×d_V (rows = keys.rows), d_V ≥ 1, finite (`maxima`: as checkQueriesKeys). */
export function checkValues(values: unknown, keys: Matrix, maxima?: OperandMaxima): asserts values is Matrix {
  assertShape(values, "values", keys.rows, undefined, `rows = keys.rows = ${keys.rows}`);
  if (values.cols === 0) throw new ShapeError("values", `${keys.rows}×d_V with d_V ≥ 1`, values.shape);
  if (maxima) maxima.values = finiteMaxAbs(values, "values");
  else assertFinite(values, "values");
}

/** Resolves kernel defaults, compiles the mask and picks the effective mask form. */
export function resolveAttention(options: unknown, nQ: number, nKV: number, dQK: number): ResolvedAttention {
  if (options === undefined) options = {};
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  const o = options as AttentionOptions;
  const kernel = resolveKernel(o.kernel, dQK);
  const mask = o.mask === undefined ? undefined : compileMask(o.mask, nQ, nKV);
  const requested = o.maskForm ?? "additive";
  assertOneOf(requested, "options.maskForm", MASK_FORMS);
  const onEmptyRow = o.onEmptyRow ?? "error";
  assertOneOf(onEmptyRow, "options.onEmptyRow", EMPTY_ROW_POLICIES);
  // No ∅_κ means no additive form exists; the multiplicative one defines the same A (§3.2).
  const form: MaskForm = requested === "additive" && kernel.empty === undefined ? "multiplicative" : requested;
  const precision = o.precision ?? "float64";
  assertOneOf(precision, "options.precision", ATTENTION_PRECISIONS);
  return { kernel, mask, form, onEmptyRow, precision };
}

/**
 * Handles a row whose normalizer is 0. Returns normally under `onEmptyRow: "zero"` (the caller
 * writes zeros); throws NumericalError naming the row otherwise.
 */
export function emptyRow(r: ResolvedAttention, i: number): void {
  if (r.onEmptyRow === "zero") return;
  if (r.mask && r.mask.allowedCount[i] === 0) {
    throw new NumericalError(
      "options.mask",
      'at least one allowed key per query row (or onEmptyRow: "zero")',
      `query row ${i} has no allowed key (fully masked)`,
    );
  }
  throw new NumericalError(
    "options.kernel",
    `Z[${i},${i}] = Σ_j κ(Q[${i},:], K[j,:]) > 0 (or onEmptyRow: "zero")`,
    `0: kernel "${r.kernel.name}" vanishes on every allowed key of query row ${i}`,
  );
}

/** NumericalError for a normalizer that overflowed or a logit that is not finite. */
export function overflowError(r: ResolvedAttention, i: number, j: number, what: string): NumericalError {
  return new NumericalError(
    "options.kernel",
    `finite ${what} (kernel "${r.kernel.name}")`,
    `non-finite at query ${i}${j >= 0 ? `, key ${j}` : ""}`,
  );
}

/** Copy of the queries' data multiplied by the kernel scale (folds the scale into QKᵀ for free). */
export function scaledQueries(queries: Matrix, scale: number): Float64Array {
  const q = queries.data;
  if (scale === 1) return q;
  const out = new Float64Array(q.length);
  for (let p = 0; p < q.length; p++) out[p] = q[p] * scale;
  return out;
}
