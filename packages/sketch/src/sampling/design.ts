/**
 * Sampling designs for estimating a sum Σ_j y_j (y_j a number, a row of V, a column of A…) from s
 * sampled indices. Every design returns indices i_1…i_s and weights c_1…c_s such that
 * Σ_t c_t·y_{i_t} is UNBIASED for Σ_j y_j, for any fixed y:
 *
 * - `"with-replacement"`: i_t i.i.d. from p (alias method), c_t = 1/(s p_{i_t}) — the classical
 *   Drineas–Kannan–Mahoney estimator, whose expected squared error has the closed form of
 *   `dkmExpectedSquaredError`.
 * - `"horvitz-thompson"`: s distinct indices by randomized systematic πps sampling, inclusion
 *   probabilities π_j = min(1, c p_j) with Σ π_j = s (random/categorical.ts), c_t = 1/π_{i_t}.
 *   Indices with π_j = 1 are always taken (weight 1): without replacement never pays twice for one row.
 * - `"des-raj"`: s distinct indices in draw order by successive sampling (Efraimidis–Spirakis keys);
 *   Des Raj (1956): t_1 = y_1/p_1, t_k = Σ_{l<k} y_l + y_k (1 − Σ_{l<k} p_l)/p_k are each unbiased,
 *   and their mean is, per sampled index k (1-based), the weight
 *   c_k = (1/s)·[(1 − Σ_{l<k} p_{i_l})/p_{i_k} + (s − k)].
 */
import type { SeedKey } from "@randattn/core";
import { assertInteger, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import { AliasTable, sampleWithoutReplacement, systematicSample } from "../random/categorical.js";
import { supportSize } from "../random/probabilities.js";

/** How the s indices are drawn and weighted (see the module comment). */
export type SamplingDesign = "with-replacement" | "horvitz-thompson" | "des-raj";

/** All designs, for validation and sweeps. */
export const SAMPLING_DESIGNS: readonly SamplingDesign[] = ["with-replacement", "horvitz-thompson", "des-raj"];

/** A drawn sample: indices and the weights making Σ_t weights[t]·y_{indices[t]} unbiased for Σ_j y_j. */
export interface WeightedSample {
  indices: Int32Array;
  weights: Float64Array;
}

/** Options of {@link drawWeightedSample}. */
export interface WeightedSampleOptions {
  /** s, the number of indices (≥ 1; ≤ p's support for the without-replacement designs). */
  samples: number;
  /** How indices are drawn and weighted. */
  design: SamplingDesign;
}

/**
 * Draws `options.samples` indices from the probability vector `p` (already validated) with `options.design`.
 * @throws ValueError when a without-replacement design asks for more indices than p's support.
 */
export function drawWeightedSample(p: Float64Array, options: WeightedSampleOptions, seed: SeedKey): WeightedSample {
  assertRequiredOptions(options, "options");
  const { samples: s, design } = options;
  assertOneOf(design, "options.design", SAMPLING_DESIGNS);
  if (design === "with-replacement") {
    assertInteger(s, "options.samples", 1);
    const indices = AliasTable.fromProbabilities(p).sample({ count: s }, seed);
    const weights = new Float64Array(s);
    for (let t = 0; t < s; t++) weights[t] = 1 / (s * p[indices[t]]);
    return { indices, weights };
  }
  assertInteger(s, "options.samples", 1, supportSize(p));
  if (design === "horvitz-thompson") {
    const { indices, inclusion } = systematicSample(p, { count: s }, seed);
    return { indices, weights: Float64Array.from(indices, (j) => 1 / inclusion[j]) };
  }
  const indices = sampleWithoutReplacement(p, { count: s }, seed);
  const weights = new Float64Array(s);
  let before = 0; // Σ_{l<k} p_{i_l}
  for (let k = 0; k < s; k++) {
    const pk = p[indices[k]];
    weights[k] = (Math.max(0, 1 - before) / pk + (s - 1 - k)) / s;
    before += pk;
  }
  return { indices, weights };
}
