/**
 * Deterministic top-k baseline: each query keeps its k largest weights W[i,j] (ties → lower j) and
 *   Ŷ_i = Σ_{j∈top_k(i)} W[i,j] V_j / (renormalize ? Σ_{j∈top_k(i)} W[i,j] : 1).
 * With W = P and renormalization this is exact softmax attention restricted to each query's top-k
 * keys; with k = N_KV it is exact.
 */
import { type Kernel, Matrix, NumericalError, attentionWeights } from "@randattn/core";
import { assertInteger, assertOptions } from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";
import { checkWeightsValues } from "./values.js";

/** Options of {@link topKValueProduct} / {@link topKAttention}. */
export interface TopKOptions {
  /** Divide by the kept weights' sum (top-k attention) rather than keep P's values. @default true */
  renormalize?: boolean;
}

/** Result of the top-k baseline. */
export interface TopKResult {
  output: Matrix;
  cost: Cost;
  /** The kept keys of each query, N_Q·k row-major, in decreasing weight. */
  indices: Int32Array;
}

/** Top-k baseline on a given weight matrix W (N_Q × N_KV) and values V (N_KV × d_V). */
export function topKValueProduct(weights: Matrix, values: Matrix, k: number, options: TopKOptions = {}): TopKResult {
  assertOptions(options, "options");
  checkWeightsValues(weights, values);
  const n = weights.cols;
  assertInteger(k, "k", 1, n);
  const renormalize = options.renormalize ?? true;
  const nQ = weights.rows;
  const dV = values.cols;
  const output = new Matrix(nQ, dV);
  const indices = new Int32Array(nQ * k);
  const order = Array.from({ length: n }, (_, j) => j);
  for (let i = 0; i < nQ; i++) {
    const row = weights.data.subarray(i * n, (i + 1) * n);
    order.sort((a, b) => row[b] - row[a] || a - b);
    let sum = 0;
    for (let t = 0; t < k; t++) {
      const j = order[t];
      indices[i * k + t] = j;
      const w = row[j];
      sum += w;
      for (let c = 0; c < dV; c++) output.data[i * dV + c] += w * values.data[j * dV + c];
    }
    if (renormalize) {
      if (!(sum > 0)) throw new NumericalError("weights", `a positive sum of the top-${k} weights of row ${i}`, String(sum));
      for (let c = 0; c < dV; c++) output.data[i * dV + c] /= sum;
    }
  }
  const sortFlops = nQ * n * Math.ceil(Math.log2(n + 1));
  return { output, cost: { flops: sortFlops + 2 * nQ * k * dV + nQ * k + (renormalize ? nQ * dV : 0), floatsStored: 2 * nQ * k }, indices };
}

/** Top-k attention: P = attentionWeights(Q, K) (formed, N_Q × N_KV) then {@link topKValueProduct}. */
export function topKAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  k: number,
  options: TopKOptions & { kernel?: Kernel } = {},
): TopKResult {
  assertOptions(options, "options");
  const p = attentionWeights(queries, keys, { kernel: options.kernel });
  const r = topKValueProduct(p, values, k, options);
  const nQ = queries.rows;
  const n = keys.rows;
  return { ...r, cost: { flops: r.cost.flops + 2 * nQ * n * queries.cols + 3 * nQ * n, floatsStored: r.cost.floatsStored + nQ * n } };
}
