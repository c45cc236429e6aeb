/**
 * fast/ — WebAssembly SIMD128 kernels behind the linalg signatures (issue #5): backend selection,
 * float32 products, the SIMD exp and the fused softmax-attention driver used by attention/,
 * and float32/float64 exact attention on the fast kernels (multi-head attention over worker
 * threads is in `@randattn/core/node`). The float64 `matmul*` functions of linalg/ dispatch here automatically.
 */
export {
  AUTO_MIN_WORK,
  type DenseArray,
  type GemmPrecision,
  type GemmProfile,
  gemmProfile,
  setGemmProfiling,
  KERNEL_BACKEND_ENV,
  type KernelBackend,
  gemmWasm,
  getKernelBackend,
  kernelBackendFor,
  setKernelBackend,
  SMALL_M_ROWS,
  wasmKernelBytes,
  wasmMemoryBytes,
  wasmSimdAvailable,
} from "./gemm.js";
export { matmul32, matmul32Into, matmulTransA32, matmulTransA32Into, matmulTransB32, matmulTransB32Into } from "./matmul32.js";
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
export { kernelWat } from "./wat.js";
export {
  FUSED_MIN_WORK,
  type FusedSoftmaxProfile,
  fusedSoftmaxProfile,
  setFusedSoftmaxProfiling,
  simdExp,
  useFusedSoftmax,
} from "./softmaxWasm.js";
