/** Locality-sensitive hashing: SimHash, Gray-ordered bucket sort, the sortLSH block mask, shared input checks. */
export {
  MAX_HASH_BITS,
  type SortLshOptions,
  type SortLshResult,
  bucketSort,
  drawHyperplanes,
  grayRank,
  simHash,
  sortLsh,
} from "./simhash.js";
export { type CausalMask, type SoftmaxKernel, causalOffsetOf, checkAttentionInputs, refuseMask, softmaxScaleOf } from "./inputs.js";
