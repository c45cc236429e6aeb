/**
 * `@randattn/core/node` — the parts of RandAttn that need Node.js built-ins (`node:fs`, `node:zlib`,
 * `node:worker_threads`, `node:os`, `node:url`). The main entry `@randattn/core` imports none of
 * them, so it bundles for browsers and workers; import this entry only from Node.
 *
 * - `.npz` archives (zip container with optional DEFLATE through `node:zlib`) and `crc32`;
 * - `.npy` / `.npz` file helpers (`readNpyFile`, `writeNpyFile`, `readNpzFile`, `writeNpzFile`);
 * - Hugging Face checkpoint folders read tensor by tensor (`loadPretrained`, `openCheckpointStore`,
 *   `readModelConfig`, `readTokenizer`) and forward captures written as `.npy` (`writeForwardNpy`);
 * - multi-head attention over worker threads (`parallelMultiHeadAttention`) and its single-thread
 *   reference `multiHeadAttentionFast`;
 * - one attention call with its query rows over worker threads (`attentionParallel`, bit-identical
 *   to `attention` / `streamingAttention`; `attentionSplit` tells how a call is split);
 * - `enableRelaxedSimd`: V8's relaxed-SIMD flag on Node 20, for `setKernelArithmetic("fma")`.
 *
 * @module @randattn/core/node
 */
export { type NpzWriteOptions, encodeNpz, parseNpz } from "./npz.js";
export { crc32 } from "./zip.js";
export * from "./files.js";
export {
  type ParallelMultiHeadOptions,
  attentionWorkerCount,
  closeAttentionWorkers,
  multiHeadAttentionFast,
  parallelMultiHeadAttention,
} from "./parallel.js";
export {
  type AttentionSplit,
  type ParallelAttentionOptions,
  MIN_BLOCK_ROWS,
  MIN_PARALLEL_WORK,
  attentionParallel,
  attentionSplit,
} from "./parallel-attention.js";
export * from "./checkpoint.js";
export * from "./captures.js";
export { enableRelaxedSimd } from "./relaxed.js";
