/**
 * Configuration shared by the encoder and decoder layers (§3.1–§3.2): widths, heads (with GQA/MQA
 * through numKvHeads, §4.1), the FFN kind, the norm kind and its placement, optional RoPE.
 */
import { ValueError } from "../errors.js";
import type { RopeOptions } from "../position/index.js";
import { ROPE_PAIRINGS } from "../position/index.js";
import { assertInteger, assertNumber, assertOneOf, describe } from "../validate.js";
import { FFN_KINDS, type FfnKind } from "./ffn.js";
import { NORM_KINDS, type NormKind } from "../norm.js";
import { NORM_PLACEMENTS, type NormPlacement } from "./residual.js";

/** Shape and variant of one encoder or decoder layer. */
export interface LayerConfig {
  /** Model width d (rows are tokens, columns the d features). */
  dModel: number;
  /** Number of query heads H. */
  numHeads: number;
  /** Number of key/value heads G (GQA; 1 = MQA); must divide numHeads. @default numHeads (MHA) */
  numKvHeads?: number;
  /** Per-head query/key/value width d_head (= d_QK = d_V). @default dModel / numHeads (must divide) */
  headDim?: number;
  /** FFN hidden width d_ff. @default 4 · dModel (Vaswani et al.) */
  dHidden?: number;
  /** FFN kind (ReLU, GELU, GLU family). @default "relu" */
  ffn?: FfnKind;
  /** FFN biases. @default true for plain kinds, false for GLU kinds */
  ffnBias?: boolean;
  /** LayerNorm or RMSNorm. @default "layer" */
  norm?: NormKind;
  /** Where the norms sit around each sublayer: Post-LN, Pre-LN or Peri-LN. @default "post" (the original Transformer) */
  placement?: NormPlacement;
  /** ε of every norm. @default 1e-5 (LayerNorm) / 1e-6 (RMSNorm) */
  epsilon?: number;
  /** Rotary position embedding on the self-attention queries and keys (headDim must be even); absent = no RoPE. @default undefined */
  rope?: RopeOptions;
}

/** A {@link LayerConfig} with every default filled in. */
export interface ResolvedLayerConfig {
  readonly dModel: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly dHidden: number;
  readonly ffn: FfnKind;
  readonly ffnBias: boolean | undefined;
  readonly norm: NormKind;
  readonly placement: NormPlacement;
  readonly epsilon: number | undefined;
  readonly rope: RopeOptions | undefined;
}

/** Validates a layer config (naming `argument.field` in errors) and fills in the defaults. */
export function resolveLayerConfig(config: unknown, argument = "config"): ResolvedLayerConfig {
  if (config === null || typeof config !== "object") throw new ValueError(argument, "a layer config object", describe(config));
  const c = config as LayerConfig;
  assertInteger(c.dModel, `${argument}.dModel`);
  assertInteger(c.numHeads, `${argument}.numHeads`);
  const numKvHeads = c.numKvHeads ?? c.numHeads;
  assertInteger(numKvHeads, `${argument}.numKvHeads`);
  if (c.numHeads % numKvHeads !== 0) {
    // GQA's group map g(h) = ⌊h/(H/G)⌋ needs equal groups (§4.1, study notes).
    throw new ValueError(`${argument}.numKvHeads`, `a divisor of numHeads = ${c.numHeads}`, String(numKvHeads));
  }
  let headDim = c.headDim;
  if (headDim === undefined) {
    if (c.dModel % c.numHeads !== 0) {
      throw new ValueError(`${argument}.headDim`, `given, or numHeads = ${c.numHeads} dividing dModel = ${c.dModel}`, "undefined");
    }
    headDim = c.dModel / c.numHeads;
  }
  assertInteger(headDim, `${argument}.headDim`);
  const dHidden = c.dHidden ?? 4 * c.dModel;
  assertInteger(dHidden, `${argument}.dHidden`);
  const ffn = c.ffn ?? "relu";
  assertOneOf(ffn, `${argument}.ffn`, FFN_KINDS);
  if (c.ffnBias !== undefined && typeof c.ffnBias !== "boolean")
    throw new ValueError(`${argument}.ffnBias`, "a boolean", describe(c.ffnBias));
  const norm = c.norm ?? "layer";
  assertOneOf(norm, `${argument}.norm`, NORM_KINDS);
  const placement = c.placement ?? "post";
  assertOneOf(placement, `${argument}.placement`, NORM_PLACEMENTS);
  if (c.epsilon !== undefined) assertNumber(c.epsilon, `${argument}.epsilon`, { positive: true });
  if (c.rope !== undefined) {
    if (c.rope === null || typeof c.rope !== "object")
      throw new ValueError(`${argument}.rope`, "RopeOptions ({ base?, pairing? }) or undefined", describe(c.rope));
    if (headDim % 2 !== 0) throw new ValueError(`${argument}.headDim`, "an even number (RoPE rotates coordinate pairs)", String(headDim));
    if (c.rope.base !== undefined) assertNumber(c.rope.base, `${argument}.rope.base`, { positive: true });
    if (c.rope.pairing !== undefined) assertOneOf(c.rope.pairing, `${argument}.rope.pairing`, ROPE_PAIRINGS);
  }
  return {
    dModel: c.dModel,
    numHeads: c.numHeads,
    numKvHeads,
    headDim,
    dHidden,
    ffn,
    ffnBias: c.ffnBias,
    norm,
    placement,
    epsilon: c.epsilon,
    rope: c.rope === undefined ? undefined : { ...c.rope },
  };
}
