/**
 * Random-feature adapters (@randattn/sketch features/):
 * - `random-features`: linear-time attention Ŷ = D⁻¹ φ(Q)(φ(K)ᵀV) on every head (causal prefix sums
 *   when the problem is causal);
 * - `kernel-value`: the kernel estimate φ(q)ᵀφ(k) against the exact κ(q, k) = exp(scale·qᵀk) on the
 *   pairs of a `kernel-pairs` problem — the Performer comparison (Choromanski et al. 2021, Lemma 2),
 *   with the closed-form MSE of i.i.d. features as a reference column.
 */
import { ValueError, concatCols } from "@randattn/core";
import { type FeatureKind, drawProjection, featureDimension, randomFeatureAttention, randomFeatures } from "@randattn/sketch";
import type { HeadShape } from "../shape.js";
import type { Cost, MaskSpec } from "../types.js";
import { defineMethod, enumParam, headSeed, intParam, paramsSchema, requireHeads, softmaxScale, sumCosts } from "./common.js";

const FEATURE_KINDS = ["trig", "positive", "hyperbolic"] as const;
/** `random-features` also takes the closed-form optimal exponential features (sketch features/exponential.ts). */
const ATTENTION_FEATURE_KINDS = [...FEATURE_KINDS, "oprf", "derf"] as const;
const PROJECTIONS = ["iid", "orthogonal"] as const;

/** `random-features`: sketch's `randomFeatureAttention` on every head (seed `derive(seed, "head", h)`). */
export const randomFeaturesMethod = defineMethod({
  name: "random-features",
  description:
    "Linear-time attention Ŷ = D⁻¹φ(Q)(φ(K)ᵀV) with m random frequencies per head (sketch `randomFeatureAttention`: trig / positive (FAVOR+) / hyperbolic × iid / orthogonal; causal prefix sums under a causal mask). Softmax kernel only.",
  family: "features",
  paramsSchema: paramsSchema({
    numFrequencies: intParam(1, 1 << 16, 64, "m, random frequencies (features: m positive, 2m trig/hyperbolic)"),
    features: enumParam(
      ATTENTION_FEATURE_KINDS,
      "positive",
      "feature map (oprf / derf: closed-form optimal positive / dense-exponential features)",
    ),
    projection: enumParam(PROJECTIONS, "orthogonal", "i.i.d. or block-orthogonal frequencies"),
    blockSize: intParam(1, 1 << 16, 64, "query block of the causal prefix-sum evaluation"),
    onNonPositiveNormalizer: enumParam(["error", "zero", "keep"], "error", "rows whose estimated normalizer D_i ≤ 0 (trig features)"),
  }),
  exposesWeights: false,
  extraMetrics: [
    { name: "feature_count", description: "F, features per head: m for positive and the exponential maps, 2m for trig/hyperbolic" },
    { name: "non_positive_row_fraction", description: "fraction of query rows (all heads) whose estimated normalizer D_i ≤ 0" },
  ],
  estimateCost(problem, params) {
    requireHeads(problem, "random-features");
    softmaxScale(problem, "random-features");
    return sumCosts(problem.heads.map((h) => randomFeatureAttentionCost(h, problem.mask, params)));
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "random-features");
    const scale = softmaxScale(problem, "random-features");
    const mask = problem.mask ? (problem.mask.offset === undefined ? { kind: "causal" as const } : { ...problem.mask }) : undefined;
    const results = problem.heads.map((h, i) =>
      randomFeatureAttention(
        h.queries,
        h.keys,
        h.values,
        {
          numFrequencies: params.numFrequencies,
          features: params.features,
          projection: params.projection,
          blockSize: params.blockSize,
          onNonPositiveNormalizer: params.onNonPositiveNormalizer,
          ...(scale === undefined ? {} : { kernel: { kind: "softmax" as const, scale } }),
          ...(mask ? { mask } : {}),
        },
        headSeed(seed, i),
      ),
    );
    let bad = 0;
    let rows = 0;
    for (const r of results) {
      bad += r.nonPositiveRows.length;
      rows += r.output.rows;
    }
    return {
      output: concatCols(results.map((r) => r.output)),
      cost: sumCosts(results.map((r) => r.cost)),
      extras: { feature_count: results[0].featureCount, non_positive_row_fraction: bad / rows },
    };
  },
});

/**
 * The cost sketch's `randomFeatureAttention` reports for one head (its accounting, features/attention.ts):
 * both maps 2·(N_Q+N_KV)·d·m + (N_Q+N_KV)·F (+ the exponential maps' parameters), then either the
 * bidirectional state φ(K)ᵀV and its N_Q products, or the causal prefix sums block by block (the
 * same loop over query blocks, so the diagonal bands are counted exactly), and the N_Q·d_V division.
 */
export function randomFeatureAttentionCost(
  h: HeadShape,
  mask: MaskSpec | null,
  params: { numFrequencies: number; features: string; blockSize: number },
): Cost {
  const m = params.numFrequencies;
  const exponential = params.features === "oprf" || params.features === "derf";
  const F = exponential ? m : featureDimension(params.features as FeatureKind, m);
  const nQ = h.queries.rows;
  const nK = h.keys.rows;
  const d = h.queries.cols;
  const dV = h.values.cols;
  const parameterFlops = exponential
    ? 3 * (nQ + nK) * d + 2 * m * d + (params.features === "derf" ? 4 * (nQ + nK) * d * d + 50 * d ** 3 : 0)
    : 0;
  let flops = 2 * (nQ + nK) * d * m + (nQ + nK) * F + parameterFlops;
  let floatsStored = m * d + (nQ + nK) * F + F * dV + F;
  if (!mask) {
    flops += 2 * nK * F * dV + nK * F + 2 * nQ * F * dV + 2 * nQ * F;
  } else {
    const offset = mask.offset ?? nK - nQ;
    const blockSize = params.blockSize;
    floatsStored += blockSize * blockSize;
    const clamp = (v: number) => Math.max(0, Math.min(nK, v));
    let stateEnd = 0;
    for (let i0 = 0; i0 < nQ; i0 += blockSize) {
      const i1 = Math.min(nQ, i0 + blockSize);
      const b = i1 - i0;
      const prefixEnd = clamp(offset + i0 + 1);
      if (prefixEnd > stateEnd) {
        const t = prefixEnd - stateEnd;
        flops += 2 * t * F * dV + t * F;
        stateEnd = prefixEnd;
      }
      if (stateEnd > 0) flops += 2 * b * F * dV + 2 * b * F;
      const t = clamp(offset + i1) - prefixEnd;
      if (t > 0) flops += 2 * b * t * F + 2 * b * t * dV + b * t;
    }
  }
  flops += nQ * dV;
  if (params.features === "derf") floatsStored += 2 * d * d;
  return { flops, floatsStored };
}

/**
 * The Performer closed-form MSE of one pair for m i.i.d. frequencies (Lemma 2), with x, y the
 * scaled vectors, z = x + y, Δ = x − y and SM = e^{xᵀy}:
 *   positive (1/m)e^{‖z‖²}SM²(1 − e^{−‖z‖²}); trig (1/(2m))e^{‖z‖²}SM⁻²(1 − e^{−‖Δ‖²})²;
 *   hyperbolic ½(1 − e^{−‖z‖²})·MSE_positive.
 * (sketch's features tests check these against Monte Carlo; see packages/sketch/docs/features.md.)
 */
export function performerMse(features: FeatureKind, m: number, x: Float64Array, y: Float64Array): number {
  let xy = 0;
  let z2 = 0;
  let d2 = 0;
  for (let j = 0; j < x.length; j++) {
    xy += x[j] * y[j];
    z2 += (x[j] + y[j]) ** 2;
    d2 += (x[j] - y[j]) ** 2;
  }
  const positive = (Math.exp(z2 + 2 * xy) * -Math.expm1(-z2)) / m;
  if (features === "positive") return positive;
  if (features === "hyperbolic") return 0.5 * -Math.expm1(-z2) * positive;
  return (Math.exp(z2 - 2 * xy) * Math.expm1(-d2) ** 2) / (2 * m);
}

/** Cost of `kernel-value`: both maps (2·n·d·m + n·F each), the n dot products (2·n·F); Ω and both feature matrices stored. */
function kernelValueCost(n: number, d: number, m: number, featureDim: number) {
  return { flops: 2 * (2 * n * d * m + n * featureDim) + 2 * n * featureDim, floatsStored: m * d + 2 * n * featureDim };
}

/** `kernel-value`: φ(q)ᵀφ(k) against κ(q, k) on a `kernel-pairs` problem (one Ω per trial). */
export const kernelValue = defineMethod({
  name: "kernel-value",
  description:
    "Kernel estimate φ(q_i)ᵀφ(k_i) of κ = exp(scale·q_iᵀk_i) on a kernel-pairs problem (sketch `drawProjection` + `randomFeatures`, one Ω per trial); no attention output — the MSE columns and the Performer closed form are extra columns.",
  family: "kernel",
  paramsSchema: paramsSchema({
    numFrequencies: intParam(1, 1 << 16, 64, "m, random frequencies"),
    features: enumParam(FEATURE_KINDS, "positive", "feature map"),
    projection: enumParam(PROJECTIONS, "iid", "i.i.d. or block-orthogonal frequencies"),
  }),
  exposesWeights: false,
  extraMetrics: [
    { name: "feature_count", description: "F, features: m for positive, 2m for trig/hyperbolic" },
    { name: "kernel_mse", description: "mean over pairs of (φ(q)ᵀφ(k) − κ(q,k))²" },
    { name: "kernel_rel_mse", description: "mean over pairs of ((φ(q)ᵀφ(k) − κ)/κ)²" },
    { name: "performer_mse", description: "Performer closed-form MSE (i.i.d. frequencies; empty for orthogonal), mean over pairs" },
    { name: "performer_rel_mse", description: "Performer closed-form MSE / κ², mean over pairs (i.i.d. only)" },
  ],
  estimateCost(problem, params) {
    const pairs = problem.kernelPairs;
    if (!pairs) throw new ValueError("problem", 'the kernel-pairs problem for method "kernel-value"', "a problem without kernel pairs");
    const m = params.numFrequencies;
    return kernelValueCost(pairs.queries.rows, pairs.queries.cols, m, featureDimension(params.features, m));
  },
  run(problem, params, _context, seed) {
    const pairs = problem.kernelPairs;
    if (!pairs) throw new ValueError("problem", 'the kernel-pairs problem for method "kernel-value"', "a problem without kernel pairs");
    const scale = softmaxScale(problem, "kernel-value") ?? 1 / Math.sqrt(pairs.queries.cols);
    const { features, projection, numFrequencies: m } = params;
    const { rows: n, cols: d } = pairs.queries;
    const omega = drawProjection(m, d, { projection }, seed);
    const kernel = { kind: "softmax" as const, scale };
    // Row shifts keep exp() finite at large norms; the estimate is f_q·f_k·e^{shift_q + shift_k}.
    const fq = randomFeatures(pairs.queries, omega, { features, kernel, shift: "row" });
    const fk = randomFeatures(pairs.keys, omega, { features, kernel, shift: "row" });
    const width = fq.features.cols;
    const rs = Math.sqrt(scale);
    let mse = 0;
    let rel = 0;
    let theory = 0;
    let theoryRel = 0;
    const x = new Float64Array(d);
    const y = new Float64Array(d);
    for (let i = 0; i < n; i++) {
      let dot = 0;
      let qk = 0;
      for (let f = 0; f < width; f++) dot += fq.features.data[i * width + f] * fk.features.data[i * width + f];
      for (let j = 0; j < d; j++) {
        x[j] = rs * pairs.queries.data[i * d + j];
        y[j] = rs * pairs.keys.data[i * d + j];
        qk += x[j] * y[j];
      }
      const estimate = dot * Math.exp(fq.logScale[i] + fk.logScale[i]);
      const exact = Math.exp(qk);
      mse += (estimate - exact) ** 2;
      rel += ((estimate - exact) / exact) ** 2;
      if (projection === "iid") {
        const t = performerMse(features, m, x, y);
        theory += t;
        theoryRel += t / (exact * exact);
      }
    }
    const iid = projection === "iid";
    const featureDim = featureDimension(features, m);
    return {
      output: null,
      cost: kernelValueCost(n, d, m, featureDim),
      extras: {
        feature_count: featureDim,
        kernel_mse: mse / n,
        kernel_rel_mse: rel / n,
        performer_mse: iid ? theory / n : null,
        performer_rel_mse: iid ? theoryRel / n : null,
      },
    };
  },
});
