/**
 * kernels/ — the WebAssembly SIMD128 kernels below linalg (issue #5; layer: errors → matrix →
 * validate → kernels → linalg): the WAT generator and embedded bytes, the packing GEMM driver,
 * float32 range checks, the SIMD exp and the fused softmax-attention kernel. Public here: the
 * backend switch and the GEMM arithmetic (mul+add, or relaxed SIMD's fused multiply-add); the raw kernels are in `@randattn/core/internal`.
 */
export {
  KERNEL_BACKEND_ENV,
  type KernelArithmetic,
  type KernelBackend,
  getKernelArithmetic,
  getKernelBackend,
  relaxedSimdAvailable,
  setKernelArithmetic,
  setKernelBackend,
  wasmSimdAvailable,
  withKernelArithmetic,
  withKernelBackend,
} from "./gemm.js";
