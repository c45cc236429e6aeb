/**
 * A dense operand of the kernels: float64 or float32 storage, row-major. Its own module so that
 * both the GEMM driver (gemm.ts) and the float32 range checks it calls (range32.ts) can name it
 * without importing each other.
 */
export type DenseArray = Float64Array | Float32Array;
