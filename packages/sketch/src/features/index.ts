/**
 * Random features for the attention kernel κ and linear-time attention (docs/features.md).
 */
export { type FrequencyDistribution, type ProjectionKind, type ProjectionOptions, drawProjection } from "./projection.js";
export {
  type FeatureKernel,
  type FeatureKind,
  type FeatureShift,
  type RandomFeaturesOptions,
  type RandomFeaturesResult,
  type ResolvedKernel,
  featureDimension,
  randomFeatures,
  resolveKernel,
} from "./maps.js";
export {
  type NonPositiveNormalizerPolicy,
  type RandomFeatureAttentionOptions,
  type RandomFeatureAttentionResult,
  type RandomFeatureMask,
  randomFeatureAttention,
} from "./attention.js";
export {
  type ComplexGerfOptions,
  type ComplexGerfParameters,
  type PairStatistics,
  complexGerfObjective,
  complexGerfParameters,
  complexGerfVariance,
  evaluateComplexGerfFeatures,
  optimalComplexGerf,
  pairStatistics,
} from "./complex-exponential.js";
export {
  type DenseExponentialForm,
  denseExponentialForm,
  denseExponentialLogMoments,
  derfLogSecondMoment,
  meanPairSecondMoment,
  EXPONENTIAL_FEATURE_KINDS,
  type ExponentialFeatureKind,
  type ExponentialFeatureParameters,
  evaluateExponentialFeatures,
  exponentialFeatureParameters,
  exponentialFeatureVariance,
  gerfLogSecondMoment,
  meanPairSquaredNorm,
  oprfParameter,
  transformForFeatures,
} from "./exponential.js";
