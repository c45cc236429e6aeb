/** latent/ — multi-head latent attention (§4.2): factorized weights, unmerged and merged forms, decoupled RoPE, low-rank MHA. */
export { type MergedMla, type MergedMlaDimensions, mergeMla, mergedMlaAttention, mergedMlaDimensions } from "./merged.js";
export type { MlaOptions } from "./options.js";
export { mlaAttention, mlaToMultiHead } from "./unmerged.js";
export { type MlaConfig, type MlaDimensions, type MlaWeights, initMlaWeights, mlaDimensions } from "./weights.js";
