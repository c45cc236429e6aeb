/**
 * Encoder layer of §3.1.1 (Fig. 5): multi-head self-attention (X_Q = X_K = X_V = the previous
 * layer's output) → FFN, each sublayer wrapped in a skip connection with its normalization at the
 * configured placement (Post-LN as in Fig. 5, Pre-LN, Peri-LN).
 */
import { assertOptions } from "../validate.js";
import { type Mask, type MultiHeadWeights, initMultiHeadWeights, multiHeadAttention } from "../attention/index.js";
import { ShapeError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { Rope } from "../position/index.js";
import { derive, type SeedKey } from "../random/stream.js";
import { type LayerConfig, type ResolvedLayerConfig, resolveLayerConfig } from "./config.js";
import { type FfnWeights, feedForward, initFfn } from "./ffn.js";
import { assertLayerParts, checkLayerInput, positionRange, selfAttentionOptions } from "./layer-common.js";
import { type SublayerNorms, initSublayerNorms, residualBlock } from "./residual.js";

/** Weights and resolved configuration of one encoder layer. */
export interface EncoderLayer {
  readonly config: ResolvedLayerConfig;
  /** Self-attention projections (H query heads, G = numKvHeads key/value heads, W_O: H·d_head × d). */
  readonly selfAttention: MultiHeadWeights;
  readonly ffn: FfnWeights;
  /** Norms of the two residual blocks (which of before/after exist depends on the placement). */
  readonly norms: { readonly selfAttention: SublayerNorms; readonly ffn: SublayerNorms };
  /** RoPE on the self-attention queries and keys, when configured. */
  readonly rope?: Rope;
}

/** Options of {@link encoderLayer}. */
export interface EncoderLayerOptions {
  /** Self-attention mask, e.g. `{ kind: "padding", keyLength }` for a padded batch row. @default undefined (every token sees every token) */
  mask?: Mask;
  /** Absolute positions of the rows (used by RoPE only). @default 0, 1, …, N − 1 */
  positions?: ArrayLike<number>;
}

/**
 * Seeded encoder layer: self-attention weights from `[...seed, "selfAttention"]`, FFN weights from
 * `[...seed, "ffn"]` (so adding a sublayer never changes the others); norms at γ = 1, β = 0.
 */
export function initEncoderLayer(config: LayerConfig, seed: SeedKey): EncoderLayer {
  const c = resolveLayerConfig(config);
  return {
    config: c,
    selfAttention: initMultiHeadWeights(
      { dIn: c.dModel, numHeads: c.numHeads, numKvHeads: c.numKvHeads, headDim: c.headDim, valueDim: c.headDim, dOut: c.dModel },
      derive(seed, "selfAttention"),
    ),
    ffn: initFfn({ kind: c.ffn, dModel: c.dModel, dHidden: c.dHidden, bias: c.ffnBias }, derive(seed, "ffn")),
    norms: {
      selfAttention: initSublayerNorms(c.placement, c.norm, c.dModel, c.epsilon),
      ffn: initSublayerNorms(c.placement, c.norm, c.dModel, c.epsilon),
    },
    rope: c.rope === undefined ? undefined : new Rope(c.headDim, c.rope),
  };
}

/**
 * One encoder layer on X (N×d):
 *   H = Block(X, MHA_self),   Y = Block(H, FFN)
 * with Block(x, F) = norm(x + F(x)) (post), x + F(norm(x)) (pre) or x + norm(F(norm(x))) (peri).
 * @throws ShapeError when x is not N×dModel (N ≥ 1) or positions has the wrong length.
 * @throws NonFiniteError on NaN/±Inf in x.
 */
export function encoderLayer(x: Matrix, layer: EncoderLayer, options: EncoderLayerOptions = {}): Matrix {
  assertOptions(options, "options");
  assertLayerParts(layer, "layer");
  const c = layer.config;
  checkLayerInput(x, c.dModel, "x");
  const positions = options.positions ?? positionRange(x.rows);
  if (positions.length !== x.rows) throw new ShapeError("options.positions", `length ${x.rows} (x.rows)`, `length ${positions.length}`);
  const attnOptions = selfAttentionOptions(layer.rope, positions, options.mask);
  const h = residualBlock(x, (t) => multiHeadAttention(t, t, layer.selfAttention, attnOptions), c.placement, layer.norms.selfAttention);
  return residualBlock(h, (t) => feedForward(t, layer.ffn), c.placement, layer.norms.ffn);
}
