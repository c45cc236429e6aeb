/** Samplers on core's seeded streams: gaussian, rademacher, uniform, categorical (alias; with / without replacement). */
export { type ProbabilityOptions, normalizeWeights, supportSize, validateProbabilities } from "./probabilities.js";
export {
  type GaussianOptions,
  type RademacherOptions,
  type SubsetOptions,
  type UniformIntegersOptions,
  type UniformOptions,
  gaussianArray,
  rademacherArray,
  randomPermutation,
  uniformArray,
  uniformIntegers,
  uniformSubset,
} from "./samplers.js";
export {
  AliasTable,
  type SystematicSample,
  inclusionProbabilities,
  sampleWithReplacement,
  sampleWithoutReplacement,
  systematicSample,
} from "./categorical.js";
