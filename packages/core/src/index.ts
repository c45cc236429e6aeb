/**
 * `@randattn/core` — exact attention in every variant of Serret (2026) and the study notes.
 * Folder layout = architecture (see docs/ARCHITECTURE.md). Validators, compiled masks and the raw
 * flat-array/WebAssembly kernels are in `@randattn/core/internal` (not a stable API); node-only code
 * is in `@randattn/core/node`.
 *
 * @module @randattn/core
 */
export * from "./errors.js";
export * from "./matrix.js";
export { matmul, matmulTransA, matmulTransB, matvec } from "./linalg/matmul.js";
export { matmul32, matmulTransA32, matmulTransB32 } from "./linalg/matmul32.js";
export * from "./kernels/index.js";
export * from "./linalg/ops.js";
export * from "./random/stream.js";
export * from "./random/init.js";
export * from "./attention/index.js";
export * from "./position/index.js";
export * from "./latent/index.js";
export * from "./cache/index.js";
export * from "./layers/index.js";
export * from "./model/index.js";
export * from "./tokens/index.js";
export * from "./accounting/index.js";
export * from "./io/index.js";
export * from "./checkpoint/index.js";
export * from "./pretrained/index.js";
