/**
 * `@randattn/core` — exact attention in every variant of Serret (2026) and the study notes.
 * Folder layout = architecture (see docs/ARCHITECTURE.md).
 *
 * @module @randattn/core
 */
export * from "./errors.js";
export * from "./validate.js";
export * from "./linalg/matrix.js";
export * from "./linalg/matmul.js";
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
export * from "./fast/index.js";
export * from "./checkpoint/index.js";
export * from "./pretrained/index.js";
