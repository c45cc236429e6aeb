/**
 * DeepSeekMoE's feed-forward block (DeepSeek-V2 §2.2, HF `DeepseekV2MoE`): a softmax router over
 * the routed experts, top-k experts per token, each expert's GLU FFN on the tokens routed to it,
 * the weighted outputs summed in expert order, plus the shared experts on every token.
 *
 * Prefill path (issue 14): every token is routed in one pass over the router logits, the top k of
 * E found by selection (k passes of E, not a sort of E per token), the tokens grouped per expert
 * by index lists, each expert's rows gathered into one reused block for one joined gate/up GEMM,
 * and the products scatter-added with their weights — the same operations per entry, in the same
 * order, as the per-expert `selectRows` + `gluForward` form it replaces, so the same bits.
 */
import { ShapeError } from "../errors.js";
import { feedForward } from "../layers/ffn.js";
import { matmulTransB } from "../linalg/matmul.js";
import { selectRows } from "../linalg/ops.js";
import { Matrix } from "../matrix.js";
import type { MoeFfn } from "./build.js";
import { type JoinedGlu, type ProjectionPrecision, type ScratchSlot, gluForward, scratch } from "./fused.js";

/** Expert choices of a MoE layer: per new token, the k experts and their weights. */
export interface RouterCapture {
  readonly experts: number[][];
  readonly weights: number[][];
}

/** Indices of the k largest entries of `s` (descending; lower index first on ties), by a full sort. */
function topKSorted(s: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: s.length }, (_, i) => i)
    .sort((i, j) => s[j] - s[i] || i - j)
    .slice(0, k);
}

/**
 * The k largest of s[0 … n) into out[o … o + k): descending, the lower index first on ties —
 * `topKSorted`'s order — by k selection passes (O(k·n), k ≤ n small: top-2 of 4 … top-6 of 160).
 * A NaN score has no place in that order (the sort's comparator treats it as a tie with
 * everything), so a row holding one takes the sort itself, which decides exactly as before.
 */
function topKInto(s: Float64Array, n: number, k: number, out: Int32Array, o: number): void {
  for (let e = 0; e < n; e++) {
    if (Number.isNaN(s[e])) {
      const idx = topKSorted(s.subarray(0, n), k);
      for (let r = 0; r < k; r++) out[o + r] = idx[r];
      return;
    }
  }
  for (let r = 0; r < k; r++) {
    let best = -1;
    for (let e = 0; e < n; e++) {
      if (best >= 0 && !(s[e] > s[best])) continue;
      // Skip the ones already taken (k is small: a linear check).
      let taken = false;
      for (let q = 0; q < r; q++) if (out[o + q] === e) taken = true;
      if (!taken) best = e;
    }
    out[o + r] = best;
  }
}

/** Per token, the k chosen experts (in rank order) and their weights: t × k each. */
export interface Routing {
  readonly experts: Int32Array;
  readonly weights: Float64Array;
}

/**
 * Router probabilities softmax(x W_gᵀ) per token (float64, as before: max-shifted exp, the sum in
 * expert order, then each divided), the top k (greedy, or group-limited: only experts of the
 * `topk_group` groups with the largest maximum score), weights renormalized (`norm_topk_prob`,
 * k > 1; summed in rank order + 1e-20) or scaled by `routed_scaling_factor`.
 */
export function route(ffn: MoeFfn, x: Matrix): Routing {
  return routeLogits(ffn, matmulTransB(x, ffn.gate).data, x.rows);
}

/**
 * `route` from the router logits x W_gᵀ (t × E, row-major) — the resident MoE computes them in
 * its kernel arena (pretrained/residentMla.ts).
 */
export function routeLogits(ffn: MoeFfn, logits: Float64Array, t: number): Routing {
  const E = ffn.experts.length;
  const k = ffn.topK;
  const experts = new Int32Array(t * k);
  const weights = new Float64Array(t * k);
  const p = new Float64Array(E);
  const scores = new Float64Array(E);
  const perGroup = E / ffn.numGroups;
  const groupMax = new Float64Array(ffn.numGroups);
  const normalize = k > 1 && ffn.normalizeTopK;
  for (let i = 0; i < t; i++) {
    const r = i * E;
    let max = Number.NEGATIVE_INFINITY;
    for (let e = 0; e < E; e++) max = Math.max(max, logits[r + e]);
    let z = 0;
    for (let e = 0; e < E; e++) {
      p[e] = Math.exp(logits[r + e] - max);
      z += p[e];
    }
    for (let e = 0; e < E; e++) p[e] /= z;
    if (ffn.method === "group_limited_greedy") {
      for (let g = 0; g < ffn.numGroups; g++) {
        let m = Number.NEGATIVE_INFINITY;
        for (let e = g * perGroup; e < (g + 1) * perGroup; e++) m = Math.max(m, p[e]);
        groupMax[g] = m;
      }
      const keep = new Set(topKSorted(groupMax, ffn.topkGroups));
      for (let e = 0; e < E; e++) scores[e] = keep.has(Math.floor(e / perGroup)) ? p[e] : 0;
    } else scores.set(p);
    const o = i * k;
    topKInto(scores, E, k, experts, o);
    if (normalize) {
      let s = 0;
      for (let q = 0; q < k; q++) s += scores[experts[o + q]];
      s += 1e-20;
      for (let q = 0; q < k; q++) weights[o + q] = scores[experts[o + q]] / s;
    } else {
      for (let q = 0; q < k; q++) weights[o + q] = scores[experts[o + q]] * ffn.routedScaling;
    }
  }
  return { experts, weights };
}

/**
 * The routed tokens grouped per expert (t tokens, k experts each, E experts): expert e's tokens at
 * rows[count[e] … count[e + 1]) ascending, with their routing weights (each token names an expert
 * at most once among its k).
 */
export function groupByExpert(
  r: { readonly experts: Int32Array; readonly weights: Float64Array },
  E: number,
  k: number,
  t: number,
): { rows: Int32Array; rowWeights: Float64Array; count: Int32Array } {
  const count = new Int32Array(E + 1);
  for (let q = 0; q < t * k; q++) count[r.experts[q] + 1]++;
  for (let e = 0; e < E; e++) count[e + 1] += count[e];
  const rows = new Int32Array(t * k);
  const rowWeights = new Float64Array(t * k);
  const fill = count.slice(0, E);
  for (let i = 0; i < t; i++) {
    for (let q = 0; q < k; q++) {
      const e = r.experts[i * k + q];
      rows[fill[e]] = i;
      rowWeights[fill[e]++] = r.weights[i * k + q];
    }
  }
  return { rows, rowWeights, count };
}

/** out[rows[r0 + r], :] += rowWeights[r0 + r] · y[r, :] for the te rows of one expert's output y (te×d). */
export function scatterAddWeighted(
  out: Float64Array,
  y: Float64Array | Float32Array,
  rows: Int32Array,
  rowWeights: Float64Array,
  r0: number,
  te: number,
  d: number,
): void {
  for (let r = 0; r < te; r++) {
    const w = rowWeights[r0 + r];
    const ob = rows[r0 + r] * d;
    for (let j = 0; j < d; j++) out[ob + j] += w * y[r * d + j];
  }
}

/**
 * DeepSeekMoE: router probabilities softmax(x W_gᵀ), top-k experts per token (greedy, or
 * group-limited: only experts of the `topk_group` groups with the largest maximum score), weights
 * renormalized (`norm_topk_prob`, k > 1) or scaled by `routed_scaling_factor`; the routed outputs
 * are summed in expert order, then the shared experts are added (DeepSeek-V2's MoE forward).
 * `outSlot` (internal): the output in that reused scratch buffer instead of a new matrix.
 */
export function moeForward(
  ffn: MoeFfn,
  x: Matrix,
  cap?: { router?: RouterCapture },
  tensors?: ReadonlySet<string>,
  joined?: { readonly experts?: readonly (JoinedGlu | undefined)[]; readonly shared?: JoinedGlu },
  precision: ProjectionPrecision = "float64",
  outSlot?: ScratchSlot,
): Matrix {
  const E = ffn.experts.length;
  if (ffn.gate.rows !== E) throw new ShapeError("ffn.gate", `${E}×d (one row per expert)`, ffn.gate.shape);
  const t = x.rows;
  const d = x.cols;
  const k = ffn.topK;
  const r = route(ffn, x);
  const { experts, weights } = r;
  const { rows, rowWeights, count } = groupByExpert(r, E, k, t);
  const out = outSlot === undefined ? new Matrix(t, d) : new Matrix(t, d, scratch(outSlot, t * d).fill(0));
  const o = out.data;
  const xd = x.data;
  for (let e = 0; e < E; e++) {
    const r0 = count[e];
    const te = count[e + 1] - r0;
    if (te === 0) continue;
    const je = joined?.experts?.[e];
    let y: Matrix;
    if (je) {
      // The expert's tokens gathered into one reused block (its GLU reads it before the next gather).
      const g = new Matrix(te, d, scratch("moeRows", te * d));
      for (let r = 0; r < te; r++) g.data.set(xd.subarray(rows[r0 + r] * d, (rows[r0 + r] + 1) * d), r * d);
      y = gluForward(g, je, precision, "moeExpert");
    } else y = feedForward(selectRows(x, rows.subarray(r0, r0 + te)), ffn.experts[e]);
    scatterAddWeighted(o, y.data, rows, rowWeights, r0, te, d);
  }
  if (cap && tensors?.has("router")) {
    cap.router = {
      experts: Array.from({ length: t }, (_, i) => Array.from(experts.subarray(i * k, (i + 1) * k))),
      weights: Array.from({ length: t }, (_, i) => Array.from(weights.subarray(i * k, (i + 1) * k))),
    };
  }
  if (!ffn.shared) return out;
  const s = joined?.shared ? gluForward(x, joined.shared, precision, "moeExpert") : feedForward(x, ffn.shared);
  const sd = s.data;
  for (let i = 0; i < o.length; i++) o[i] += sd[i];
  return out;
}
