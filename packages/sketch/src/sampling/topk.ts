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

/**
 * Writes into `out` (length k) the k indices of `row` that come first in the strict total order
 * "larger weight first, ties → lower index", in that order — exactly the first k entries of a full
 * sort with the comparator `row[b] − row[a] || a − b` (the entries are finite, so x − y = 0 iff
 * x = y and the order is total). A size-k heap whose root is the worst kept index does it in
 * O(n log k) instead of the full sort's O(n log n), then the k survivors are sorted (issue 14).
 */
function selectTopK(row: Float64Array, k: number, out: Int32Array): void {
  const n = row.length;
  // before(a, b): a precedes b in the order.
  const before = (a: number, b: number): boolean => row[a] > row[b] || (row[a] === row[b] && a < b);
  // Min-heap under `before` reversed: heap[0] is the index that comes LAST among those kept.
  const heap = out;
  const siftDown = (start: number, size: number): void => {
    let i = start;
    const x = heap[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && before(heap[c], heap[c + 1])) c++;
      if (!before(x, heap[c])) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = x;
  };
  for (let j = 0; j < k; j++) heap[j] = j;
  for (let i = (k >> 1) - 1; i >= 0; i--) siftDown(i, k);
  for (let j = k; j < n; j++) {
    if (before(j, heap[0])) {
      heap[0] = j;
      siftDown(0, k);
    }
  }
  // Heap sort in place: repeatedly move the last-in-order root to the end.
  for (let size = k - 1; size > 0; size--) {
    const t = heap[0];
    heap[0] = heap[size];
    heap[size] = t;
    siftDown(0, size);
  }
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
  const order = new Int32Array(k);
  for (let i = 0; i < nQ; i++) {
    const row = weights.data.subarray(i * n, (i + 1) * n);
    selectTopK(row, k, order);
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
  // Kept as the full sort's count (n·⌈log₂(n+1)⌉ per row) so committed costs stay bit-identical;
  // the selection does O(n log k) comparisons.
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
