/**
 * Internal helpers shared by the encoder and decoder layers (not re-exported by the barrel).
 */
import type { Mask, MultiHeadOptions } from "../attention/index.js";
import { ShapeError, ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import type { Rope } from "../position/index.js";
import { assertFinite, assertMatrix, assertNonEmpty, describe } from "../validate.js";
import type { ResolvedLayerConfig } from "./config.js";
import { type FfnWeights, assertFfnWeights } from "./ffn.js";
import { type SublayerNorms, assertSublayerNorms } from "./residual.js";

/** The parts every layer has. */
interface LayerParts {
  readonly config: ResolvedLayerConfig;
  readonly ffn: FfnWeights;
  readonly norms: Readonly<Record<string, SublayerNorms | undefined>>;
}

/** Checks the parts every layer shares (attention output width, FFN, norms). */
export function assertLayerParts(layer: unknown, argument: string): asserts layer is LayerParts {
  if (layer === null || typeof layer !== "object")
    throw new ValueError(argument, "a layer (initEncoderLayer / initDecoderLayer)", describe(layer));
  const l = layer as LayerParts;
  if (l.config === null || typeof l.config !== "object")
    throw new ValueError(`${argument}.config`, "a resolved layer config", describe(l.config));
  const d = l.config.dModel;
  assertFfnWeights(l.ffn, `${argument}.ffn`, d);
  if (l.ffn.w2.cols !== d) throw new ShapeError(`${argument}.ffn.w2`, `*×${d} (cols = dModel)`, l.ffn.w2.shape);
  if (l.norms === null || typeof l.norms !== "object")
    throw new ValueError(`${argument}.norms`, "the layer's sublayer norms", describe(l.norms));
  for (const [name, norms] of Object.entries(l.norms)) {
    if (norms !== undefined) assertSublayerNorms(norms, `${argument}.norms.${name}`, l.config.placement, d);
  }
}

/** Checks x against the layer width and returns it. */
export function checkLayerInput(x: unknown, d: number, argument: string): Matrix {
  assertMatrix(x, argument);
  assertNonEmpty(x, argument);
  if (x.cols !== d) throw new ShapeError(argument, `*×${d} (cols = dModel)`, x.shape);
  assertFinite(x, argument);
  return x;
}

/** Options for the self-attention call: RoPE with the given positions, plus a mask. */
export function selfAttentionOptions(rope: Rope | undefined, positions: ArrayLike<number>, mask: Mask | undefined): MultiHeadOptions {
  const options: MultiHeadOptions = {};
  if (mask !== undefined) options.mask = mask;
  if (rope !== undefined) {
    options.rope = rope;
    options.queryPositions = positions;
    options.keyPositions = positions;
  }
  return options;
}

/** 0, 1, …, n − 1 shifted by `offset`: the absolute positions of n tokens starting at `offset`. */
export function positionRange(n: number, offset = 0): Float64Array {
  const p = new Float64Array(n);
  for (let i = 0; i < n; i++) p[i] = offset + i;
  return p;
}
