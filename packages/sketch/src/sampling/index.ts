/**
 * Row sampling of V (approximate matrix multiplication), ratio estimator, top-k baseline.
 * Explicit list (issue 9): the input checks and probability resolution stay internal.
 */
export { SAMPLING_DESIGNS, type SamplingDesign, type WeightedSample, type WeightedSampleOptions, drawWeightedSample } from "./design.js";
export {
  type MatmulProbabilities,
  type SampledMatmulOptions,
  type SampledMatmulResult,
  dkmExpectedSquaredError,
  optimalMatmulProbabilities,
  sampledMatmul,
  squaredColumnNorms,
  squaredRowNorms,
} from "./matmul.js";
export {
  type SampledValueOptions,
  type SampledValueResult,
  VALUE_SAMPLING_SCHEMES,
  type ValueNormalization,
  type ValueSamplingScheme,
  sampledValueProduct,
  valueSamplingProbabilities,
} from "./values.js";
export { type SampledAttentionOptions, sampledAttention } from "./attention.js";
export { type TopKOptions, type TopKResult, topKAttention, topKValueProduct } from "./topk.js";
export { DEFAULT_DEFENSIVE_WEIGHT, defensiveMixture, needsDefensiveMixture, resolveDefensiveWeight } from "./defensive.js";
