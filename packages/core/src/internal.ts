/**
 * `@randattn/core/internal` — building blocks for RandAttn's own packages (sketch, experiments) and
 * for tests and benchmarks: argument validators, compiled masks, the flat-array ("Into") kernels,
 * the WebAssembly kernel plumbing and the profiling switches. NOT a stable public API (issue 9):
 * names here may change in any release. The public API is `@randattn/core`.
 */
export {
  assertFinite,
  assertInteger,
  assertMatrix,
  assertMatrixList,
  assertNonEmpty,
  assertNumber,
  assertOneOf,
  assertOptions,
  assertRequiredOptions,
  assertShape,
  assertVector,
  describe,
  optionsObject,
} from "./validate.js";
export { CompiledMask, type CompiledMaskParts, TILE_ALL, TILE_NONE, TILE_PARTIAL, type TileStatus, compileMask } from "./attention/mask.js";
export {
  SMALL_M,
  matmulInto,
  matmulTransAInto,
  matmulTransBInto,
  sequentialMatmulInto,
  sequentialMatmulJs,
  tallNarrowMatmulInto,
} from "./linalg/matmul.js";
export { transposeInto } from "./linalg/transpose.js";
export { PlaneOps, applyPlaneOps, applyPlaneOpsJs } from "./linalg/plane.js";
export {
  powerIterationEigenvalue,
  powerIterationEigenvalueJs,
  symmetricMaxEigenvalue,
  symmetricMaxEigenvalueJs,
} from "./linalg/eigen.js";
export { squaredDistanceBlocks, squaredDistances, squaredDistancesJs } from "./linalg/distances.js";
export {
  AUTO_MIN_WORK,
  type DenseArray,
  type GemmPrecision,
  GEMM_KC,
  type GemmProfile,
  SMALL_M_ROWS,
  gemmProfile,
  gemmWasm,
  gemmWasmPacked,
  gemmWasmPacked32,
  gemmWasmRowsF64,
  packOperandF32,
  packOperandF64,
  kernelBackendFor,
  STAGE_MAX,
  setGemmProfiling,
  setGemmStageMax,
  wasmFmaKernelBytes,
  wasmKernelBytes,
  wasmMemoryBytes,
} from "./kernels/gemm.js";
export {
  RESIDENT_BASE_BYTES,
  RESIDENT_KC,
  RESIDENT_PANEL,
  panelIndex,
  residentExp,
  residentGemmPanels,
  residentGemmRows,
  residentKernels,
} from "./kernels/resident.js";
export type { Kernels } from "./kernels/gemm.js";
export { KernelArena } from "./kernels/arena.js";
export { maxAbsScan } from "./kernels/scan.js";
export { maxAbsOf } from "./kernels/range32.js";
export { matmul32Into, matmulTransA32Into, matmulTransB32Into } from "./linalg/matmul32.js";
export { expTable, fmaKernelWat, kernelWat } from "./kernels/wat.js";
export {
  FUSED_MIN_WORK,
  type FusedSoftmaxProfile,
  type TileMask,
  fusedSoftmaxAttention,
  fusedSoftmaxProfile,
  packPanels,
  prefixTileMask,
  setFusedSoftmaxProfiling,
  simdExp,
  simdExp32,
  simdExpScaled,
  simdShiftRowsExp,
  useFusedSoftmax,
} from "./kernels/softmaxWasm.js";
export { assertNormParams, rmsNormRowsInto } from "./norm.js";
export { assertFfnWeights } from "./layers/ffn.js";
export { scatterAddWeighted } from "./pretrained/moe.js";
export { assertSublayerNorms } from "./layers/residual.js";
export { Scratch } from "./scratch.js";
