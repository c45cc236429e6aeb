/** Scatterbrain: LSH-sparse exact entries + Performer low-rank estimate, combined without double counting. */
export { type ScatterbrainOptions, type ScatterbrainResult, scatterbrainAttention } from "./attention.js";
