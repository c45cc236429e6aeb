/** cache/ — KV caches (MHA, GQA, MLA latent + rotary key) and token-by-token decoding (§4). */
export { mlaDecode, multiHeadDecode } from "./decode.js";
export { KVCache, type KVCacheOptions } from "./kv-cache.js";
export { LatentCache, type LatentCacheOptions } from "./latent-cache.js";
export {
  type DecodeAttentionOptions,
  type DecodeCache,
  type DecodeCacheFactory,
  type DecodeStepInput,
  type DecodeStepResult,
  type FillRecord,
  type LatentCacheFactory,
  type LatentCacheSpec,
  type LatentDecodeCache,
  type LayerCacheSpec,
  type PositionalFill,
  checkAppendedKeysValues,
  checkFill,
  checkStepQueries,
  defaultFill,
  exactAttentionFlops,
  rotationSignature,
} from "./contract.js";
