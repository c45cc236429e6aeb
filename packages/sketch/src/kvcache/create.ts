/**
 * `createKvCache(name, options, seed)` — every compressed cache by name — and the per-layer
 * factories the decoder stacks take (core's `DecodeCacheFactory` / `LatentCacheFactory`).
 *
 * A model that decodes with core's contract generates with any cache unchanged:
 *   greedyGenerate(model, prompt, { maxNewTokens, cacheFactory: kvCacheFactory("kivi", { bits: 2 }, seed) })
 * Layer i's cache is seeded with `[...seed, "layer", i]`, so a run is a pure function of
 * (name, options, seed, tokens). A CLI `--cache <name> --cache-budget <n>` maps to
 * `kvCacheFactory(name, budgetOptions(name, n), seed)` (see {@link budgetOptions}).
 */
import { type DecodeCacheFactory, type LatentCacheFactory, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertOneOf, describe } from "@randattn/core/internal";
import type { CompressedKvCache, KvCacheShape } from "./base.js";
import { type BalanceKvOptions, BalanceKvCache } from "./balance.js";
import {
  type FullCacheOptions,
  FullCache,
  type H2oOptions,
  H2oCache,
  type SinkWindowOptions,
  SinkWindowCache,
  type SlidingWindowOptions,
  SlidingWindowCache,
} from "./eviction.js";
import { type RandomFeatureStateOptions, RandomFeatureStateCache } from "./features.js";
import { type KiviOptions, KiviCache } from "./kivi.js";
import { type LatentKvCacheName, type OnlineLatentOptions, createLatentKvCache } from "./latent.js";
import { type QjlOptions, QjlCache } from "./qjl.js";
import { type SubGenOptions, SubGenCache } from "./subgen.js";
import { type TurboQuantOptions, TurboQuantCache } from "./turbo.js";

/** The options of each cache, by name. */
export interface KvCacheOptionsByName {
  full: FullCacheOptions;
  "sliding-window": SlidingWindowOptions;
  "sink-window": SinkWindowOptions;
  h2o: H2oOptions;
  "balance-kv": BalanceKvOptions;
  subgen: SubGenOptions;
  qjl: QjlOptions;
  "turbo-quant": TurboQuantOptions;
  kivi: KiviOptions;
  "random-features": RandomFeatureStateOptions;
}

/** The cache names. */
export type KvCacheName = keyof KvCacheOptionsByName;

/** Every cache name, in a fixed order (exact baselines first). */
export const KV_CACHE_NAMES: readonly KvCacheName[] = [
  "full",
  "sliding-window",
  "sink-window",
  "h2o",
  "balance-kv",
  "subgen",
  "qjl",
  "turbo-quant",
  "kivi",
  "random-features",
];

/**
 * Creates an empty cache.
 * @param name one of {@link KV_CACHE_NAMES}.
 * @param options the shape (numKvHeads, keyDim, valueDim, maxLength) and the cache's own options.
 * @param seed the cache's random draws (deterministic caches ignore it).
 * @throws ValueError for an unknown name or a bad option (budget 0, a bit width outside 1–8, …).
 */
export function createKvCache<N extends KvCacheName>(name: N, options: KvCacheOptionsByName[N], seed: SeedKey): CompressedKvCache {
  assertOneOf(name, "name", KV_CACHE_NAMES);
  switch (name) {
    case "full":
      return new FullCache(options as FullCacheOptions);
    case "sliding-window":
      return new SlidingWindowCache(options as SlidingWindowOptions);
    case "sink-window":
      return new SinkWindowCache(options as SinkWindowOptions);
    case "h2o":
      return new H2oCache(options as H2oOptions);
    case "balance-kv":
      return new BalanceKvCache(options as BalanceKvOptions, seed);
    case "subgen":
      return new SubGenCache(options as SubGenOptions, seed);
    case "qjl":
      return new QjlCache(options as QjlOptions, seed);
    case "turbo-quant":
      return new TurboQuantCache(options as TurboQuantOptions, seed);
    case "kivi":
      return new KiviCache(options as KiviOptions);
    default:
      return new RandomFeatureStateCache(options as RandomFeatureStateOptions, seed);
  }
}

/** A cache's own options without the shape (the factory fills the shape in per layer). */
export type KvCacheSettings<N extends KvCacheName> = Omit<KvCacheOptionsByName[N], keyof KvCacheShape> & { maxLength?: number };

/**
 * A per-layer factory for the decoder stacks: layer i gets `createKvCache(name, { ...settings,
 * numKvHeads, keyDim, valueDim }, [...seed, "layer", i])`. The settings are validated once, now.
 */
export function kvCacheFactory<N extends KvCacheName>(name: N, settings: KvCacheSettings<N>, seed: SeedKey): DecodeCacheFactory {
  if (settings === null || typeof settings !== "object") throw new ValueError("settings", "the cache's options object", describe(settings));
  // Validate eagerly on a 1-head probe so a bad option fails before any model runs.
  createKvCache(name, { ...settings, numKvHeads: 1, keyDim: 2, valueDim: 2 } as unknown as KvCacheOptionsByName[N], derive(seed, "probe"));
  return (spec) =>
    createKvCache(
      name,
      { ...settings, numKvHeads: spec.numKvHeads, keyDim: spec.keyDim, valueDim: spec.valueDim } as unknown as KvCacheOptionsByName[N],
      derive(seed, "layer", spec.layer),
    );
}

/** A per-layer factory of latent caches (`"exact"` or `"online-svd"` with its rank). */
export function latentCacheFactory(name: LatentKvCacheName, settings: { rank?: number }, seed: SeedKey): LatentCacheFactory {
  return (spec) =>
    createLatentKvCache(
      name,
      { latentDim: spec.latentDim, ropeDim: spec.ropeDim, rank: settings.rank ?? spec.latentDim } as OnlineLatentOptions,
      derive(seed, "layer", spec.layer),
    );
}

/**
 * The settings a single "budget" knob means for each cache (the sweep axis of `kv-compression`
 * and a CLI's `--cache-budget`): tokens kept for the eviction caches (sinks 4 + window, or
 * heavy = recent = budget/2), the block size b for BalanceKV (≈ 2b·log₂(n/b) tokens kept), clusters
 * for SubGen (samples ∝ budget), the projection rows for QJL, bits for the quantizers, frequencies
 * for the random-feature state.
 */
export function budgetOptions(name: KvCacheName, budget: number): Record<string, number> {
  assertOneOf(name, "name", KV_CACHE_NAMES);
  switch (name) {
    case "full":
      return {};
    case "sliding-window":
      return { window: budget };
    case "sink-window":
      return { sinks: Math.min(4, Math.max(0, budget - 1)), window: Math.max(1, budget - Math.min(4, Math.max(0, budget - 1))) };
    case "h2o":
      return { heavy: Math.floor(budget / 2), recent: Math.max(1, budget - Math.floor(budget / 2)) };
    case "balance-kv":
      return { blockSize: Math.max(1, Math.round(budget / 4)) };
    case "subgen":
      return { clusters: Math.max(1, Math.round(budget / 4)), samplesPerCluster: 2, valueSamples: Math.max(1, Math.round(budget / 2)) };
    case "qjl":
      return { projectionDim: budget };
    case "turbo-quant":
    case "kivi":
      return { bits: budget };
    default:
      return { numFrequencies: budget };
  }
}
