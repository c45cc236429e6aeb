/**
 * `@randattn/sketch` — randomized operators for attention (see docs/ARCHITECTURE.md).
 *
 * @module @randattn/sketch
 */
export * from "./random/index.js";
export * from "./operators/index.js";
export * from "./sampling/index.js";
export * from "./features/index.js";
export * from "./lowrank/index.js";
export * from "./lsh/index.js";
export * from "./hyper/index.js";
export * from "./kdeformer/index.js";
export * from "./scatterbrain/index.js";
export * from "./nystrom/index.js";
export * from "./coreset/index.js";
export * from "./kvcache/index.js";
