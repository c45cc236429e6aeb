/**
 * Model-level configuration (§3.3): the per-layer settings of {@link LayerConfig} plus vocabulary,
 * depth, positional encoding, head tying and the model-level norms of Pre-LN / Peri-LN.
 */
import { ValueError } from "../errors.js";
import { type LayerConfig, type ResolvedLayerConfig, resolveLayerConfig } from "../layers/config.js";
import type { RopeOptions } from "../position/index.js";
import { assertInteger, assertOneOf, describe } from "../validate.js";

/**
 * How token positions enter the model:
 * - `"sinusoidal"`: the fixed encoding of Vaswani et al. added to the token embeddings;
 * - `"learned"`: a learned (seeded) table P ∈ R^{maxPositions×d} added to them;
 * - `"rope"`: nothing added; RoPE rotates the self-attention queries and keys in every layer;
 * - `"none"`: no position information (the model is permutation-equivariant up to the causal mask).
 */
export type PositionalKind = "sinusoidal" | "learned" | "rope" | "none";

/** The allowed values of {@link PositionalKind}. */
export const POSITIONAL_KINDS: readonly PositionalKind[] = ["sinusoidal", "learned", "rope", "none"];

/** Configuration of an encoder-only or decoder-only stack. */
export interface ModelConfig extends Omit<LayerConfig, "rope"> {
  /** Vocabulary size N_T (rows of the embedding E, columns of the logits). */
  vocabSize: number;
  /** Number of layers N_L. */
  numLayers: number;
  /** Positional encoding. @default "sinusoidal" */
  positional?: PositionalKind;
  /** Longest sequence (prompt + generated tokens) for the table encodings "sinusoidal" / "learned". @default 1024 */
  maxPositions?: number;
  /** RoPE base and pairing; only with `positional: "rope"`. @default { base: 10000, pairing: "interleaved" } */
  rope?: RopeOptions;
  /** Output head tied to the token embedding: logits = H Eᵀ (GPT-2, Vaswani et al.); else an untied W_out ∈ R^{d×N_T}. @default true */
  tieEmbeddings?: boolean;
  /** Normalize the embedded input before the first layer (Peri-LN's input-embedding norm [Kim+25]). @default true for placement "peri", else false */
  embeddingNorm?: boolean;
  /** Normalize the last layer's output before the head (Pre-LN's final norm; Peri-LN's output norm). @default true for "pre" and "peri", false for "post" */
  finalNorm?: boolean;
  /** Standard deviation of the seeded token (and learned positional) embedding entries. @default 1 */
  embeddingStd?: number;
}

/** Configuration of an encoder–decoder Transformer (Fig. 8). */
export interface EncoderDecoderConfig extends ModelConfig {
  /** Source vocabulary size (encoder embedding). `vocabSize` is the target vocabulary. @default vocabSize */
  sourceVocabSize?: number;
  /** Number of decoder layers; `numLayers` is the number of encoder layers. @default numLayers */
  numDecoderLayers?: number;
}

/** A {@link ModelConfig} with defaults filled in and the per-layer config split out. */
export interface ResolvedModelConfig {
  readonly vocabSize: number;
  readonly numLayers: number;
  readonly positional: PositionalKind;
  readonly maxPositions: number;
  readonly tieEmbeddings: boolean;
  readonly embeddingNorm: boolean;
  readonly finalNorm: boolean;
  readonly embeddingStd: number;
  /** The config every layer is built from (RoPE set when positional = "rope"). */
  readonly layer: ResolvedLayerConfig;
}

function optionalBoolean(value: unknown, argument: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new ValueError(argument, "a boolean", describe(value));
  return value;
}

/** Validates a model config (errors name `config.field`) and fills in the defaults. */
export function resolveModelConfig(config: unknown, argument = "config"): ResolvedModelConfig {
  if (config === null || typeof config !== "object") throw new ValueError(argument, "a model config object", describe(config));
  const c = config as ModelConfig;
  assertInteger(c.vocabSize, `${argument}.vocabSize`);
  assertInteger(c.numLayers, `${argument}.numLayers`);
  const positional = c.positional ?? "sinusoidal";
  assertOneOf(positional, `${argument}.positional`, POSITIONAL_KINDS);
  const maxPositions = c.maxPositions ?? 1024;
  assertInteger(maxPositions, `${argument}.maxPositions`);
  if (c.rope !== undefined && positional !== "rope") {
    throw new ValueError(`${argument}.rope`, `undefined unless positional is "rope"`, `RoPE options with positional "${positional}"`);
  }
  const embeddingStd = c.embeddingStd ?? 1;
  if (typeof embeddingStd !== "number" || !(embeddingStd > 0) || !Number.isFinite(embeddingStd)) {
    throw new ValueError(`${argument}.embeddingStd`, "a finite number > 0", describe(embeddingStd));
  }
  const { vocabSize: _v, numLayers: _n, positional: _p, maxPositions: _m, rope, tieEmbeddings, embeddingNorm, finalNorm, ...rest } = c;
  const layer: LayerConfig = { ...rest, rope: positional === "rope" ? { ...(rope ?? {}) } : undefined };
  delete (layer as { embeddingStd?: number }).embeddingStd;
  delete (layer as { sourceVocabSize?: number }).sourceVocabSize;
  delete (layer as { numDecoderLayers?: number }).numDecoderLayers;
  const resolved = resolveLayerConfig(layer, argument);
  return {
    vocabSize: c.vocabSize,
    numLayers: c.numLayers,
    positional,
    maxPositions,
    tieEmbeddings: optionalBoolean(tieEmbeddings, `${argument}.tieEmbeddings`, true),
    embeddingNorm: optionalBoolean(embeddingNorm, `${argument}.embeddingNorm`, resolved.placement === "peri"),
    finalNorm: optionalBoolean(finalNorm, `${argument}.finalNorm`, resolved.placement !== "post"),
    embeddingStd,
    layer: resolved,
  };
}
