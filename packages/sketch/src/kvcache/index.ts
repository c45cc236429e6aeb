/** kvcache/ — compressed KV caches implementing core's decode contract (issue 12). */
export {
  type AttentionPart as CacheAttentionPart,
  CompressedKvCache,
  type FoldContext,
  type KvCacheShape,
} from "./base.js";
export { BalanceKvCache, type BalanceKvOptions, type SoftmaxBalanceOptions, type SoftmaxBalanceResult, softmaxBalance } from "./balance.js";
export {
  FullCache,
  type FullCacheOptions,
  H2oCache,
  type H2oOptions,
  SinkWindowCache,
  type SinkWindowOptions,
  SlidingWindowCache,
  type SlidingWindowOptions,
} from "./eviction.js";
export { RandomFeatureStateCache, type RandomFeatureStateOptions } from "./features.js";
export { KiviCache, type KiviOptions } from "./kivi.js";
export { type LatentKvCacheName, OnlineLatentCache, type OnlineLatentOptions, createLatentKvCache } from "./latent.js";
export { QjlCache, type QjlOptions, qjlEstimate, qjlVariance } from "./qjl.js";
export {
  PackedCodes,
  SUPPORTED_BITS,
  gaussianOptimalStep,
  gaussianUniformMse,
  minMaxQuantize,
  minMaxValue,
  symmetricCode,
  symmetricLevel,
} from "./quantize.js";
export { SubGenCache, type SubGenOptions } from "./subgen.js";
export { RandomRotation, type RotationKind, TurboQuantCache, type TurboQuantOptions } from "./turbo.js";
export {
  KV_CACHE_NAMES,
  type KvCacheName,
  type KvCacheOptionsByName,
  type KvCacheSettings,
  budgetOptions,
  createKvCache,
  kvCacheFactory,
  latentCacheFactory,
} from "./create.js";
