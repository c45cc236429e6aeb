/** Layers of §3: normalizations, feed-forward sublayers, residual placement, encoder and decoder layers. */
export * from "./activations.js";
export * from "./norm.js";
export * from "./ffn.js";
export * from "./residual.js";
export * from "./config.js";
export * from "./encoder.js";
export * from "./decoder.js";
