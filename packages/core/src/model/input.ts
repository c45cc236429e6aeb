/**
 * The input block of every stack (Fig. 8/9 bottom): token embedding E[ids] plus a positional
 * encoding, then (Peri-LN) the input-embedding norm.
 */
import { ShapeError, ValueError } from "../errors.js";
import { type NormParams, applyNorm, initNorm } from "../norm.js";
import type { Matrix } from "../matrix.js";
import { derive, type SeedKey } from "../random/stream.js";
import { Embedding, embedTokens, initEmbedding, initLearnedPositionalEmbedding, sinusoidalPositionalEncoding } from "../tokens/index.js";
import { assertInteger, describe } from "../validate.js";
import type { PositionalKind, ResolvedModelConfig } from "./config.js";

/** Token embedding, positional table (for "sinusoidal" / "learned") and optional input norm. */
export interface InputEmbedding {
  /** E ∈ R^{N_T×d}. */
  readonly embedding: Embedding;
  readonly positional: PositionalKind;
  /** P ∈ R^{maxPositions×d} for "sinusoidal" (fixed) and "learned"; undefined for "rope" / "none". */
  readonly positionTable?: Matrix;
  /** Peri-LN's input-embedding norm, when configured. */
  readonly norm?: NormParams;
}

/** Builds the input block for `vocabSize` tokens: E from `[...seed, "embedding"]`, a learned P from `[...seed, "positional"]`. */
export function initInputEmbedding(vocabSize: number, config: ResolvedModelConfig, seed: SeedKey): InputEmbedding {
  const d = config.layer.dModel;
  const embedding = initEmbedding(vocabSize, d, { std: config.embeddingStd }, derive(seed, "embedding"));
  let positionTable: Matrix | undefined;
  if (config.positional === "sinusoidal") positionTable = sinusoidalPositionalEncoding(config.maxPositions, d);
  else if (config.positional === "learned") {
    positionTable = initLearnedPositionalEmbedding(config.maxPositions, d, { std: config.embeddingStd }, derive(seed, "positional")).table;
  }
  const layer = config.layer;
  const norm = config.embeddingNorm ? initNorm(layer.norm, d, layer.epsilon === undefined ? {} : { epsilon: layer.epsilon }) : undefined;
  return { embedding, positional: config.positional, positionTable, norm };
}

/**
 * X = E[ids] + P[offset : offset + N] (then the input norm, if any) — the first layer's input for
 * the N tokens at absolute positions offset, …, offset + N − 1.
 * @throws ValueError on an empty id list or an id outside [0, N_T); ShapeError when offset + N exceeds the positional table.
 */
export function embedInput(input: InputEmbedding, ids: ArrayLike<number>, offset = 0, argument = "ids"): Matrix {
  if (!(input?.embedding instanceof Embedding)) throw new ValueError("input.embedding", "an Embedding", describe(input?.embedding));
  if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
    throw new ValueError(argument, "an array of token ids", describe(ids));
  if (ids.length === 0) throw new ShapeError(argument, "at least 1 token id", "an empty sequence");
  assertInteger(offset, "offset", 0);
  const table = input.positionTable;
  if (table !== undefined && offset + ids.length > table.rows) {
    throw new ShapeError(
      argument,
      `at most ${table.rows - offset} tokens (maxPositions = ${table.rows}, ${offset} already placed)`,
      `${ids.length} tokens`,
    );
  }
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isInteger(id) || id < 0 || id >= input.embedding.vocabSize) {
      throw new ValueError(`${argument}[${i}]`, `an integer token id in [0, ${input.embedding.vocabSize - 1}]`, describe(id));
    }
  }
  const x = embedTokens(ids, input.embedding, table === undefined ? {} : { positional: table, offset });
  return input.norm === undefined ? x : applyNorm(x, input.norm);
}
