/**
 * General attention with learned projections (Serret 2026, §2.1):
 *   Q = X_Q W_Q ∈ R^{N_Q×d_QK},  K = X_K W_K ∈ R^{N_KV×d_QK},  V = X_V W_V ∈ R^{N_KV×d_V},
 *   Y = Z⁻¹ A V with A[i,j] = κ(Q[i,:], K[j,:]).
 * Self-attention is X_Q = X_K = X_V (encoder, §3.1.1); cross-attention takes queries from one source
 * and keys/values from another (decoder over the encoder output, §3.2) — N_Q ≠ N_KV in general.
 */
import { Matrix } from "../matrix.js";
import { matmulInto } from "../linalg/matmul.js";
import { ValueError } from "../errors.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertShape, describe } from "../validate.js";
import { attention } from "./attend.js";
import type { AttentionOptions } from "./options.js";
import { type StreamingAttentionOptions, streamingAttention } from "./streaming.js";

/** The three projections of one attention head. */
export interface ProjectionWeights {
  /** W_Q ∈ R^{d_in^Q×d_QK}. */
  query: Matrix;
  /** W_K ∈ R^{d_in^K×d_QK}. */
  key: Matrix;
  /** W_V ∈ R^{d_in^V×d_V}. */
  value: Matrix;
}

/** How exact attention is evaluated: the materialized N_Q×N_KV form or the online-softmax stream. */
export type ExactAlgorithm = "materialized" | "streaming";
/** Both exact algorithms. */
export const EXACT_ALGORITHMS: readonly ExactAlgorithm[] = ["materialized", "streaming"];

/** Options of the projected forms: attention options plus the algorithm choice. */
export interface ProjectedAttentionOptions extends StreamingAttentionOptions {
  /** Materialized or streaming evaluation (same result). @default "materialized" */
  algorithm?: ExactAlgorithm;
}

/**
 * X W for an input X (N×d_in) and a weight W (d_in×d_out), validated: `x` must be finite and
 * non-empty, `w` must have rows = x.cols and be finite.
 */
export function project(x: Matrix, w: Matrix, xName = "x", wName = "w"): Matrix {
  assertMatrix(x, xName);
  assertNonEmpty(x, xName);
  assertShape(w, wName, x.cols, undefined, `rows = ${xName}.cols = ${x.cols}`);
  if (w.cols === 0) throw new ValueError(wName, `${x.cols}×d with d ≥ 1`, w.shape);
  assertFinite(x, xName);
  assertFinite(w, wName);
  const out = new Matrix(x.rows, w.cols);
  matmulInto(x.data, w.data, out.data, x.rows, x.cols, w.cols, false);
  return out;
}

/** Runs the chosen exact algorithm. */
export function runAttention(queries: Matrix, keys: Matrix, values: Matrix, options: ProjectedAttentionOptions = {}): Matrix {
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  const algorithm = options.algorithm ?? "materialized";
  if (algorithm === "streaming") return streamingAttention(queries, keys, values, options);
  if (algorithm !== "materialized") throw new ValueError("options.algorithm", '"materialized" or "streaming"', describe(algorithm));
  return attention(queries, keys, values, options as AttentionOptions);
}

function checkWeights(weights: unknown): asserts weights is ProjectionWeights {
  if (weights === null || typeof weights !== "object") throw new ValueError("weights", "{ query, key, value } matrices", describe(weights));
  const w = weights as ProjectionWeights;
  assertMatrix(w.query, "weights.query");
  assertShape(w.key, "weights.key", undefined, w.query.cols, `cols = weights.query.cols = d_QK = ${w.query.cols}`);
}

/**
 * Y = Z⁻¹AV with Q = X_Q W_Q, K = X_K W_K, V = X_V W_V (§2.1).
 * @param xQ X_Q, N_Q×d_in^Q. @param xK X_K, N_KV×d_in^K. @param xV X_V, N_KV×d_in^V (rows = xK.rows).
 * @param weights { query: d_in^Q×d_QK, key: d_in^K×d_QK, value: d_in^V×d_V }.
 * @returns Y, N_Q×d_V.
 * @throws ShapeError on mismatched shapes, NonFiniteError on NaN/±Inf, plus the errors of `attention`.
 */
export function projectedAttention(
  xQ: Matrix,
  xK: Matrix,
  xV: Matrix,
  weights: ProjectionWeights,
  options?: ProjectedAttentionOptions,
): Matrix {
  checkWeights(weights);
  assertMatrix(xK, "xK");
  assertShape(xV, "xV", xK.rows, undefined, `rows = xK.rows = N_KV = ${xK.rows}`);
  const queries = project(xQ, weights.query, "xQ", "weights.query");
  const keys = project(xK, weights.key, "xK", "weights.key");
  const values = project(xV, weights.value, "xV", "weights.value");
  return runAttention(queries, keys, values, options);
}

/** Self-attention (§3.1.1): X_Q = X_K = X_V = x. @returns N×d_V. */
export function selfAttention(x: Matrix, weights: ProjectionWeights, options?: ProjectedAttentionOptions): Matrix {
  return projectedAttention(x, x, x, weights, options);
}

/**
 * Cross-attention (§3.2): queries from `xQ` (e.g. the decoder state), keys and values from the same
 * other source `xKV` (e.g. the encoder output). @returns N_Q×d_V.
 */
export function crossAttention(xQ: Matrix, xKV: Matrix, weights: ProjectionWeights, options?: ProjectedAttentionOptions): Matrix {
  return projectedAttention(xQ, xKV, xKV, weights, options);
}
