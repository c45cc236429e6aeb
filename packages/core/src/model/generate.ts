/**
 * Greedy generation (§3.3 next-token prediction; §4 KV caching). At each step the next token is
 * the argmax of the last row of the logits. With the cache (default) the prompt is fed once (the
 * prefill) and every later step feeds only the newest token, attending to the cached keys/values
 * of each layer; without it, the whole sequence is recomputed each step. Both give the same tokens
 * and logits (to rounding): the tests check it.
 */
import type { DecodeCacheFactory } from "../cache/index.js";
import { ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { assertInteger, describe } from "../validate.js";
import { greedyToken } from "./head.js";
import {
  type DecoderOnlyModel,
  type EncodeOptions,
  type EncoderDecoderModel,
  createDecoderState,
  decodeTarget,
  decoderOnlyForward,
  decoderOnlyStep,
  encodeSource,
  encoderDecoderStep,
} from "./stacks.js";

/** Options of the greedy generators. */
export interface GreedyOptions {
  /** Number of tokens to generate (fewer if `stopToken` is produced). */
  maxNewTokens: number;
  /** Stop after producing this token (it is included in the output). @default undefined (never stop early) */
  stopToken?: number;
  /** Use one KV cache per layer (prefill, then one token per step); false recomputes the full causal pass each step. @default true */
  cache?: boolean;
  /** Builds each layer's cache (with `cache: true`), e.g. a compressed cache from `@randattn/sketch`'s `kvCacheFactory`. @default the exact KVCache */
  cacheFactory?: DecodeCacheFactory;
}

/** Result of greedy generation. */
export interface GreedyResult {
  /** The generated token ids (not including the prompt / start token). */
  tokens: number[];
  /** Row s = the logits over the vocabulary from which tokens[s] was chosen (steps × N_T). */
  logits: Matrix;
}

function checkOptions(options: GreedyOptions, vocabSize: number): { maxNewTokens: number; stopToken?: number; cache: boolean } {
  if (options === null || typeof options !== "object")
    throw new ValueError("options", "a GreedyOptions object ({ maxNewTokens })", describe(options));
  assertInteger(options.maxNewTokens, "options.maxNewTokens");
  if (options.stopToken !== undefined) assertInteger(options.stopToken, "options.stopToken", 0, vocabSize - 1);
  const cache = options.cache ?? true;
  if (typeof cache !== "boolean") throw new ValueError("options.cache", "a boolean", describe(cache));
  return { maxNewTokens: options.maxNewTokens, stopToken: options.stopToken, cache };
}

function checkIds(ids: ArrayLike<number>, argument: string): number[] {
  if (ids === null || typeof ids !== "object" || typeof ids.length !== "number")
    throw new ValueError(argument, "an array of token ids", describe(ids));
  if (ids.length === 0) throw new ShapeError(argument, "at least 1 token id", "an empty sequence");
  return Array.from(ids);
}

function checkLength(model: DecoderOnlyModel | EncoderDecoderModel, start: number, maxNewTokens: number, argument: string): void {
  const c = model.config;
  const needed = start + maxNewTokens - 1; // the last generated token is never fed back
  if ((c.positional === "sinusoidal" || c.positional === "learned") && needed > c.maxPositions) {
    throw new ShapeError(
      argument,
      `length + options.maxNewTokens − 1 ≤ maxPositions = ${c.maxPositions}`,
      `${start} + ${maxNewTokens} − 1 = ${needed}`,
    );
  }
}

/** Runs the greedy loop given a function returning the logits row of the next token after feeding `fed`. */
function greedyLoop(
  prefix: number[],
  opts: { maxNewTokens: number; stopToken?: number },
  vocabSize: number,
  next: (sequence: readonly number[], step: number) => Matrix,
): GreedyResult {
  const sequence = prefix.slice();
  const tokens: number[] = [];
  const rows: Float64Array[] = [];
  for (let step = 0; step < opts.maxNewTokens; step++) {
    const logits = next(sequence, step);
    const last = logits.rows - 1;
    const token = greedyToken(logits, last);
    rows.push(logits.data.slice(last * logits.cols, (last + 1) * logits.cols));
    tokens.push(token);
    sequence.push(token);
    if (token === opts.stopToken) break;
  }
  const out = new Matrix(rows.length, vocabSize);
  for (let i = 0; i < rows.length; i++) out.data.set(rows[i], i * vocabSize);
  return { tokens, logits: out };
}

/**
 * Greedy continuation of `prompt` by a decoder-only model.
 * @throws ShapeError for an empty prompt or prompt + maxNewTokens beyond the positional table; ValueError for bad ids/options.
 */
export function greedyGenerate(model: DecoderOnlyModel, prompt: ArrayLike<number>, options: GreedyOptions): GreedyResult {
  if (model?.kind !== "decoder-only")
    throw new ValueError("model", "a decoder-only model (initDecoderOnly)", describe(model?.kind ?? model));
  const opts = checkOptions(options, model.config.vocabSize);
  const ids = checkIds(prompt, "prompt");
  checkLength(model, ids.length, opts.maxNewTokens, "prompt");
  if (!opts.cache) return greedyLoop(ids, opts, model.config.vocabSize, (seq) => decoderOnlyForward(model, seq));
  const state = createDecoderState(model, options.cacheFactory === undefined ? {} : { cacheFactory: options.cacheFactory });
  // step 0: prefill with the whole prompt; afterwards only the token produced last.
  return greedyLoop(ids, opts, model.config.vocabSize, (seq, step) =>
    decoderOnlyStep(model, state, step === 0 ? seq : [seq[seq.length - 1]]),
  );
}

/** Options of {@link greedyGenerateSeq2Seq}. */
export interface Seq2SeqGreedyOptions extends GreedyOptions, EncodeOptions {
  /** The target start token (BOS) fed to the decoder first. */
  startToken: number;
}

/**
 * Greedy translation by an encoder–decoder model: encodes `source` once, then decodes from
 * `startToken`, feeding back each chosen token.
 */
export function greedyGenerateSeq2Seq(model: EncoderDecoderModel, source: ArrayLike<number>, options: Seq2SeqGreedyOptions): GreedyResult {
  if (model?.kind !== "encoder-decoder")
    throw new ValueError("model", "an encoder-decoder model (initEncoderDecoder)", describe(model?.kind ?? model));
  const opts = checkOptions(options, model.config.vocabSize);
  assertInteger(options.startToken, "options.startToken", 0, model.config.vocabSize - 1);
  checkIds(source, "source");
  checkLength(model, 1, opts.maxNewTokens, "options.maxNewTokens");
  const encodeOptions = options.sourceLength === undefined ? {} : { sourceLength: options.sourceLength };
  const memory = encodeSource(model, source, encodeOptions);
  const start = [options.startToken];
  if (!opts.cache) return greedyLoop(start, opts, model.config.vocabSize, (seq) => decodeTarget(model, memory, seq, encodeOptions));
  const state = createDecoderState(model, options.cacheFactory === undefined ? {} : { cacheFactory: options.cacheFactory });
  return greedyLoop(start, opts, model.config.vocabSize, (seq, step) =>
    encoderDecoderStep(model, state, memory, step === 0 ? seq : [seq[seq.length - 1]], encodeOptions),
  );
}
