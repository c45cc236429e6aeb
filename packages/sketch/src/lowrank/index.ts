/**
 * Randomized low-rank approximation (docs/lowrank.md): range finder, QB (fixed rank and blocked
 * fixed accuracy), randomized SVD; MLA latent compression, latent-rank reduction, MHA → MLA conversion.
 */
export { type ThinQr, householderQr, luLowerFactor, orthonormalize } from "./householder.js";
export {
  type Orthonormalization,
  type PowerOperator,
  type RangeFinderDriver,
  type RangeFinderOptions,
  type ResolvedRangeFinder,
  type RangeFinderResult,
  type TestMatrixFactory,
  type TestMatrixKind,
  denseOperator,
  powerIterate,
  rangeFinder,
  rangeFinderResolved,
  renormalize,
} from "./rangefinder.js";
export { type BlockedQbOptions, type BlockedQbResult, type QbOptions, type QbResult, blockedQb, qb } from "./qb.js";
export {
  BITS_PER_UNIFORM,
  type PsdColumns,
  type RpCholeskyOptions,
  type RpCholeskyResult,
  type RpCholeskyVariant,
  psdMatrixColumns,
  rpCholesky,
} from "./rpcholesky.js";
export {
  type ExactSvdOptions,
  type ExactSvdResult,
  type RandomizedSvdResult,
  type SvdFactors,
  exactSingularValues,
  exactSvd,
  randomizedSvd,
} from "./svd.js";
export {
  type CompressedLatent,
  type CompressedMlaAttentionOptions,
  type CompressedMlaAttentionResult,
  type LatentRankReductionOptions,
  type LatentRankReductionReport,
  type LowRankOptions,
  type MultiHeadToMlaOptions,
  type MultiHeadToMlaReport,
  type SvdMethod,
  compressLatent,
  compressedMlaAttention,
  foldLatentBasis,
  multiHeadToMla,
  reduceLatentRank,
} from "./mla.js";
