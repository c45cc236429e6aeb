/**
 * Sketching operators (RandBLAS semantics): immutable distributions + seeded, lazily drawn
 * operators — Gaussian, Rademacher, SRHT, CountSketch, sparse sign, row samplers — with cost reports.
 */
export * from "./types.js";
export * from "./distributions.js";
export { fwhtInPlace, fwhtRowsInPlace } from "./fwht.js";
export { createSketch } from "./create.js";
