/**
 * The three architectures of §3.3:
 *  - encoder-only (BERT-like): input block → N_L encoder layers → (final norm) → head;
 *  - decoder-only (GPT-like, Fig. 9): input block → N_L causal decoder layers without
 *    cross-attention → (final norm) → head;
 *  - encoder–decoder Transformer (Fig. 8): the encoder stack produces E_{N_L} from the source;
 *    the decoder stack (masked self-attention → cross-attention over E_{N_L} → FFN) maps the target
 *    prefix to logits over the target vocabulary.
 * "Final norm" is Pre-LN's last norm / Peri-LN's output norm; Peri-LN's input-embedding norm is in
 * the input block (model/input.ts).
 *
 * The decoder stacks also run incrementally with one KV cache per layer (§4): a prefill call feeds
 * the prompt, then each call feeds only the newest token(s).
 */
import type { DecodeCache, DecodeCacheFactory } from "../cache/index.js";
import { ShapeError, ValueError } from "../errors.js";
import { type DecoderLayer, createLayerCache, decoderLayer, decoderLayerStep, initDecoderLayer } from "../layers/decoder.js";
import { type EncoderLayer, encoderLayer, initEncoderLayer } from "../layers/encoder.js";
import { type NormParams, applyNorm, initNorm } from "../norm.js";
import type { Matrix } from "../matrix.js";
import { derive, type SeedKey } from "../random/stream.js";
import { assertInteger, describe, assertOptions } from "../validate.js";
import { type EncoderDecoderConfig, type ModelConfig, type ResolvedModelConfig, resolveModelConfig } from "./config.js";
import { type OutputHead, initOutputHead, outputLogits } from "./head.js";
import { type InputEmbedding, embedInput, initInputEmbedding } from "./input.js";

/** Encoder-only stack (BERT-like). */
export interface EncoderOnlyModel {
  readonly kind: "encoder-only";
  readonly config: ResolvedModelConfig;
  readonly input: InputEmbedding;
  readonly layers: readonly EncoderLayer[];
  readonly finalNorm?: NormParams;
  readonly head: OutputHead;
}

/** Decoder-only stack (GPT-like, Fig. 9). */
export interface DecoderOnlyModel {
  readonly kind: "decoder-only";
  readonly config: ResolvedModelConfig;
  readonly input: InputEmbedding;
  readonly layers: readonly DecoderLayer[];
  readonly finalNorm?: NormParams;
  readonly head: OutputHead;
}

/** Encoder–decoder Transformer (Fig. 8). */
export interface EncoderDecoderModel {
  readonly kind: "encoder-decoder";
  readonly config: ResolvedModelConfig & { readonly sourceVocabSize: number; readonly numDecoderLayers: number };
  readonly sourceInput: InputEmbedding;
  readonly targetInput: InputEmbedding;
  readonly encoderLayers: readonly EncoderLayer[];
  readonly encoderFinalNorm?: NormParams;
  readonly decoderLayers: readonly DecoderLayer[];
  readonly decoderFinalNorm?: NormParams;
  readonly head: OutputHead;
}

/** Options of the encoder passes. */
export interface EncodeOptions {
  /** Number of real (non-padding) tokens: keys j ≥ sourceLength are masked out of every attention over them. @default all tokens */
  sourceLength?: number;
}

function finalNorm(config: ResolvedModelConfig): NormParams | undefined {
  if (!config.finalNorm) return undefined;
  const l = config.layer;
  return initNorm(l.norm, l.dModel, l.epsilon === undefined ? {} : { epsilon: l.epsilon });
}

function checkModel(model: unknown, kind: string): void {
  if (model === null || typeof model !== "object" || (model as { kind?: unknown }).kind !== kind) {
    const actual =
      model !== null && typeof model === "object" ? `model kind ${describe((model as { kind?: unknown }).kind)}` : describe(model);
    throw new ValueError(
      "model",
      `a ${kind} model (init${kind === "encoder-only" ? "EncoderOnly" : kind === "decoder-only" ? "DecoderOnly" : "EncoderDecoder"})`,
      actual,
    );
  }
}

function paddingMask(sourceLength: number | undefined, n: number) {
  if (sourceLength === undefined) return undefined;
  assertInteger(sourceLength, "options.sourceLength", 1, n);
  return { kind: "padding" as const, keyLength: sourceLength };
}

function runEncoder(
  input: InputEmbedding,
  layers: readonly EncoderLayer[],
  norm: NormParams | undefined,
  ids: ArrayLike<number>,
  options: EncodeOptions,
): Matrix {
  let h = embedInput(input, ids);
  const mask = paddingMask(options.sourceLength, h.rows);
  for (const layer of layers) h = encoderLayer(h, layer, mask === undefined ? {} : { mask });
  return norm === undefined ? h : applyNorm(h, norm);
}

// ---------------------------------------------------------------------------------------------
// Encoder-only

/** Seeded encoder-only model: embedding `[...seed, "embedding"]`, layer i `[...seed, "layer", i]`, untied head `[...seed, "head"]`. */
export function initEncoderOnly(config: ModelConfig, seed: SeedKey): EncoderOnlyModel {
  const c = resolveModelConfig(config);
  return {
    kind: "encoder-only",
    config: c,
    input: initInputEmbedding(c.vocabSize, c, seed),
    layers: Array.from({ length: c.numLayers }, (_, i) => initEncoderLayer(c.layer, derive(seed, "layer", i))),
    finalNorm: finalNorm(c),
    head: initOutputHead(c.layer.dModel, c.vocabSize, { tied: c.tieEmbeddings }, derive(seed, "head")),
  };
}

/** Final hidden states (N×d) of an encoder-only model: every token attends to every (real) token. */
export function encoderOnlyHidden(model: EncoderOnlyModel, ids: ArrayLike<number>, options: EncodeOptions = {}): Matrix {
  assertOptions(options, "options");
  checkModel(model, "encoder-only");
  return runEncoder(model.input, model.layers, model.finalNorm, ids, options);
}

/** Logits (N×N_T) of an encoder-only model, e.g. for masked-token prediction. */
export function encoderOnlyForward(model: EncoderOnlyModel, ids: ArrayLike<number>, options: EncodeOptions = {}): Matrix {
  return outputLogits(encoderOnlyHidden(model, ids, options), model.head, model.input.embedding);
}

// ---------------------------------------------------------------------------------------------
// Decoder-only

/** Seeded decoder-only model: embedding `[...seed, "embedding"]`, layer i `[...seed, "layer", i]`, untied head `[...seed, "head"]`. */
export function initDecoderOnly(config: ModelConfig, seed: SeedKey): DecoderOnlyModel {
  const c = resolveModelConfig(config);
  return {
    kind: "decoder-only",
    config: c,
    input: initInputEmbedding(c.vocabSize, c, seed),
    layers: Array.from({ length: c.numLayers }, (_, i) =>
      initDecoderLayer({ ...c.layer, crossAttention: false }, derive(seed, "layer", i)),
    ),
    finalNorm: finalNorm(c),
    head: initOutputHead(c.layer.dModel, c.vocabSize, { tied: c.tieEmbeddings }, derive(seed, "head")),
  };
}

/**
 * Logits (N×N_T) of a decoder-only model over the whole sequence, causal: row t is the
 * next-token prediction after tokens 0 … t and does not depend on tokens after t.
 */
export function decoderOnlyForward(model: DecoderOnlyModel, ids: ArrayLike<number>): Matrix {
  checkModel(model, "decoder-only");
  let h = embedInput(model.input, ids);
  for (const layer of model.layers) h = decoderLayer(h, layer);
  if (model.finalNorm !== undefined) h = applyNorm(h, model.finalNorm);
  return outputLogits(h, model.head, model.input.embedding);
}

/** Per-layer KV caches of a decoder stack; `length` = tokens processed so far. */
export interface DecoderState {
  readonly caches: readonly DecodeCache[];
  readonly length: number;
}

/** Options of {@link createDecoderState}. */
export interface DecoderStateOptions {
  /**
   * Builds each layer's self-attention cache from `{ layer, numKvHeads, keyDim, valueDim }` (e.g. a
   * compressed cache of `@randattn/sketch`'s `kvCacheFactory`, seeded per layer).
   * @default the exact KVCache
   */
  cacheFactory?: DecodeCacheFactory;
}

/** Empty caches, one per decoder layer (exact, or built by `options.cacheFactory`). */
export function createDecoderState(model: DecoderOnlyModel | EncoderDecoderModel, options: DecoderStateOptions = {}): DecoderState {
  assertOptions(options, "options");
  if (model?.kind !== "decoder-only" && model?.kind !== "encoder-decoder") {
    throw new ValueError("model", "a decoder-only or encoder-decoder model", describe((model as { kind?: unknown } | null)?.kind ?? model));
  }
  const layers = model.kind === "decoder-only" ? model.layers : model.decoderLayers;
  const caches = layers.map((l, i) => createLayerCache(l, options.cacheFactory, i));
  return {
    caches,
    get length() {
      return caches[0].length;
    },
  };
}

function checkState(state: DecoderState, numLayers: number): void {
  if (state === null || typeof state !== "object" || !Array.isArray(state.caches)) {
    throw new ValueError("state", "a DecoderState (createDecoderState)", describe(state));
  }
  if (state.caches.length !== numLayers)
    throw new ShapeError("state.caches", `${numLayers} caches (one per layer)`, `${state.caches.length}`);
  const n = state.caches[0].length;
  state.caches.forEach((c, i) => {
    if (c.length !== n) throw new ShapeError(`state.caches[${i}]`, `length ${n} (= state.caches[0].length)`, `length ${c.length}`);
  });
}

function runDecoderStep(
  input: InputEmbedding,
  layers: readonly DecoderLayer[],
  norm: NormParams | undefined,
  state: DecoderState,
  newIds: ArrayLike<number>,
  memory: Matrix | undefined,
  memoryMask: { kind: "padding"; keyLength: number } | undefined,
): Matrix {
  checkState(state, layers.length);
  let h = embedInput(input, newIds, state.caches[0].length, "newIds");
  layers.forEach((layer, i) => {
    h = decoderLayerStep(h, layer, state.caches[i], memory, memoryMask === undefined ? {} : { memoryMask });
  });
  return norm === undefined ? h : applyNorm(h, norm);
}

/**
 * Incremental decoder-only pass: feeds the t new tokens (the whole prompt on the first call — the
 * prefill — then typically one token), appending to each layer's cache. Returns their t×N_T logits,
 * equal to the last t rows of {@link decoderOnlyForward} on the whole sequence so far.
 */
export function decoderOnlyStep(model: DecoderOnlyModel, state: DecoderState, newIds: ArrayLike<number>): Matrix {
  checkModel(model, "decoder-only");
  const h = runDecoderStep(model.input, model.layers, model.finalNorm, state, newIds, undefined, undefined);
  return outputLogits(h, model.head, model.input.embedding);
}

// ---------------------------------------------------------------------------------------------
// Encoder–decoder

/**
 * Seeded encoder–decoder Transformer: source/target embeddings `[...seed, "source" | "target", "embedding"]`,
 * encoder layer i `[...seed, "encoder", i]`, decoder layer i `[...seed, "decoder", i]`, untied head
 * `[...seed, "head"]`; the head ties to the target embedding.
 */
export function initEncoderDecoder(config: EncoderDecoderConfig, seed: SeedKey): EncoderDecoderModel {
  const c = resolveModelConfig(config);
  const sourceVocabSize = config.sourceVocabSize ?? c.vocabSize;
  assertInteger(sourceVocabSize, "config.sourceVocabSize");
  const numDecoderLayers = config.numDecoderLayers ?? c.numLayers;
  assertInteger(numDecoderLayers, "config.numDecoderLayers");
  return {
    kind: "encoder-decoder",
    config: { ...c, sourceVocabSize, numDecoderLayers },
    sourceInput: initInputEmbedding(sourceVocabSize, c, derive(seed, "source")),
    targetInput: initInputEmbedding(c.vocabSize, c, derive(seed, "target")),
    encoderLayers: Array.from({ length: c.numLayers }, (_, i) => initEncoderLayer(c.layer, derive(seed, "encoder", i))),
    encoderFinalNorm: finalNorm(c),
    decoderLayers: Array.from({ length: numDecoderLayers }, (_, i) =>
      initDecoderLayer({ ...c.layer, crossAttention: true }, derive(seed, "decoder", i)),
    ),
    decoderFinalNorm: finalNorm(c),
    head: initOutputHead(c.layer.dModel, c.vocabSize, { tied: c.tieEmbeddings }, derive(seed, "head")),
  };
}

/** The encoder output E_{N_L} (N_src×d) of the source sentence: the keys/values of every cross-attention. */
export function encodeSource(model: EncoderDecoderModel, sourceIds: ArrayLike<number>, options: EncodeOptions = {}): Matrix {
  assertOptions(options, "options");
  checkModel(model, "encoder-decoder");
  return runEncoder(model.sourceInput, model.encoderLayers, model.encoderFinalNorm, sourceIds, options);
}

function checkMemory(model: EncoderDecoderModel, memory: Matrix): void {
  if (memory === null || typeof memory !== "object" || !("cols" in memory))
    throw new ValueError("memory", "the encoder output (encodeSource)", describe(memory));
  if (memory.cols !== model.config.layer.dModel)
    throw new ShapeError("memory", `*×${model.config.layer.dModel} (cols = dModel)`, memory.shape);
}

/**
 * Decoder logits (N_tgt×N_T) for a target prefix given the encoder output: row t predicts target
 * token t + 1 from target tokens 0 … t and the whole source.
 */
export function decodeTarget(
  model: EncoderDecoderModel,
  memory: Matrix,
  targetIds: ArrayLike<number>,
  options: EncodeOptions = {},
): Matrix {
  assertOptions(options, "options");
  checkModel(model, "encoder-decoder");
  checkMemory(model, memory);
  const memoryMask = paddingMask(options.sourceLength, memory.rows);
  let h = embedInput(model.targetInput, targetIds, 0, "targetIds");
  for (const layer of model.decoderLayers) h = decoderLayer(h, layer, memory, memoryMask === undefined ? {} : { memoryMask });
  if (model.decoderFinalNorm !== undefined) h = applyNorm(h, model.decoderFinalNorm);
  return outputLogits(h, model.head, model.targetInput.embedding);
}

/** Full encoder–decoder pass (Fig. 8): logits (N_tgt×N_T) = decode(encode(source), target). */
export function encoderDecoderForward(
  model: EncoderDecoderModel,
  sourceIds: ArrayLike<number>,
  targetIds: ArrayLike<number>,
  options: EncodeOptions = {},
): Matrix {
  return decodeTarget(model, encodeSource(model, sourceIds, options), targetIds, options);
}

/**
 * Incremental decoder pass of an encoder–decoder model: the t new target tokens attend causally
 * to the cached target tokens and fully to `memory`. Returns their t×N_T logits.
 */
export function encoderDecoderStep(
  model: EncoderDecoderModel,
  state: DecoderState,
  memory: Matrix,
  newIds: ArrayLike<number>,
  options: EncodeOptions = {},
): Matrix {
  assertOptions(options, "options");
  checkModel(model, "encoder-decoder");
  checkMemory(model, memory);
  const memoryMask = paddingMask(options.sourceLength, memory.rows);
  const h = runDecoderStep(model.targetInput, model.decoderLayers, model.decoderFinalNorm, state, newIds, memory, memoryMask);
  return outputLogits(h, model.head, model.targetInput.embedding);
}
