/** HyperAttention: sortLSH large entries + sampled residual, ApproxD, causal recursion; its guarantee's parameters. */
export { type HyperAttentionOptions, type HyperAttentionResult, hyperAttention } from "./attention.js";
export { type HyperAttentionParameters, hyperAttentionParameters } from "./parameters.js";
export { type AttentionPart, addPart, emptyPart } from "./parts.js";
