/** KDEformer: sortLSH heavy entries, LSH-based KDE of the normalizer and column norms, column-norm importance sampling of V. */
export { type KdeformerEstimator, type KdeformerOptions, type KdeformerResult, kdeformerAttention } from "./attention.js";
export { type ExponentialKdeOptions, type ExponentialKdeResult, exponentialKde } from "./kde.js";
