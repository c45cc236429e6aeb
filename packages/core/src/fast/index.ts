/**
 * fast/ — multi-head attention over worker threads (issue #5), the top layer of core: it drives
 * the float32/float64 attention drivers of attention/fast.ts in a worker pool. (The kernels are in
 * kernels/, the float32 products in linalg/matmul32.ts, the drivers in attention/fast.ts.)
 */
export {
  type ParallelMultiHeadOptions,
  closeAttentionWorkers,
  multiHeadAttentionFast,
  parallelMultiHeadAttention,
} from "./parallel.js";
