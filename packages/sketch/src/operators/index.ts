/**
 * Sketching operators (RandBLAS semantics): immutable distributions + seeded, lazily drawn
 * operators — Gaussian, Rademacher, SRHT, CountSketch, sparse sign, row samplers — with cost reports.
 * Explicit list (issue 9): `validateDistribution` and `nextPowerOfTwo` stay internal.
 */
export type {
  Cost,
  CountSketchDistribution,
  GaussianSketchDistribution,
  RademacherSketchDistribution,
  RowSamplingOperator,
  RowSamplingScheme,
  RowSamplingSketchDistribution,
  SketchDistribution,
  SketchKind,
  SketchOperator,
  SparseSignSketchDistribution,
  SrhtSketchDistribution,
} from "./types.js";
export {
  type LeverageOptions,
  type RowSamplerOptions,
  type SketchScaleOptions,
  type SparseSignOptions,
  type WeightedRowSamplerOptions,
  countSketch,
  gaussianSketch,
  leverageScoreRowSampler,
  leverageScores,
  rademacherSketch,
  sparseSignSketch,
  squaredNormRowSampler,
  srhtSketch,
  uniformRowSampler,
  weightedRowSampler,
} from "./distributions.js";
export { fwhtInPlace, fwhtRowsInPlace } from "./fwht.js";
export { createSketch } from "./create.js";
