/** KDEformer: sortLSH heavy entries, KDE normalizer, column-norm importance sampling of V. */
export { type KdeformerOptions, type KdeformerResult, kdeformerAttention } from "./attention.js";
