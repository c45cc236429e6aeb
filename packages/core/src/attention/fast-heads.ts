/**
 * Per-head multi-head attention on the fast kernels (paper §2.2, GQA §4.1): for each head h,
 * Q_h = X_Q W_Q^h, K_g = X_KV W_K^g, V_g = X_KV W_V^g with g = ⌊h/(H/G)⌋ (0-based, ERRATA),
 * Y_h = softmax attention(Q_h, K_g, V_g), written into columns h·d_V … (h+1)·d_V − 1 of
 * concat_col(Y_h). The same function runs in the calling thread and in each worker of
 * `parallel.ts`, so a head's output is bit-for-bit the same wherever it is computed.
 */
import { ValueError } from "../errors.js";
import { matmulInto } from "../linalg/matmul.js";
import type { Matrix } from "../matrix.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertShape } from "../validate.js";
import { type AttentionPlan, attentionInto } from "./fast.js";

/** Per-head projection weights; structurally the `MultiHeadWeights` of `attention/`. */
export interface HeadWeights {
  /** W_Q^h, d_in(X_Q) × d_QK, one per query head (H). */
  queries: readonly Matrix[];
  /** W_K^g, d_in(X_KV) × d_QK, one per KV head (G, H divisible by G). */
  keys: readonly Matrix[];
  /** W_V^g, d_in(X_KV) × d_V, one per KV head. */
  values: readonly Matrix[];
  /** W_O, H·d_V × d_out. */
  output: Matrix;
}

/** Dimensions of a multi-head call. */
export interface HeadDims {
  nQ: number;
  nKV: number;
  dInQ: number;
  dInKV: number;
  numHeads: number;
  numKvHeads: number;
  dQK: number;
  dV: number;
  dOut: number;
}

/**
 * Checks xQ, xKV and the weights; returns the dimensions.
 * @throws ShapeError / ValueError / NonFiniteError naming the offending argument.
 */
export function checkMultiHead(xQ: Matrix, xKV: Matrix, weights: HeadWeights): HeadDims {
  assertMatrix(xQ, "xQ");
  assertNonEmpty(xQ, "xQ");
  assertMatrix(xKV, "xKV");
  assertNonEmpty(xKV, "xKV");
  assertFinite(xQ, "xQ");
  assertFinite(xKV, "xKV");
  if (weights === null || typeof weights !== "object") throw new ValueError("weights", "a MultiHeadWeights object", String(weights));
  const { queries, keys, values, output } = weights;
  for (const [name, list] of [
    ["queries", queries],
    ["keys", keys],
    ["values", values],
  ] as const) {
    if (!Array.isArray(list) || list.length === 0) throw new ValueError(`weights.${name}`, "a non-empty array of matrices", String(list));
  }
  const H = queries.length;
  const G = keys.length;
  if (values.length !== G) throw new ValueError("weights.values", `${G} matrices (weights.keys.length)`, `${values.length}`);
  if (H % G !== 0) throw new ValueError("weights.keys", `a number of KV heads dividing numHeads = ${H}`, `${G}`);
  assertMatrix(queries[0], "weights.queries[0]");
  const dQK = queries[0].cols;
  assertMatrix(values[0], "weights.values[0]");
  const dV = values[0].cols;
  for (let h = 0; h < H; h++) {
    assertShape(queries[h], `weights.queries[${h}]`, xQ.cols, dQK, "d_in(xQ) × d_QK");
    assertFinite(queries[h], `weights.queries[${h}]`);
  }
  for (let g = 0; g < G; g++) {
    assertShape(keys[g], `weights.keys[${g}]`, xKV.cols, dQK, "d_in(xKV) × d_QK");
    assertShape(values[g], `weights.values[${g}]`, xKV.cols, dV, "d_in(xKV) × d_V");
    assertFinite(keys[g], `weights.keys[${g}]`);
    assertFinite(values[g], `weights.values[${g}]`);
  }
  assertShape(output, "weights.output", H * dV, undefined, `numHeads·d_V = ${H}·${dV}`);
  assertFinite(output, "weights.output");
  if (dQK === 0 || dV === 0) throw new ValueError("weights", "d_QK ≥ 1 and d_V ≥ 1", `d_QK = ${dQK}, d_V = ${dV}`);
  return { nQ: xQ.rows, nKV: xKV.rows, dInQ: xQ.cols, dInKV: xKV.cols, numHeads: H, numKvHeads: G, dQK, dV, dOut: output.cols };
}

/** Flat data of the inputs of `computeHeads` (Float64Arrays, possibly over SharedArrayBuffers). */
export interface HeadInputs {
  xQ: Float64Array;
  xKV: Float64Array;
  wq: readonly Float64Array[];
  wk: readonly Float64Array[];
  wv: readonly Float64Array[];
}

/**
 * Computes Y_h for h in `heads` into `concat` (nQ × H·d_V, row-major). K_g, V_g are computed once
 * per KV group among `heads` (contiguous head ranges share groups under GQA).
 */
export function computeHeads(
  plan: AttentionPlan,
  dims: HeadDims,
  inputs: HeadInputs,
  heads: readonly number[],
  concat: Float64Array,
): void {
  const { nQ, nKV, dInQ, dInKV, numHeads, numKvHeads, dQK, dV } = dims;
  const groupSize = numHeads / numKvHeads;
  const q = new Float64Array(nQ * dQK);
  const y = new Float64Array(nQ * dV);
  let kvGroup = -1;
  const k = new Float64Array(nKV * dQK);
  const v = new Float64Array(nKV * dV);
  const width = numHeads * dV;
  for (const h of heads) {
    const g = Math.floor(h / groupSize);
    if (g !== kvGroup) {
      matmulInto(inputs.xKV, inputs.wk[g], k, nKV, dInKV, dQK, false);
      matmulInto(inputs.xKV, inputs.wv[g], v, nKV, dInKV, dV, false);
      kvGroup = g;
    }
    matmulInto(inputs.xQ, inputs.wq[h], q, nQ, dInQ, dQK, false);
    attentionInto(plan, q, k, v, y, nQ, nKV, dQK, dV);
    for (let i = 0; i < nQ; i++) concat.set(y.subarray(i * dV, (i + 1) * dV), i * width + h * dV);
  }
}
