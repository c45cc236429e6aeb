/** cache/ — KV caches (MHA, GQA, MLA latent + rotary key) and token-by-token decoding (§4). */
export { mlaDecode, multiHeadDecode } from "./decode.js";
export { KVCache, type KVCacheOptions } from "./kv-cache.js";
export { LatentCache, type LatentCacheOptions } from "./latent-cache.js";
