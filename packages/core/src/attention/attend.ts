/**
 * Single-head exact attention, materialized (Serret 2026, §2.1 and §3.2):
 *   A[i,j] = 1_{j∈S_i} κ(Q[i,:], K[j,:]),   Z = diag(A·1),   Y = Z⁻¹ A V.
 * Fast path: S = (scale·Q) Kᵀ with the register-tiled `matmulTransBInto` (the scale folded into a
 * copy of Q: N_Q·d_QK multiplications instead of N_Q·N_KV), κ applied row by row in place (for
 * softmax with the row max subtracted — a per-row constant that cancels in Z⁻¹A — so logits of ±1e4
 * stay finite), then Y = Z⁻¹(A V) with `matmulInto`. Queries and keys/values may come from
 * different sources (cross-attention, N_Q ≠ N_KV) and d_QK ≠ d_V is allowed.
 */
import { ShapeError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { matmulInto, matmulTransBInto } from "../linalg/matmul.js";
import { Scratch } from "../scratch.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertOutputBuffer } from "../validate.js";
import { kernelValueError } from "./kernel.js";
import { TILE_NONE, TILE_PARTIAL } from "./mask.js";
import {
  type AttentionOptions,
  type ResolvedAttention,
  checkQueriesKeys,
  checkValues,
  emptyRow,
  overflowError,
  resolveAttention,
  scaledQueries,
} from "./options.js";
import type { KnownMaxima } from "../kernels/range32.js";
import { allowedRowMax, dotRow, expRow, firstNonFinite, float32Attention, fusedSoftmax } from "./rows.js";

/**
 * The kernel matrix in a overflow-safe factored form: the true A[i,j] = scores[i,j]·exp(rowShift[i])
 * and Z[i,i] = normalizer[i]·exp(rowShift[i]).
 */
export interface AttentionScores {
  /** A with row i divided by exp(rowShift[i]); masked entries exactly 0. N_Q×N_KV. */
  scores: Matrix;
  /** Row sums of `scores` (Z[i,i]·exp(−rowShift[i])); 0 for an empty row under onEmptyRow "zero". */
  normalizer: Float64Array;
  /** Max allowed logit scale·⟨Q[i,:],K[j,:]⟩ of row i for softmax; 0 for other kernels and empty rows. */
  rowShift: Float64Array;
}

/** Shared core: the shifted kernel matrix, its row sums and shifts. Inputs already validated. */
export function computeScores(queries: Matrix, keys: Matrix, r: ResolvedAttention, buffer?: Float64Array): AttentionScores {
  const nQ = queries.rows;
  const nKV = keys.rows;
  const d = queries.cols;
  // Into `buffer` when the caller lends one (zeroed here: masked entries of a pairwise κ stay 0).
  const scores = buffer === undefined ? new Matrix(nQ, nKV) : new Matrix(nQ, nKV, buffer.subarray(0, nQ * nKV).fill(0));
  const s = scores.data;
  // Softmax on the fused WebAssembly path (SIMD exp; same numbers to ≈ 1e-15): see rows.ts.
  const fused = fusedSoftmax(queries, keys, undefined, r, { scores: s });
  if (fused !== null) return { scores, normalizer: fused.normalizer, rowShift: fused.rowShift };
  const normalizer = new Float64Array(nQ);
  const rowShift = new Float64Array(nQ);
  const k = r.kernel;
  const mk = r.mask ? new Uint8Array(nKV) : null;
  if (k.kind !== "pairwise") matmulTransBInto(scaledQueries(queries, k.scale), keys.data, s, nQ, d, nKV);
  const keyRows = k.kind === "pairwise" ? Array.from({ length: nKV }, (_, j) => keys.rowView(j)) : [];
  for (let i = 0; i < nQ; i++) {
    const o = i * nKV;
    const status = r.mask ? r.mask.tile(i, i + 1, 0, nKV, mk!) : 1;
    if (status === TILE_NONE) {
      emptyRow(r, i); // throws unless onEmptyRow = "zero"
      s.fill(0, o, o + nKV);
      continue;
    }
    const row = status === TILE_PARTIAL ? mk : null;
    let sum = 0;
    if (k.kind === "softmax") {
      const mx = allowedRowMax(s, o, nKV, row, 0, r.form);
      sum = expRow(s, o, nKV, mx, row, 0, r.form);
      if (!Number.isFinite(sum)) throw overflowError(r, i, firstNonFinite(s, o, nKV), "logits scale·⟨Q[i,:], K[j,:]⟩");
      rowShift[i] = mx;
    } else if (k.kind === "dot") {
      sum = dotRow(k, s, o, nKV, row, 0, r.form, i, 0);
    } else {
      const q = queries.rowView(i);
      const fn = k.fn!;
      for (let j = 0; j < nKV; j++) {
        if (row !== null && row[j] === 0) continue; // 1_{j∉S_i}·κ = 0: κ not needed (scores start at 0)
        const v = fn(q, keyRows[j]);
        if (!(v >= 0 && v < Number.POSITIVE_INFINITY)) throw kernelValueError(k, v, i, j);
        s[o + j] = v;
        sum += v;
      }
    }
    if (!Number.isFinite(sum)) throw overflowError(r, i, -1, `normalizer Z[${i},${i}]`);
    if (sum === 0) {
      emptyRow(r, i);
      s.fill(0, o, o + nKV);
      continue;
    }
    normalizer[i] = sum;
  }
  return { scores, normalizer, rowShift };
}

/**
 * The kernel matrix A = (1_{j∈S_i} κ(Q[i,:], K[j,:])) in overflow-safe factored form:
 * true A[i,j] = scores[i,j]·exp(rowShift[i]), Z[i,i] = normalizer[i]·exp(rowShift[i]).
 * @param queries Q, N_Q×d_QK, finite, non-empty.
 * @param keys K, N_KV×d_QK, finite, non-empty.
 * @param into Optional buffer of at least N_Q·N_KV float64s to write the scores into (the returned
 *   `scores` is a view of its first N_Q·N_KV entries, overwritten) instead of a fresh array: for a
 *   loop that forms many score matrices of one size. It must not overlap `queries` or `keys`.
 * @throws ShapeError / NonFiniteError on bad inputs (`into` not a Float64Array or too short
 *   included); ValueError on bad options; NumericalError on a row with Z = 0 (onEmptyRow "error"), a
 *   kernel value that is not finite and ≥ 0, or an overflow.
 */
export function attentionScores(queries: Matrix, keys: Matrix, options?: AttentionOptions, into?: Float64Array): AttentionScores {
  checkQueriesKeys(queries, keys);
  assertOutputBuffer(into, queries.rows * keys.rows, "into", "N_Q·N_KV");
  return computeScores(queries, keys, resolveAttention(options, queries.rows, keys.rows, queries.cols), into);
}

/**
 * The attention weights P = Z⁻¹A (row-stochastic: each row sums to 1; a zero row for an empty row
 * under onEmptyRow "zero"). For softmax, P[i,:] = σ(scale·Q[i,:]Kᵀ) (§2.1).
 * @param queries Q, N_Q×d_QK. @param keys K, N_KV×d_QK.
 * @param into Optional buffer of at least N_Q·N_KV float64s that P is written into (the returned
 *   matrix is a view of it) instead of a fresh array — as for `attentionScores`; the same bits.
 * @throws as `attentionScores`.
 */
export function attentionWeights(queries: Matrix, keys: Matrix, options?: AttentionOptions, into?: Float64Array): Matrix {
  const { scores, normalizer } = attentionScores(queries, keys, options, into);
  const nKV = scores.cols;
  const s = scores.data;
  for (let i = 0; i < scores.rows; i++) {
    if (normalizer[i] === 0) continue; // already a zero row
    normalizeRow(s, i * nKV, (i + 1) * nKV, normalizer[i]);
  }
  return scores;
}

/**
 * Exact attention Y = Z⁻¹ A V (§2.1), materializing the N_Q×N_KV kernel matrix. For sequences whose
 * score matrix does not fit in memory use `streamingAttention` (same result).
 * @param queries Q, N_Q×d_QK, finite, non-empty.
 * @param keys K, N_KV×d_QK, finite, non-empty.
 * @param values V, N_KV×d_V, finite (d_V may differ from d_QK).
 * @returns Y, N_Q×d_V.
 * @throws ShapeError / NonFiniteError on bad inputs; ValueError on bad options; NumericalError on a
 *   fully masked row (unless onEmptyRow "zero"), an invalid kernel value, or an overflow.
 * @example
 * ```ts
 * import { attention, randomMatrix } from "@randattn/core";
 *
 * const queries = randomMatrix(4, 8, {}, [1, "q"]); // N_Q × d
 * const keys = randomMatrix(6, 8, {}, [1, "k"]); // N_KV × d
 * const values = randomMatrix(6, 3, {}, [1, "v"]); // N_KV × d_V
 * const y = attention(queries, keys, values, { mask: { kind: "causal" } }); // softmax(QKᵀ/√d)V
 * console.log(y.shape); // "4×3"
 * ```
 */
export function attention(queries: Matrix, keys: Matrix, values: Matrix, options?: AttentionOptions): Matrix {
  // The finiteness check takes max |Q|, |K|, |V| (scan.ts: large operands on the kernel module,
  // ≈ 3× the JavaScript loop), which float32's range decision needs: one scan of each operand where
  // float32 took two (≈ 0.9 ms of an N = 4096, d = 64 call: issue 14, stop 42).
  const maxima = { queries: 0, keys: 0, values: 0 };
  checkQueriesKeys(queries, keys, maxima);
  checkValues(values, keys, maxima);
  return attendChecked(queries, keys, values, options, maxima);
}

/** The computation of {@link attention} once its inputs are checked (shared with attentionCachedKeys). */
function attendChecked(queries: Matrix, keys: Matrix, values: Matrix, options: AttentionOptions | undefined, known?: KnownMaxima): Matrix {
  const r = resolveAttention(options, queries.rows, keys.rows, queries.cols);
  // Softmax: blocks of query rows through S, exp and A·V in WebAssembly memory — the N_Q×N_KV
  // score matrix is never allocated (one ≈ 1 MiB row block is reused); see rows.ts.
  if (r.precision === "float32") {
    // null when float32 does not apply (a non-finite float32 result included): compute in float64,
    // which is at least as accurate, rather than return a silent NaN (issue #6).
    const y32 = float32Attention(queries, keys, values, r, options?.mask, "materialized", {}, known);
    if (y32 !== null) return y32;
  }
  const out = new Matrix(queries.rows, values.cols);
  if (fusedSoftmax(queries, keys, values, r, { out: out.data }) !== null) return out;
  // A small score matrix (a decoded token's row) in a buffer reused from call to call: a fresh
  // off-heap Float64Array costs ≈ 0.7 µs, ≈ 9 % of a decoding step's time (issue 14). Not while
  // another call holds it (a kernel callback may itself call attention).
  return scoresScratch.lend(queries.rows * keys.rows, (buffer) => {
    const { scores, normalizer } = computeScores(queries, keys, r, buffer);
    return normalizedProduct(scores, normalizer, values, out);
  });
}

/** The score matrices (N_Q·N_KV ≤ 4096: 32 KiB) `attendChecked` computes in a reused buffer. */
const scoresScratch = new Scratch(4096);

/**
 * `attention` for keys and values already known to be finite (the rows of an exact KV or latent
 * cache, each checked by its `append`): the same computation bit for bit, without rescanning all
 * N_KV cached rows of K and V on every decoding step — which costs as much as the step's q·Kᵀ.
 * Queries are still checked (finite, shapes). `known`: max |K| and max |V| when the cache keeps
 * them (`KVCache.maxAbs`), so float32's range decision does not rescan K and V either. Internal to
 * core's decoders.
 */
export function attentionCachedKeys(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options?: AttentionOptions,
  known?: KnownMaxima,
): Matrix {
  assertMatrix(queries, "queries");
  assertNonEmpty(queries, "queries");
  assertFinite(queries, "queries");
  if (keys.cols !== queries.cols || keys.rows === 0) {
    throw new ShapeError("keys", `N_KV×${queries.cols} with N_KV ≥ 1 (cols = queries.cols)`, keys.shape);
  }
  if (values.rows !== keys.rows || values.cols === 0) {
    throw new ShapeError("values", `${keys.rows}×d_V with d_V ≥ 1 (rows = keys.rows)`, values.shape);
  }
  return attendChecked(queries, keys, values, options, known);
}

/**
 * s[from, to) /= z. Multiplies by 1/z, unless z is so small (a dot kernel on tiny logits: κ and Z
 * subnormal) that 1/z overflows — then divides, so κ/Z stays the exact ratio instead of κ·∞ (or 0·∞ = NaN).
 */
function normalizeRow(s: Float64Array, from: number, to: number, z: number): void {
  const inv = 1 / z;
  if (Number.isFinite(inv)) for (let p = from; p < to; p++) s[p] *= inv;
  else for (let p = from; p < to; p++) s[p] /= z;
}

/**
 * (Z⁻¹A)V: the rows of A are normalized first, then one N_Q·N_KV·d_V product. Normalizing after
 * the product (Z⁻¹(AV), N_Q·d_V divisions instead of N_Q·N_KV) overflows for non-exp kernels with
 * large values — κ ≈ 1e300 times |V| ≈ 1e150 is ∞ in AV although Y is a convex combination of the
 * rows of V (issue #6). With P = Z⁻¹A (entries in [0, 1]) every |Y[i,c]| ≤ max_j |V[j,c]|.
 * `scores` is private to the caller and is overwritten; Y is written into `out` (N_Q × d_V).
 */
function normalizedProduct(scores: Matrix, normalizer: Float64Array, values: Matrix, out: Matrix): Matrix {
  const nQ = scores.rows;
  const nKV = scores.cols;
  const dV = values.cols;
  const s = scores.data;
  for (let i = 0; i < nQ; i++) {
    if (normalizer[i] === 0) s.fill(0, i * nKV, (i + 1) * nKV);
    else normalizeRow(s, i * nKV, (i + 1) * nKV, normalizer[i]);
  }
  matmulInto(s, values.data, out.data, nQ, nKV, dV, false);
  return out;
}
