/**
 * The `decode` evaluation (issue 12): a decoder stack run with the exact cache and with a
 * compressed cache from the same prompt, teacher-forced on the same held-out continuation, so
 * both runs see the same tokens and every step is comparable. Per step:
 * - attention output error: each layer's compressed cache is paired with an exact KVCache fed the
 *   SAME projected queries/keys/values (a twin), and ‖Ŷ − Y‖_F/‖Y‖_F is averaged over the layers —
 *   the cache's own error, not its compounding through the stack;
 * - next-token KL(p_exact ‖ p_cache) and top-1 agreement of the two next-token distributions;
 * - log-likelihood of the held-out token (→ perplexity);
 * - memory of the compressed caches in bits and floats (all layers).
 *
 * The problem `synthetic-decoder` builds a seeded decoder-only model (RoPE, GQA) and its text: a
 * uniform random prompt and a continuation sampled from the exact model at temperature 1 (so the
 * exact model's perplexity on it is its own entropy rate). `qkScale` multiplies W_Q and W_K, making
 * the attention of a random-weight model peaked enough for eviction and sampling to matter.
 *
 * A shipped checkpoint plugs in the same way: give `evaluateDecode` its model and a token sequence
 * (and `kvCacheFactory(name, budgetOptions(name, budget), seed)`).
 */
import { defineMethod, defineProblem, intParam } from "./define.js";
import {
  type DecodeCache,
  type DecodeCacheFactory,
  type DecodeStepInput,
  type DecodeStepResult,
  type DecoderOnlyModel,
  KVCache,
  LatentCache,
  type LatentCacheFactory,
  type LatentDecodeCache,
  type Matrix,
  type PositionalFill,
  PretrainedModel,
  RandomStream,
  type SeedKey,
  ValueError,
  createDecoderState,
  decoderOnlyStep,
  derive,
  initDecoderOnly,
} from "@randattn/core";
import { KV_CACHE_NAMES, type KvCacheName, TurboQuantCache, budgetOptions, createLatentKvCache, kvCacheFactory } from "@randattn/sketch";
import { onlineLatentAppendCost } from "./latent-online.js";
import { checkpointConfig, pretrainedOf } from "./real.js";
import { attentionShapeOfConfig, type ProblemShape } from "./shape.js";
import type { Cost, ProblemInstance } from "./types.js";

/** A decode problem: the model, the token sequence and where the prompt ends. */
export interface DecodeStructure {
  /** The core's decoder stack, or a loaded checkpoint (its GQA layers use the KV factory, its MLA layers the latent one). */
  readonly model: DecoderOnlyModel | PretrainedModel;
  /** Prompt followed by the held-out continuation. */
  readonly text: readonly number[];
  readonly promptLength: number;
}

/** One step of the evaluation (step s predicts text[promptLength + s]). */
export interface DecodeStepMetrics {
  readonly step: number;
  /** Mean over layers of ‖Ŷ − Y‖_F/‖Y‖_F on the same inputs (the step's tokens). */
  readonly attentionError: number;
  /** KL(p_exact ‖ p_cache) of the next-token distributions. */
  readonly kl: number;
  /** Whether the argmax tokens agree. */
  readonly top1: boolean;
  /** log p_cache(held-out token) and log p_exact(held-out token). */
  readonly logProb: number;
  readonly logProbExact: number;
  /** Bits and floats held by the compressed caches of all layers after the step. */
  readonly bits: number;
  readonly floats: number;
}

/** The evaluation's per-step records and their summaries. */
export interface DecodeEvaluation {
  readonly steps: DecodeStepMetrics[];
  readonly meanAttentionError: number;
  readonly meanKl: number;
  readonly top1Agreement: number;
  /** exp(−mean log p) of the held-out tokens, compressed and exact. */
  readonly perplexity: number;
  readonly perplexityExact: number;
  /** At the end: bits of the compressed caches, and of the exact caches. */
  readonly bitsStored: number;
  readonly exactBits: number;
  readonly floatsStored: number;
  /** Decode flops of the compressed caches (all steps, all layers). */
  readonly flops: number;
}

/** A compressed cache paired with an exact twin fed the same inputs (module doc). */
class TwinCache implements DecodeCache {
  readonly kind: string;
  errors: number[] = [];
  flops = 0;
  constructor(
    readonly cache: DecodeCache,
    readonly exact: KVCache,
  ) {
    this.kind = cache.kind;
  }
  get numKvHeads() {
    return this.cache.numKvHeads;
  }
  get keyDim() {
    return this.cache.keyDim;
  }
  get valueDim() {
    return this.cache.valueDim;
  }
  get length() {
    return this.cache.length;
  }
  get fill() {
    return this.cache.fill;
  }
  step(input: DecodeStepInput): DecodeStepResult {
    const got = this.cache.step(input);
    const ref = this.exact.step(input);
    let num = 0;
    let den = 0;
    got.outputs.forEach((o, h) => {
      const r = ref.outputs[h].data;
      for (let i = 0; i < r.length; i++) {
        num += (o.data[i] - r[i]) ** 2;
        den += r[i] ** 2;
      }
    });
    this.errors.push(Math.sqrt(num / den));
    this.flops += got.flops;
    return got;
  }
  floatsStored() {
    return this.cache.floatsStored();
  }
  bitsStored() {
    return this.cache.bitsStored();
  }
}

/**
 * A compressed latent cache (MLA) paired with an exact LatentCache fed the same rows. Its error
 * after each append is ‖L̂ − L‖_F/‖L‖_F of the latent rows attention reads (the MLA analogue of
 * the attention output error: MLA's keys and values are linear in the latent, §4).
 */
class TwinLatentCache implements LatentDecodeCache {
  readonly kind: string;
  errors: number[] = [];
  flops = 0;
  constructor(
    readonly cache: LatentDecodeCache,
    readonly exact: LatentCache,
  ) {
    this.kind = cache.kind;
  }
  get latentDim() {
    return this.cache.latentDim;
  }
  get ropeDim() {
    return this.cache.ropeDim;
  }
  get length() {
    return this.cache.length;
  }
  get fill() {
    return this.cache.fill;
  }
  append(latent: Matrix, rotaryKeys?: Matrix, fill?: PositionalFill): void {
    this.cache.append(latent, rotaryKeys, fill);
    this.exact.append(latent, rotaryKeys, fill);
    const got = this.cache.latent().data;
    const ref = this.exact.latent().data;
    let num = 0;
    let den = 0;
    for (let i = 0; i < ref.length; i++) {
      num += (got[i] - ref[i]) ** 2;
      den += ref[i] ** 2;
    }
    this.errors.push(den > 0 ? Math.sqrt(num / den) : 0);
    this.flops += (this.cache as { lastFlops?: number }).lastFlops ?? 0;
  }
  latent(): Matrix {
    return this.cache.latent();
  }
  rotaryKeys(): Matrix | undefined {
    return this.cache.rotaryKeys();
  }
  floatsStored() {
    return this.cache.floatsStored();
  }
  bitsStored() {
    return this.cache.bitsStored();
  }
}

/**
 * The adapter between the evaluation and a model: a fresh decoding state built with the given
 * cache factories, returned as "append these tokens, give their logits". The core's stack takes
 * only KV caches; a checkpoint takes both (PretrainedModel.createState).
 */
function decoderRunner(
  model: DecoderOnlyModel | PretrainedModel,
  factories: { cacheFactory?: DecodeCacheFactory; latentCacheFactory?: LatentCacheFactory },
): (ids: number[]) => Matrix {
  if (model instanceof PretrainedModel) {
    const state = model.createState(factories);
    return (ids) => model.step(state, ids).logits;
  }
  const state = createDecoderState(model, factories.cacheFactory ? { cacheFactory: factories.cacheFactory } : {});
  return (ids) => decoderOnlyStep(model, state, ids);
}

/** Whether a checkpoint's attention is MLA (its caches are latent caches). */
export function isMlaModel(model: DecoderOnlyModel | PretrainedModel): boolean {
  return model instanceof PretrainedModel && model.weights.layers.some((l) => l.attention.kind === "mla");
}

function logSoftmaxRow(logits: Matrix, row: number): Float64Array {
  const n = logits.cols;
  const out = logits.data.slice(row * n, (row + 1) * n);
  let m = Number.NEGATIVE_INFINITY;
  for (const v of out) if (v > m) m = v;
  let s = 0;
  for (const v of out) s += Math.exp(v - m);
  const lse = m + Math.log(s);
  for (let i = 0; i < n; i++) out[i] -= lse;
  return out;
}

function argmax(x: Float64Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

/**
 * Runs the decode evaluation (module doc): prefill `text[0 … promptLength)`, then feed the held-out
 * tokens one by one with the exact caches and with `factory`'s caches.
 * @throws ValueError when the text has no held-out token.
 */
export function evaluateDecode(
  problem: DecodeStructure,
  factory: DecodeCacheFactory,
  latentFactory?: LatentCacheFactory,
): DecodeEvaluation {
  const { model, text, promptLength } = problem;
  const steps = text.length - promptLength;
  if (!(promptLength >= 1 && steps >= 1))
    throw new ValueError("problem.text", "a prompt and at least one held-out token", `${text.length} tokens`);
  const twins: (TwinCache | TwinLatentCache)[] = [];
  const compressed = decoderRunner(model, {
    cacheFactory: (spec) => {
      const twin = new TwinCache(factory(spec), new KVCache(spec));
      twins.push(twin);
      return twin;
    },
    latentCacheFactory: (spec) => {
      const inner = latentFactory ? latentFactory(spec) : new LatentCache({ latentDim: spec.latentDim, ropeDim: spec.ropeDim });
      const twin = new TwinLatentCache(inner, new LatentCache({ latentDim: spec.latentDim, ropeDim: spec.ropeDim }));
      twins.push(twin);
      return twin;
    },
  });
  const exact = decoderRunner(model, {});
  let lc = compressed(text.slice(0, promptLength));
  let le = exact(text.slice(0, promptLength));
  const records: DecodeStepMetrics[] = [];
  for (let s = 0; s < steps; s++) {
    const pc = logSoftmaxRow(lc, lc.rows - 1);
    const pe = logSoftmaxRow(le, le.rows - 1);
    let kl = 0;
    for (let i = 0; i < pe.length; i++) kl += Math.exp(pe[i]) * (pe[i] - pc[i]);
    const target = text[promptLength + s];
    records.push({
      step: s,
      attentionError: twins.reduce((a, t) => a + t.errors[t.errors.length - 1], 0) / twins.length,
      kl: Math.max(0, kl),
      top1: argmax(pc) === argmax(pe),
      logProb: pc[target],
      logProbExact: pe[target],
      bits: twins.reduce((a, t) => a + t.bitsStored(), 0),
      floats: twins.reduce((a, t) => a + t.floatsStored(), 0),
    });
    if (s + 1 < steps) {
      lc = compressed([target]);
      le = exact([target]);
    }
  }
  const mean = (f: (r: DecodeStepMetrics) => number) => records.reduce((a, r) => a + f(r), 0) / records.length;
  return {
    steps: records,
    meanAttentionError: mean((r) => r.attentionError),
    meanKl: mean((r) => r.kl),
    top1Agreement: mean((r) => (r.top1 ? 1 : 0)),
    perplexity: Math.exp(-mean((r) => r.logProb)),
    perplexityExact: Math.exp(-mean((r) => r.logProbExact)),
    bitsStored: records[records.length - 1].bits,
    exactBits: twins.reduce((a, t) => a + t.exact.bitsStored(), 0),
    floatsStored: records[records.length - 1].floats,
    flops: twins.reduce((a, t) => a + t.flops, 0),
  };
}

/** The seeded synthetic decoder and its text (module doc). */
export function syntheticDecodeProblem(
  params: {
    vocabSize: number;
    numLayers: number;
    dModel: number;
    numHeads: number;
    numKvHeads: number;
    promptLength: number;
    steps: number;
    qkScale: number;
    embeddingStd?: number;
  },
  seed: SeedKey,
): DecodeStructure {
  const base = initDecoderOnly(
    {
      vocabSize: params.vocabSize,
      numLayers: params.numLayers,
      dModel: params.dModel,
      numHeads: params.numHeads,
      numKvHeads: params.numKvHeads,
      dHidden: 2 * params.dModel,
      positional: "rope",
      placement: "pre",
      norm: "rms",
      embeddingStd: params.embeddingStd ?? 1,
    },
    derive(seed, "model"),
  );
  const scaleAll = (ws: readonly Matrix[]) =>
    ws.map((w) => {
      const c = w.clone();
      for (let i = 0; i < c.data.length; i++) c.data[i] *= params.qkScale;
      return c;
    });
  const model: DecoderOnlyModel = {
    ...base,
    layers: base.layers.map((l) => ({
      ...l,
      selfAttention: { ...l.selfAttention, queries: scaleAll(l.selfAttention.queries), keys: scaleAll(l.selfAttention.keys) },
    })),
  };
  const stream = new RandomStream(derive(seed, "text"));
  const text = Array.from({ length: params.promptLength }, () => stream.int(params.vocabSize));
  const state = createDecoderState(model);
  let logits = decoderOnlyStep(model, state, text);
  for (let s = 0; s < params.steps; s++) {
    const lp = logSoftmaxRow(logits, logits.rows - 1);
    const u = stream.uniform();
    let acc = 0;
    let token = lp.length - 1;
    for (let i = 0; i < lp.length; i++) {
      acc += Math.exp(lp[i]);
      if (u < acc) {
        token = i;
        break;
      }
    }
    text.push(token);
    if (s + 1 < params.steps) logits = decoderOnlyStep(model, state, [token]);
  }
  return { model, text, promptLength: params.promptLength };
}

const int = intParam;

/** Problem `synthetic-decoder`: a seeded decoder-only stack and its sampled text (no attention tensors). */
export const syntheticDecoder = defineProblem({
  name: "synthetic-decoder",
  description:
    "A seeded decoder-only stack (pre-RMSNorm, RoPE, GQA, W_Q and W_K scaled by qkScale) and a text: a random prompt and a continuation sampled from the model, for the decode evaluation of KV caches.",
  paramsSchema: {
    type: "object",
    properties: {
      vocabSize: int(2, 4096, 64, "vocabulary size"),
      numLayers: int(1, 16, 2, "layers"),
      dModel: int(2, 512, 32, "model width"),
      numHeads: int(1, 64, 4, "query heads H"),
      numKvHeads: int(1, 64, 2, "KV heads G"),
      promptLength: int(1, 4096, 96, "prompt tokens (prefill)"),
      steps: int(1, 4096, 32, "held-out tokens decoded"),
      qkScale: {
        type: "number",
        exclusiveMinimum: 0,
        maximum: 100,
        default: 2.5,
        description: "multiplies W_Q and W_K (peaks the attention)",
      },
      embeddingStd: {
        type: "number",
        exclusiveMinimum: 0,
        maximum: 100,
        default: 1,
        description: "std of the (tied) token embedding: scales the logits",
      },
    },
    additionalProperties: false,
  },
  structuralParams: ["vocabSize", "numLayers", "dModel", "numHeads", "numKvHeads", "promptLength", "steps", "qkScale", "embeddingStd"],
  producesTensors: false,
  generate(p, context, seed): ProblemInstance {
    const { kernel, mask } = context;
    const decode = syntheticDecodeProblem(p as unknown as Parameters<typeof syntheticDecodeProblem>[0], seed);
    const instance: ProblemInstance & { decode: DecodeStructure } = { heads: [], kernel, mask, numKvHeads: p.numKvHeads, decode };
    return instance;
  },
});

/**
 * Problem `checkpoint-decode`: a shipped checkpoint and a window of its held-out text (default the
 * models/heldout.txt next to the checkpoint folder, tokenized as the `model` problem does): the
 * first `promptLength` tokens are the prompt, the next `steps` the teacher-forced continuation.
 */
export const checkpointDecode = defineProblem({
  name: "checkpoint-decode",
  description:
    "A Hugging Face checkpoint (GQA: any KV cache; MLA: latent caches) and a window of held-out text (default models/heldout.txt): prompt then teacher-forced continuation, for the decode evaluation of KV caches.",
  paramsSchema: {
    type: "object",
    properties: {
      checkpoint: { type: "string", minLength: 1, description: "Hugging Face checkpoint folder, relative to the config file" },
      text: {
        type: "string",
        default: "",
        description: "held-out text (fortune format), relative to the config; '' = heldout.txt next to the checkpoint folder",
      },
      offset: int(0, 1 << 20, 0, "first token of the window in the text's token stream"),
      promptLength: int(1, 4096, 64, "prompt tokens (prefill)"),
      steps: int(1, 4096, 32, "held-out tokens decoded"),
    },
    required: ["checkpoint"],
    additionalProperties: false,
  },
  structuralParams: ["checkpoint", "text", "offset", "promptLength", "steps"],
  producesTensors: false,
  shape(p, context): ProblemShape {
    // config.json alone: no weights, no tokenizer.
    const attention = attentionShapeOfConfig(checkpointConfig(p.checkpoint, context.baseDir));
    return {
      heads: [],
      kernel: context.kernel,
      mask: context.mask,
      numKvHeads: 1,
      decode: { attention, promptLength: p.promptLength, steps: p.steps },
    };
  },
  generate(p, context): ProblemInstance {
    const { kernel, mask } = context;
    const pre = pretrainedOf({ checkpoint: p.checkpoint, text: p.text, offset: p.offset, n: p.promptLength + p.steps }, context.baseDir);
    const decode: DecodeStructure = { model: pre.model, text: pre.ids, promptLength: p.promptLength };
    const instance: ProblemInstance & { decode: DecodeStructure } = { heads: [], kernel, mask, numKvHeads: 1, decode };
    return instance;
  },
});

/** Caches of MLA checkpoints: `budget` is the rank of `online-svd`. */
export const LATENT_DECODE_CACHES = ["exact", "online-svd"] as const;

const EXTRAS = [
  {
    name: "attention_error",
    description:
      "mean over steps and layers of ‖Ŷ − Y‖_F/‖Y‖_F (same inputs as the exact twin); MLA latent caches: ‖L̂ − L‖_F/‖L‖_F of the latent",
  },
  { name: "next_token_kl", description: "mean over steps of KL(p_exact ‖ p_cache), nats" },
  { name: "top1_agreement", description: "fraction of steps whose argmax next token equals the exact cache's" },
  { name: "perplexity", description: "perplexity of the held-out continuation with this cache" },
  { name: "perplexity_exact", description: "perplexity of the held-out continuation with the exact cache" },
  { name: "cache_bits", description: "bits held by the caches of all layers after the last step" },
  { name: "bits_fraction", description: "cache_bits / bits of the exact caches" },
  { name: "key_distortion", description: "turbo-quant: mean ‖y − ŷ‖² of the unit rotated keys (MSE stage)" },
  { name: "distortion_lower_bound", description: "turbo-quant: 4^(−b) with b the MSE bits (Shannon lower bound, TurboQuant Thm 3)" },
] as const;

/**
 * The decode cost of `evaluateDecode` with every token kept, from sizes: a prefill of P tokens, then
 * S − 1 single-token steps. Per layer and query head, a step of t tokens against n stored ones
 * costs what sketch's FullCache counts (kvcache/base.ts): the stored part 2·t·n·d + t·n·(2 + 2d_V),
 * the new tokens' causal part t(t+1)/2·(2d + 2 + 2d_V), the merge t·(3 + 2d_V) and the division
 * t·d_V. MLA: the exact latent cache counts no flops (it stores), online-svd its updates.
 */
export function decodeCostEstimate(decode: NonNullable<ProblemShape["decode"]>, cache: string, budget: number): Cost {
  const a = decode.attention;
  const P = decode.promptLength;
  const total = P + decode.steps - 1;
  const latentCache = (LATENT_DECODE_CACHES as readonly string[]).includes(cache);
  // The same refusals as run: MLA caches its latent (latent caches only), GQA its keys and values.
  if (a.latentDim !== undefined && !latentCache)
    throw new ValueError(
      "method.params.cache",
      `a latent cache for an MLA checkpoint (${LATENT_DECODE_CACHES.join(", ")})`,
      JSON.stringify(cache),
    );
  if (a.latentDim === undefined && latentCache)
    throw new ValueError("method.params.cache", `a KV cache (${KV_CACHE_NAMES.join(", ")}) for a GQA model`, JSON.stringify(cache));
  if (a.latentDim !== undefined) {
    const dL = a.latentDim;
    const dR = a.ropeDim ?? 0;
    if (cache !== "online-svd") return { flops: 0, floatsStored: a.numLayers * total * (dL + dR) };
    const { flops, rows: n, rank: k } = onlineLatentAppendCost(dL, Math.min(budget, dL), P, Math.max(0, decode.steps - 1));
    return { flops: a.numLayers * flops, floatsStored: a.numLayers * (n * k + k + dL * k + n * dR) };
  }
  const d = a.dQK;
  const dV = a.dV;
  const step = (t: number, n: number) =>
    2 * t * n * d + t * n * (2 + 2 * dV) + ((t * (t + 1)) / 2) * (2 * d + 2 + 2 * dV) + t * (3 + 2 * dV) + t * dV;
  let perHead = step(P, 0);
  for (let s = 1; s < decode.steps; s++) perHead += step(1, P + s - 1);
  return { flops: a.numLayers * a.numHeads * perHead, floatsStored: a.numLayers * a.numKvHeads * total * (d + dV) };
}

/** Method `kv-cache-decode`: the decode evaluation of one cache at one budget. */
export const kvCacheDecode = defineMethod({
  name: "kv-cache-decode",
  description:
    "Decode evaluation (registry/decode.ts) of a KV cache of @randattn/sketch's kvcache at a budget (budgetOptions: tokens, block size, clusters, projection rows, bits or frequencies): attention error, next-token KL, top-1 agreement, perplexity and memory in bits.",
  family: "sampling",
  paramsSchema: {
    type: "object",
    properties: {
      cache: {
        type: "string",
        enum: [...KV_CACHE_NAMES, ...LATENT_DECODE_CACHES],
        description: "cache name (createKvCache; on an MLA checkpoint createLatentKvCache: exact or online-svd, budget = rank)",
      },
      budget: { type: "integer", minimum: 1, maximum: 1_000_000, default: 32, description: "the cache's budget knob (budgetOptions)" },
    },
    required: ["cache"],
    additionalProperties: false,
  },
  exposesWeights: false,
  extraMetrics: EXTRAS,
  costEstimate: {
    kind: "approximate",
    note: "exact for the `full` cache (GQA) and the `exact` latent cache (MLA); for the others it is the full cache's cost (every token kept): evicting caches attend to fewer tokens, quantizing ones add their (de)quantization, H2O its score bookkeeping, online-svd its updates (counted for generic latents)",
  },
  estimateCost(problem, params) {
    const decode = problem.decode;
    if (!decode)
      throw new ValueError(
        "problem",
        'the "synthetic-decoder" or "checkpoint-decode" problem for method "kv-cache-decode"',
        "a problem without a decoder",
      );
    return decodeCostEstimate(decode, params.cache, params.budget);
  },
  run(problem, params, _context, seed) {
    const decode = (problem as ProblemInstance & { decode?: DecodeStructure }).decode;
    if (!decode)
      throw new ValueError(
        "problem",
        'the "synthetic-decoder" or "checkpoint-decode" problem for method "kv-cache-decode"',
        "a problem without a decoder",
      );
    const cacheSeed = derive(seed, "cache");
    if (isMlaModel(decode.model)) {
      // MLA caches the latent (§4): only latent caches apply; budget = rank kept.
      const latentName = params.cache as (typeof LATENT_DECODE_CACHES)[number];
      if (!LATENT_DECODE_CACHES.includes(latentName))
        throw new ValueError(
          "method.params.cache",
          `a latent cache for an MLA checkpoint (${LATENT_DECODE_CACHES.join(", ")})`,
          JSON.stringify(params.cache),
        );
      const r = evaluateDecode(
        decode,
        () => {
          throw new ValueError("problem", "an MLA checkpoint without GQA layers", "a GQA layer");
        },
        (spec) =>
          createLatentKvCache(
            latentName,
            { latentDim: spec.latentDim, ropeDim: spec.ropeDim, rank: Math.min(params.budget, spec.latentDim) },
            derive(cacheSeed, "layer", spec.layer),
          ),
      );
      return { output: null, cost: { flops: r.flops, floatsStored: r.floatsStored }, extras: decodeExtras(r, null, null) };
    }
    if ((LATENT_DECODE_CACHES as readonly string[]).includes(params.cache))
      throw new ValueError(
        "method.params.cache",
        `a KV cache (${KV_CACHE_NAMES.join(", ")}) for a GQA model`,
        JSON.stringify(params.cache),
      );
    const name = params.cache as KvCacheName;
    const settings = budgetOptions(name, params.budget);
    const turbo: TurboQuantCache[] = [];
    const factory = kvCacheFactory(name, settings as never, cacheSeed);
    const r = evaluateDecode(decode, (spec) => {
      const c = factory(spec);
      if (c instanceof TurboQuantCache) turbo.push(c);
      return c;
    });
    const mseBits = name === "turbo-quant" ? params.budget - 1 : undefined;
    return {
      output: null,
      cost: { flops: r.flops, floatsStored: r.floatsStored },
      extras: decodeExtras(
        r,
        turbo.length > 0 ? turbo.reduce((a, c) => a + c.meanKeyDistortion(), 0) / turbo.length : null,
        mseBits === undefined ? null : 4 ** -mseBits,
      ),
    };
  },
});

function decodeExtras(r: DecodeEvaluation, keyDistortion: number | null, lowerBound: number | null) {
  return {
    attention_error: r.meanAttentionError,
    next_token_kl: r.meanKl,
    top1_agreement: r.top1Agreement,
    perplexity: r.perplexity,
    perplexity_exact: r.perplexityExact,
    cache_bits: r.bitsStored,
    bits_fraction: r.bitsStored / r.exactBits,
    key_distortion: keyDistortion,
    distortion_lower_bound: lowerBound,
  };
}
