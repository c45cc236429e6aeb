/**
 * fast/ — WebAssembly SIMD128 kernels behind the linalg signatures (issue #5): backend selection,
 * float32 products, the SIMD exp and the fused softmax-attention driver used by attention/,
 * float32/float64 exact attention on the fast kernels, and multi-head attention over worker
 * threads. The float64 `matmul*` functions of linalg/ dispatch here automatically.
 */
export {
  KERNEL_BACKEND_ENV,
  type KernelBackend,
  getKernelBackend,
  setKernelBackend,
  wasmSimdAvailable,
  withKernelBackend,
} from "./gemm.js";
export { matmul32, matmulTransA32, matmulTransB32 } from "./matmul32.js";
export {
  type AttentionMode,
  type AttentionPrecision,
  type FastAttentionFullOptions,
  type FastAttentionOptions,
  type PrefixMask,
  attention32,
  fastAttention,
  float32AttentionErrorBound,
  streamingAttention32,
} from "./attention32.js";
export type { HeadWeights } from "./heads.js";
export {
  type ParallelMultiHeadOptions,
  closeAttentionWorkers,
  multiHeadAttentionFast,
  parallelMultiHeadAttention,
} from "./parallel.js";
