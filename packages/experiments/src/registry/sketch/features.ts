/**
 * Random-feature adapters (@randattn/sketch features/):
 * - `random-features`: linear-time attention Ŷ = D⁻¹ φ(Q)(φ(K)ᵀV) on every head (causal prefix sums
 *   when the problem is causal);
 * - `kernel-value`: the kernel estimate φ(q)ᵀφ(k) against the exact κ(q, k) = exp(scale·qᵀk) on the
 *   pairs of a `kernel-pairs` problem — the Performer comparison (Choromanski et al. 2021, Lemma 2),
 *   with the closed-form MSE of i.i.d. features as a reference column.
 */
import { Matrix, ValueError, concatCols } from "@randattn/core";
import {
  type ExponentialFeatureKind,
  type FeatureKind,
  complexGerfParameters,
  complexGerfVariance,
  drawProjection,
  evaluateComplexGerfFeatures,
  evaluateExponentialFeatures,
  exponentialFeatureParameters,
  exponentialFeatureVariance,
  featureDimension,
  randomFeatureAttention,
  randomFeatures,
  transformForFeatures,
} from "@randattn/sketch";
import type { HeadShape } from "../shape.js";
import type { Cost, MaskSpec } from "../types.js";
import {
  defineMethod,
  enumParam,
  headSeed,
  intParam,
  nonPositiveRowFraction,
  paramsSchema,
  requireHeads,
  softmaxScale,
  sumCosts,
} from "./common.js";

const FEATURE_KINDS = ["trig", "positive", "hyperbolic"] as const;
/**
 * `random-features` also takes the closed-form optimal exponential features (sketch
 * features/exponential.ts: OPRF, and FAVOR#'s ADERF — also under its older name `derf` — SADERF and
 * SDERF) and the complex GERF with numerically optimized s and A (features/complex-exponential.ts),
 * whose m complex features are stored as F = 2m floats (feature_count, flops and floats stored count both).
 */
const ATTENTION_FEATURE_KINDS = [...FEATURE_KINDS, "oprf", "derf", "aderf", "saderf", "sderf", "complex-gerf"] as const;
const PROJECTIONS = ["iid", "orthogonal"] as const;

/** `random-features`: sketch's `randomFeatureAttention` on every head (seed `derive(seed, "head", h)`). */
export const randomFeaturesMethod = defineMethod({
  name: "random-features",
  description:
    "Linear-time attention Ŷ = D⁻¹φ(Q)(φ(K)ᵀV) with m random frequencies per head (sketch `randomFeatureAttention`: trig / positive (FAVOR+) / hyperbolic / OPRF / FAVOR# ADERF, SADERF, SDERF / complex GERF × iid / orthogonal; causal prefix sums under a causal mask). Softmax kernel only.",
  family: "features",
  paramsSchema: paramsSchema({
    numFrequencies: intParam(1, 1 << 16, 64, "m, random frequencies (features: m positive, 2m trig/hyperbolic)"),
    features: enumParam(
      ATTENTION_FEATURE_KINDS,
      "positive",
      "feature map (oprf: closed-form optimal positive; aderf (= derf) / saderf / sderf: FAVOR#'s dense-exponential features; complex-gerf: complex GERF, F = 2m)",
    ),
    projection: enumParam(PROJECTIONS, "orthogonal", "i.i.d. or block-orthogonal frequencies"),
    blockSize: intParam(1, 1 << 16, 64, "query block of the causal prefix-sum evaluation"),
    onNonPositiveNormalizer: enumParam(["error", "zero", "keep"], "error", "rows whose estimated normalizer D_i ≤ 0 (trig features)"),
  }),
  exposesWeights: false,
  extraMetrics: [
    {
      name: "feature_count",
      description:
        "F, real features per head: m for positive and the real exponential maps, 2m for trig/hyperbolic/complex-gerf (two floats per complex feature)",
    },
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
    return {
      output: concatCols(results.map((r) => r.output)),
      cost: sumCosts(results.map((r) => r.cost)),
      extras: { feature_count: results[0].featureCount, non_positive_row_fraction: nonPositiveRowFraction(results) },
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
  const nQ = h.queries.rows;
  const nK = h.keys.rows;
  const d = h.queries.cols;
  const dV = h.values.cols;
  const map = exponentialMapCost(params.features, nQ + nK, d, m);
  const F = map ? map.featureCount : featureDimension(params.features as FeatureKind, m);
  const parameterFlops = map ? map.parameterFlops : 0;
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
  if (map) floatsStored += map.floats;
  return { flops, floatsStored };
}

/** What an exponential map adds to the classic accounting (sketch features/attention.ts). */
interface ExponentialMapCost {
  featureCount: number;
  parameterFlops: number;
  /** Ψ, Ψ⁻ᵀ (ADERF, SADERF: 2d²) or Q₃ᵀ and a (SDERF: d² + d). */
  floats: number;
}

/**
 * Objective evaluations of sketch's `optimalComplexGerf` for both s (as `randomFeatureAttention` runs
 * it when `complexGerf` is not given): 1 + 14 rounds × 17² per s. estimate-cost.test.ts checks it
 * against the recorded cost.
 */
const COMPLEX_GERF_EVALUATIONS = 2 * (1 + 14 * 17 * 17);

/**
 * sketch's parameter accounting for the exponential maps on n = N_Q + N_KV vectors of dimension d
 * with m frequencies: ρ (3nd) and ‖ω‖² (2md) for all; ADERF the second moments, ≈ 5
 * eigendecompositions and Ψx, Ψ⁻ᵀy; SADERF the squares and the diagonal scaling; SDERF M₃, one
 * eigendecomposition and the rotation; the complex GERF its search (≈ 40 flops per evaluation) and
 * a cos/sin pair per complex feature, with F = 2m. null for the classic maps.
 */
function exponentialMapCost(features: string, n: number, d: number, m: number): ExponentialMapCost | null {
  const base = 3 * n * d + 2 * m * d;
  switch (features) {
    case "oprf":
      return { featureCount: m, parameterFlops: base, floats: 0 };
    case "derf":
    case "aderf":
      return { featureCount: m, parameterFlops: base + 4 * n * d * d + 50 * d ** 3, floats: 2 * d * d };
    case "saderf":
      return { featureCount: m, parameterFlops: base + 5 * n * d, floats: 2 * d * d };
    case "sderf":
      return { featureCount: m, parameterFlops: base + 4 * n * d * d + 10 * d ** 3 + 2 * n * d * d + n * d, floats: d * d + d };
    case "complex-gerf":
      return { featureCount: 2 * m, parameterFlops: base + 40 * COMPLEX_GERF_EVALUATIONS + n * m, floats: 0 };
    default:
      return null;
  }
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

/** Kinds of `kernel-value` beyond the classic maps: parameters from all the pairs' queries and keys. */
const KERNEL_EXPONENTIAL_KINDS = ["oprf", "aderf", "saderf", "sderf", "complex-gerf"] as const;

/**
 * Row-shifted features of the exponential kinds for the scaled pairs x, y, with each pair's
 * closed-form variance at m i.i.d. frequencies (features/exponential.ts, complex-exponential.ts).
 */
function exponentialKernelFeatures(
  kind: (typeof KERNEL_EXPONENTIAL_KINDS)[number],
  x: Matrix,
  y: Matrix,
  omega: Matrix,
): { fq: { features: Matrix; logScale: Float64Array }; fk: { features: Matrix; logScale: Float64Array }; variance: (i: number) => number } {
  const d = x.cols;
  const m = omega.rows;
  const row = (z: Matrix, i: number) => z.data.slice(i * d, (i + 1) * d);
  if (kind === "complex-gerf") {
    const p = complexGerfParameters(x, y);
    return {
      fq: evaluateComplexGerfFeatures(x, omega, p, "query", "row"),
      fk: evaluateComplexGerfFeatures(y, omega, p, "key", "row"),
      variance: (i) => complexGerfVariance(p, row(x, i), row(y, i), m),
    };
  }
  const p = exponentialFeatureParameters(kind as ExponentialFeatureKind, x, y);
  const a = p.aDiagonal ?? p.a;
  return {
    fq: evaluateExponentialFeatures(transformForFeatures(p, x, "query"), omega, a, "row"),
    fk: evaluateExponentialFeatures(transformForFeatures(p, y, "key"), omega, a, "row"),
    variance: (i) => exponentialFeatureVariance(p, row(x, i), row(y, i), m),
  };
}

/** Cost of `kernel-value`: both maps (2·n·d·m + n·F each), the n dot products (2·n·F); Ω and both feature matrices stored. */
function kernelValueCost(n: number, d: number, m: number, featureDim: number, map: ExponentialMapCost | null = null) {
  // The exponential maps add their parameters (computed from all 2n vectors of the pairs).
  return {
    flops: 2 * (2 * n * d * m + n * featureDim) + 2 * n * featureDim + (map ? map.parameterFlops : 0),
    floatsStored: m * d + 2 * n * featureDim + (map ? map.floats : 0),
  };
}

/** `kernel-value`: φ(q)ᵀφ(k) against κ(q, k) on a `kernel-pairs` problem (one Ω per trial). */
export const kernelValue = defineMethod({
  name: "kernel-value",
  description:
    "Kernel estimate φ(q_i)ᵀφ(k_i) of κ = exp(scale·q_iᵀk_i) on a kernel-pairs problem (sketch `drawProjection` + `randomFeatures`, or the exponential maps with parameters from all pairs, one Ω per trial); no attention output — the MSE columns and the closed-form MSE are extra columns.",
  family: "kernel",
  paramsSchema: paramsSchema({
    numFrequencies: intParam(1, 1 << 16, 64, "m, random frequencies"),
    features: enumParam(
      [...FEATURE_KINDS, ...KERNEL_EXPONENTIAL_KINDS],
      "positive",
      "feature map (the exponential ones take their closed-form parameters from all the pairs)",
    ),
    projection: enumParam(PROJECTIONS, "iid", "i.i.d. or block-orthogonal frequencies"),
  }),
  exposesWeights: false,
  extraMetrics: [
    {
      name: "feature_count",
      description: "F, features: m for positive and the real exponential maps, 2m for trig/hyperbolic/complex-gerf",
    },
    { name: "kernel_mse", description: "mean over pairs of (φ(q)ᵀφ(k) − κ(q,k))²" },
    { name: "kernel_rel_mse", description: "mean over pairs of ((φ(q)ᵀφ(k) − κ)/κ)²" },
    {
      name: "performer_mse",
      description:
        "closed-form MSE of i.i.d. frequencies, mean over pairs (Performer Lemma 2 for trig/positive/hyperbolic; the GERF/DERF/complex-GERF closed forms for the exponential maps; empty for orthogonal)",
    },
    { name: "performer_rel_mse", description: "Performer closed-form MSE / κ², mean over pairs (i.i.d. only)" },
  ],
  estimateCost(problem, params) {
    const pairs = problem.kernelPairs;
    if (!pairs) throw new ValueError("problem", 'the kernel-pairs problem for method "kernel-value"', "a problem without kernel pairs");
    const m = params.numFrequencies;
    const { rows: n, cols: d } = pairs.queries;
    const map = exponentialMapCost(params.features, 2 * n, d, m);
    return kernelValueCost(n, d, m, map ? map.featureCount : featureDimension(params.features as FeatureKind, m), map);
  },
  run(problem, params, _context, seed) {
    const pairs = problem.kernelPairs;
    if (!pairs) throw new ValueError("problem", 'the kernel-pairs problem for method "kernel-value"', "a problem without kernel pairs");
    const scale = softmaxScale(problem, "kernel-value") ?? 1 / Math.sqrt(pairs.queries.cols);
    const { features, projection, numFrequencies: m } = params;
    const { rows: n, cols: d } = pairs.queries;
    const omega = drawProjection(m, d, { projection }, seed);
    const kernel = { kind: "softmax" as const, scale };
    const rs = Math.sqrt(scale);
    const classic = (FEATURE_KINDS as readonly string[]).includes(features);
    const exp = classic
      ? null
      : exponentialKernelFeatures(
          features as (typeof KERNEL_EXPONENTIAL_KINDS)[number],
          new Matrix(
            n,
            d,
            Float64Array.from(pairs.queries.data, (v) => v * rs),
          ),
          new Matrix(
            n,
            d,
            Float64Array.from(pairs.keys.data, (v) => v * rs),
          ),
          omega,
        );
    // Row shifts keep exp() finite at large norms; the estimate is f_q·f_k·e^{shift_q + shift_k}.
    const fq = exp ? exp.fq : randomFeatures(pairs.queries, omega, { features: features as FeatureKind, kernel, shift: "row" });
    const fk = exp ? exp.fk : randomFeatures(pairs.keys, omega, { features: features as FeatureKind, kernel, shift: "row" });
    const width = fq.features.cols;
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
        const t = exp ? exp.variance(i) : performerMse(features as FeatureKind, m, x, y);
        theory += t;
        theoryRel += t / (exact * exact);
      }
    }
    const iid = projection === "iid";
    const featureDim = width;
    return {
      output: null,
      cost: kernelValueCost(n, d, m, featureDim, exponentialMapCost(features, 2 * n, d, m)),
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
