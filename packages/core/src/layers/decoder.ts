/**
 * Decoder layer of §3.2 (Fig. 6): masked causal self-attention → cross-attention over the encoder
 * output E_{N_L} (queries from the decoder, keys/values from the encoder) → FFN, each sublayer in a
 * skip connection with its norm at the configured placement. With `crossAttention: false` it is
 * the decoder-only (GPT, Fig. 9) layer: causal self-attention → FFN.
 *
 * Two evaluation modes that must agree (§4, KV caching):
 *  - `decoderLayer`: the whole sequence at once, causal mask S_i = {j ≤ i};
 *  - `decoderLayerStep`: only the t newest tokens; their keys/values are appended to the layer's
 *    KV cache and they attend to everything cached (causal offset = previous cache length). Every
 *    other operation (norms, FFN, cross-attention, residuals) acts row by row, so the new rows come
 *    out exactly as the last t rows of the full pass.
 */
import { type Mask, type MultiHeadWeights, initMultiHeadWeights, multiHeadAttention } from "../attention/index.js";
import { type DecodeCache, type DecodeCacheFactory, KVCache, multiHeadDecode } from "../cache/index.js";
import { ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { Rope } from "../position/index.js";
import { derive, type SeedKey } from "../random/stream.js";
import { describe, assertOptions } from "../validate.js";
import { type LayerConfig, type ResolvedLayerConfig, resolveLayerConfig } from "./config.js";
import { assertLayerParts, checkLayerInput, positionRange, selfAttentionOptions } from "./layer-common.js";
import { type FfnWeights, feedForward, initFfn } from "./ffn.js";
import { type SublayerNorms, initSublayerNorms, residualBlock } from "./residual.js";

/** A decoder layer's configuration: a {@link LayerConfig} plus whether it has cross-attention. */
export interface DecoderLayerConfig extends LayerConfig {
  /** Cross-attention sublayer over an encoder output (encoder–decoder); false for decoder-only stacks. @default true */
  crossAttention?: boolean;
}

/** Weights and resolved configuration of one decoder layer. */
export interface DecoderLayer {
  readonly config: ResolvedLayerConfig & { readonly crossAttention: boolean };
  /** Masked (causal) self-attention projections. */
  readonly selfAttention: MultiHeadWeights;
  /** Cross-attention projections (queries from the decoder state, keys/values from the encoder output); absent for decoder-only. */
  readonly crossAttention?: MultiHeadWeights;
  readonly ffn: FfnWeights;
  readonly norms: { readonly selfAttention: SublayerNorms; readonly crossAttention?: SublayerNorms; readonly ffn: SublayerNorms };
  /** RoPE on the self-attention queries and keys, when configured (never on cross-attention). */
  readonly rope?: Rope;
}

/** Options of {@link decoderLayer} and {@link decoderLayerStep}. */
export interface DecoderLayerOptions {
  /** Mask of the cross-attention over the encoder output, e.g. `{ kind: "padding", keyLength }`. @default undefined (all source tokens visible) */
  memoryMask?: Mask;
}

/**
 * Seeded decoder layer: `[...seed, "selfAttention" | "crossAttention" | "ffn"]` for the three
 * sublayers; norms at γ = 1, β = 0.
 */
export function initDecoderLayer(config: DecoderLayerConfig, seed: SeedKey): DecoderLayer {
  const c = resolveLayerConfig(config);
  const cross = config.crossAttention ?? true;
  if (typeof cross !== "boolean") throw new ValueError("config.crossAttention", "a boolean", describe(cross));
  const mha = (purpose: string) =>
    initMultiHeadWeights(
      { dIn: c.dModel, numHeads: c.numHeads, numKvHeads: c.numKvHeads, headDim: c.headDim, valueDim: c.headDim, dOut: c.dModel },
      derive(seed, purpose),
    );
  const norms = () => initSublayerNorms(c.placement, c.norm, c.dModel, c.epsilon);
  return {
    config: { ...c, crossAttention: cross },
    selfAttention: mha("selfAttention"),
    crossAttention: cross ? mha("crossAttention") : undefined,
    ffn: initFfn({ kind: c.ffn, dModel: c.dModel, dHidden: c.dHidden, bias: c.ffnBias }, derive(seed, "ffn")),
    norms: { selfAttention: norms(), crossAttention: cross ? norms() : undefined, ffn: norms() },
    rope: c.rope === undefined ? undefined : new Rope(c.headDim, c.rope),
  };
}

function checkDecoderLayer(layer: unknown, argument: string): asserts layer is DecoderLayer {
  assertLayerParts(layer, argument);
  const l = layer as unknown as DecoderLayer;
  if (l.config.crossAttention && (l.crossAttention === undefined || l.norms.crossAttention === undefined)) {
    throw new ValueError(`${argument}.crossAttention`, "cross-attention weights and norms (config.crossAttention is true)", "undefined");
  }
}

function checkMemory(layer: DecoderLayer, memory: Matrix | undefined): Matrix | undefined {
  if (!layer.config.crossAttention) {
    if (memory !== undefined)
      throw new ValueError("memory", "undefined (the layer has no cross-attention: decoder-only)", describe(memory));
    return undefined;
  }
  if (memory === undefined) throw new ValueError("memory", "the encoder output (N_src×dModel) for cross-attention", "undefined");
  return checkLayerInput(memory, layer.config.dModel, "memory");
}

/** Cross-attention block then FFN block: the row-wise tail shared by the full and the cached paths. */
function crossAndFfn(h: Matrix, layer: DecoderLayer, memory: Matrix | undefined, options: DecoderLayerOptions): Matrix {
  const c = layer.config;
  if (memory !== undefined) {
    const cross = layer.crossAttention as MultiHeadWeights;
    const crossOptions = options.memoryMask === undefined ? {} : { mask: options.memoryMask };
    h = residualBlock(
      h,
      (t) => multiHeadAttention(t, memory, cross, crossOptions),
      c.placement,
      layer.norms.crossAttention as SublayerNorms,
    );
  }
  return residualBlock(h, (t) => feedForward(t, layer.ffn), c.placement, layer.norms.ffn);
}

/**
 * One decoder layer on the whole target sequence X (N×d):
 *   H₁ = Block(X, causal MHA_self),  H₂ = Block(H₁, MHA_cross(·, memory)),  Y = Block(H₂, FFN)
 * (without the middle block for decoder-only layers). Row t of Y depends only on rows ≤ t of X.
 * @param memory the encoder output E_{N_L} (N_src×d); must be undefined for decoder-only layers.
 * @throws ShapeError when x or memory is not *×dModel; ValueError when memory is given/missing against the layer kind.
 */
export function decoderLayer(x: Matrix, layer: DecoderLayer, memory?: Matrix, options: DecoderLayerOptions = {}): Matrix {
  assertOptions(options, "options");
  checkDecoderLayer(layer, "layer");
  checkLayerInput(x, layer.config.dModel, "x");
  const mem = checkMemory(layer, memory);
  const attnOptions = selfAttentionOptions(layer.rope, positionRange(x.rows), { kind: "causal" });
  const h = residualBlock(
    x,
    (t) => multiHeadAttention(t, t, layer.selfAttention, attnOptions),
    layer.config.placement,
    layer.norms.selfAttention,
  );
  return crossAndFfn(h, layer, mem, options);
}

/**
 * An empty cache shaped for the layer's self-attention (G key/value heads of width d_head): the
 * exact `KVCache`, or what `factory` builds for `{ layer: index, numKvHeads, keyDim, valueDim }`
 * (checked to have that shape and to be empty).
 */
export function createLayerCache(layer: DecoderLayer, factory?: DecodeCacheFactory, index = 0): DecodeCache {
  checkDecoderLayer(layer, "layer");
  const c = layer.config;
  const spec = { layer: index, numKvHeads: c.numKvHeads, keyDim: c.headDim, valueDim: c.headDim };
  if (factory === undefined) return new KVCache(spec);
  if (typeof factory !== "function") throw new ValueError("options.cacheFactory", "a function (spec) => DecodeCache", describe(factory));
  const cache = factory(spec);
  if (cache === null || typeof cache !== "object" || typeof (cache as DecodeCache).step !== "function") {
    throw new ValueError("options.cacheFactory", "a factory returning a DecodeCache", describe(cache));
  }
  if (cache.numKvHeads !== spec.numKvHeads || cache.keyDim !== spec.keyDim || cache.valueDim !== spec.valueDim || cache.length !== 0) {
    throw new ShapeError(
      "options.cacheFactory",
      `an empty cache with numKvHeads ${spec.numKvHeads}, keyDim ${spec.keyDim}, valueDim ${spec.valueDim} (layer ${index})`,
      `numKvHeads ${cache.numKvHeads}, keyDim ${cache.keyDim}, valueDim ${cache.valueDim}, length ${cache.length}`,
    );
  }
  return cache;
}

/**
 * The decoder layer on the t newest tokens only (prefill: all prompt tokens into an empty cache;
 * decoding: t = 1). Their self-attention keys/values are appended to `cache`, and they attend
 * causally to all cached tokens; RoPE positions continue from the cache length. Returns the t new
 * output rows — equal to the last t rows of {@link decoderLayer} on the full sequence.
 * @throws ShapeError when xNew is not t×dModel or the cache's head shape does not match the layer.
 */
export function decoderLayerStep(
  xNew: Matrix,
  layer: DecoderLayer,
  cache: DecodeCache,
  memory?: Matrix,
  options: DecoderLayerOptions = {},
): Matrix {
  assertOptions(options, "options");
  checkDecoderLayer(layer, "layer");
  checkLayerInput(xNew, layer.config.dModel, "xNew");
  if (cache === null || typeof cache !== "object" || typeof cache.step !== "function")
    throw new ValueError("cache", "a DecodeCache (createLayerCache)", describe(cache));
  const mem = checkMemory(layer, memory);
  const offset = cache.length;
  // multiHeadDecode places the new queries at offset … offset + t − 1 and rotates the new keys there
  // before caching them, so only the rotation itself is passed.
  const attnOptions = layer.rope === undefined ? {} : { rope: layer.rope };
  const h = residualBlock(
    xNew,
    (t) => multiHeadDecode(t, layer.selfAttention, cache, attnOptions),
    layer.config.placement,
    layer.norms.selfAttention,
  );
  if (cache.length !== offset + xNew.rows) {
    throw new ShapeError("cache", `length ${offset + xNew.rows} after appending ${xNew.rows} tokens`, `length ${cache.length}`);
  }
  return crossAndFfn(h, layer, mem, options);
}
