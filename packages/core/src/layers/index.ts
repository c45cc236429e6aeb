/** Layers of §3: normalizations, feed-forward sublayers, residual placement, encoder and decoder layers. Explicit lists: the weight validators (assertNormParams, assertFfnWeights, assertSublayerNorms) are in @randattn/core/internal. */
export {
  ACTIVATIONS,
  type Activation,
  activateInPlace,
  activationFunction,
  applyActivation,
  erf,
  gelu,
  geluTanh,
  relu,
  sigmoid,
  silu,
} from "./activations.js";
export {
  DEFAULT_NORM_EPSILON,
  type LayerNormParams,
  NORM_KINDS,
  type NormInitOptions,
  type NormKind,
  type NormParams,
  type RMSNormParams,
  applyNorm,
  initLayerNorm,
  initNorm,
  initRMSNorm,
  layerNorm,
  rmsNorm,
} from "../norm.js";
export { FFN_KINDS, type FfnConfig, type FfnKind, type FfnWeights, feedForward, ffnActivation, initFfn, isGatedFfn } from "./ffn.js";
export { NORM_PLACEMENTS, type NormPlacement, type SublayerNorms, initSublayerNorms, normsUsed, residualBlock } from "./residual.js";
export { type LayerConfig, type ResolvedLayerConfig, resolveLayerConfig } from "./config.js";
export { type EncoderLayer, type EncoderLayerOptions, encoderLayer, initEncoderLayer } from "./encoder.js";
export {
  type DecoderLayer,
  type DecoderLayerConfig,
  type DecoderLayerOptions,
  createLayerCache,
  decoderLayer,
  decoderLayerStep,
  initDecoderLayer,
} from "./decoder.js";
