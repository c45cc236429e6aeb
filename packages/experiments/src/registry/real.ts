/**
 * Real attention (issue 10 §4): the `model` problem generator reads a Hugging Face checkpoint,
 * runs the exact core forward over a held-out text and hands one layer's real Q, K, V per head to
 * the methods; the `sketch-perplexity` method replaces exact attention by a registered sketch in
 * chosen layers of that same model (prefill) and scores the whole model downstream — perplexity,
 * next-token KL and top-1 agreement against the exact model.
 *
 * Both build the checkpoint as `@randattn/core/node`'s `loadPretrained` does (`PretrainedModel.fromStore`), i.e. the same
 * forward that matches torch (packages/core/test/pretrained/shipped-models.test.ts). Loaded models
 * and forwards are memoized per worker: a sweep over layers and heads runs the forward once.
 */
import {
  type AttentionOverrideHead,
  type Cost,
  derive,
  type ForwardResult,
  FormatError,
  HuggingFaceTokenizer,
  type Matrix,
  memoryStore,
  parseModelConfig,
  type PretrainedConfig,
  PretrainedModel,
  SHARD_INDEX_FILE,
  sliceRows,
  ValueError,
} from "@randattn/core";
import { assertShape } from "@randattn/core/internal";
import { nodeFs, nodePath } from "../platform/node.js";
import { defineMethod, defineProblem, enumParam, intParam, paramsSchema } from "./define.js";
import { exactCost } from "./exact.js";
import { attentionShapeOfConfig, type ProblemShape } from "./shape.js";
import type { AttentionHead, MethodDefinition, Params, PretrainedStructure, ProblemInstance } from "./types.js";

const ARG = "problem.params.checkpoint";

/** A data path of a config, resolved against the config's folder (as problems.ts's npy paths). */
function resolveDataPath(path: string, baseDir: string): string {
  const p = nodePath(ARG);
  return p.isAbsolute(path) ? path : p.resolve(baseDir, path);
}

function readText(path: string, argument: string): string {
  try {
    return nodeFs(argument).readFileSync(path, "utf8");
  } catch (e) {
    throw new FormatError(argument, `a readable file ${path}`, (e as NodeJS.ErrnoException).code ?? String(e));
  }
}

/**
 * A checkpoint folder read into memory and built like `@randattn/core/node`'s `loadPretrained`
 * (config.json → typed config, the safetensors file or shards, tokenizer.json), but through the
 * platform's call-time Node built-ins, so the registry still bundles for the browser.
 */
function loadCheckpoint(dir: string): PretrainedModel {
  const fs = nodeFs(ARG);
  const join = nodePath(ARG).join;
  const configPath = join(dir, "config.json");
  const config = parseModelConfig(JSON.parse(readText(configPath, ARG)), configPath);
  const files: Record<string, Uint8Array | string> = {};
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith(".safetensors")) files[name] = new Uint8Array(fs.readFileSync(join(dir, name)));
    else if (name === SHARD_INDEX_FILE) files[name] = readText(join(dir, name), ARG);
  }
  const tokPath = join(dir, "tokenizer.json");
  let tokenizer: HuggingFaceTokenizer | undefined;
  if (fs.existsSync(tokPath)) {
    const cfgPath = join(dir, "tokenizer_config.json");
    const cfg = fs.existsSync(cfgPath) ? JSON.parse(readText(cfgPath, ARG)) : {};
    tokenizer = new HuggingFaceTokenizer(JSON.parse(readText(tokPath, ARG)), cfg, tokPath);
  }
  return PretrainedModel.fromStore(config, memoryStore(files, dir), tokenizer);
}

/** A checkpoint's config.json, parsed (sizes only: no weights are read). */
export function checkpointConfig(checkpoint: string | undefined, baseDir: string): PretrainedConfig {
  if (typeof checkpoint !== "string") throw new ValueError("problem.params.checkpoint", "a checkpoint folder", String(checkpoint));
  const path = nodePath(ARG).join(resolveDataPath(checkpoint, baseDir), "config.json");
  return parseModelConfig(JSON.parse(readText(path, ARG)), path);
}

/** Longest token window the `model` problem takes from a text. */
export const MAX_MODEL_TOKENS = 4096;

export type { PretrainedStructure };

const models = new Map<string, PretrainedModel>();
const forwards = new Map<string, ForwardResult>();
const MEMO_SIZE = 4;

function memo<T>(map: Map<string, T>, key: string, make: () => T): T {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  const v = make();
  map.set(key, v);
  while (map.size > MEMO_SIZE) map.delete(map.keys().next().value as string);
  return v;
}

/** The checkpoint at `dir`, loaded once per process. */
export function loadModelCached(dir: string): PretrainedModel {
  return memo(models, dir, () => loadCheckpoint(dir));
}

/** `bos_token_id` of the checkpoint's config.json (undefined when absent). */
function bosTokenId(dir: string): number | undefined {
  const raw = JSON.parse(readText(nodePath(ARG).join(dir, "config.json"), ARG)) as { bos_token_id?: unknown };
  return typeof raw.bos_token_id === "number" ? raw.bos_token_id : undefined;
}

/**
 * The token stream of a text in fortune-file format (documents separated by a line holding a
 * single `%`, as models/heldout.txt): each document encoded with BOS in front, as the training
 * script (scripts/models/train.py) fed the model. A text without `%` lines is one document.
 */
export function tokenizeDocuments(model: PretrainedModel, text: string, bos: number | undefined, argument: string): number[] {
  const tok = model.tokenizer;
  if (!tok) throw new FormatError(argument, "a checkpoint with tokenizer.json", "no tokenizer.json");
  const ids: number[] = [];
  for (const doc of text.split(/^%\n/m)) {
    const body = doc.replace(/\n+$/, "");
    if (body.length === 0) continue;
    const enc = tok.encode(body);
    if (bos !== undefined && enc[0] !== bos) ids.push(bos);
    ids.push(...enc);
  }
  return ids;
}

const modelSchema = paramsSchema(
  {
    checkpoint: { type: "string", minLength: 1, description: "Hugging Face checkpoint folder, relative to the config file" },
    text: {
      type: "string",
      default: "",
      description:
        "held-out text (fortune format: '%' lines separate documents), relative to the config; '' = heldout.txt next to the checkpoint folder",
    },
    offset: intParam(0, 1 << 20, 0, "first token of the window in the text's token stream"),
    n: intParam(1, MAX_MODEL_TOKENS, 256, "sequence length N_KV (tokens of the window)"),
    nQueries: intParam(0, MAX_MODEL_TOKENS, 0, "N_Q: the last N_Q positions' queries; 0 means all n"),
    layer: intParam(0, 1024, 0, "decoder layer whose attention is taken"),
    head: intParam(-1, 4096, -1, "query head; -1 means every query head of the layer (GQA groups share K, V)"),
    tensors: enumParam(["post-rope", "pre-rope"] as const, "post-rope", "Q and K after RoPE (what the model attends with) or before it"),
  },
  ["checkpoint"],
);

/** A checkpoint and a token window of its held-out text (the `model` problem's loading). */
export function pretrainedOf(
  params: { checkpoint?: string; text: string; offset: number; n: number },
  baseDir: string,
): PretrainedStructure & { key: string } {
  if (typeof params.checkpoint !== "string")
    throw new ValueError("problem.params.checkpoint", "a checkpoint folder", String(params.checkpoint));
  const dir = resolveDataPath(params.checkpoint, baseDir);
  const model = loadModelCached(dir);
  const path = nodePath(ARG);
  const textPath = params.text === "" ? path.join(path.dirname(dir), "heldout.txt") : resolveDataPath(params.text, baseDir);
  const text = readText(textPath, "problem.params.text");
  const stream = tokenizeDocuments(model, text, bosTokenId(dir), "problem.params.checkpoint");
  if (params.offset + params.n > stream.length) {
    throw new ValueError("problem.params.n", `offset + n ≤ ${stream.length} (tokens in ${textPath})`, `${params.offset} + ${params.n}`);
  }
  const ids = stream.slice(params.offset, params.offset + params.n);
  return { model, ids, checkpoint: dir, key: JSON.stringify([dir, textPath, params.offset, params.n]) };
}

/** The exact forward of a window with every layer's Q, K, V (pre- and post-RoPE) captured. */
function capturedForward(p: PretrainedStructure & { key: string }): ForwardResult {
  return memo(forwards, p.key, () => p.model.forward(p.ids, { capture: { tensors: ["qPre", "q", "kPre", "k", "v", "latent"] } }));
}

/** The exact logits of a window (memoized with the captured forward). */
export function exactForward(p: PretrainedStructure): ForwardResult {
  return capturedForward({ ...p, key: JSON.stringify([p.checkpoint, p.ids]) });
}

/**
 * `model`: a decoder layer's real queries, keys and values from a checkpoint run over held-out
 * text. The softmax kernel gets the layer's own scale unless the config sets one; the config's mask
 * applies (`mask: causal` is the model's own attention; with `nQueries` the ERRATA offset
 * N_KV − N_Q keeps the last queries causal).
 */
export const modelProblem = defineProblem({
  name: "model",
  description:
    "Real Q, K, V of one layer (every head, or one) of a Hugging Face checkpoint run by the exact core forward over held-out text (default: the shipped models/heldout.txt); results carry problem_layer / problem_head.",
  paramsSchema: modelSchema,
  structuralParams: ["checkpoint", "text", "offset", "n", "nQueries", "layer", "head", "tensors"],
  producesTensors: true,
  shape(p, context): ProblemShape {
    // From config.json alone: the heads' sizes, without loading weights or running the forward.
    const attention = attentionShapeOfConfig(checkpointConfig(p.checkpoint, context.baseDir));
    if (p.layer >= attention.numLayers)
      throw new ValueError("problem.params.layer", `a layer in [0, ${attention.numLayers})`, String(p.layer));
    if (p.head >= attention.numHeads)
      throw new ValueError("problem.params.head", `-1 or a head in [0, ${attention.numHeads})`, String(p.head));
    const nQ = p.nQueries > 0 ? p.nQueries : p.n;
    const keys = Array.from({ length: attention.numKvHeads }, () => ({ rows: p.n, cols: attention.dQK }));
    const values = Array.from({ length: attention.numKvHeads }, () => ({ rows: p.n, cols: attention.dV }));
    const group = attention.numHeads / attention.numKvHeads;
    const wanted = p.head < 0 ? Array.from({ length: attention.numHeads }, (_, h) => h) : [p.head];
    const heads = wanted.map((h) => ({
      queries: { rows: nQ, cols: attention.dQK },
      keys: keys[Math.floor(h / group)],
      values: values[Math.floor(h / group)],
    }));
    return {
      heads,
      kernel: context.kernel,
      mask: context.mask,
      numKvHeads: p.head < 0 ? attention.numKvHeads : 1,
      pretrained: { attention, tokens: p.n },
    };
  },
  generate(p, context, _seed) {
    const pre = pretrainedOf(p, context.baseDir);
    const { model } = pre;
    if (p.layer >= model.numLayers) throw new ValueError("problem.params.layer", `a layer in [0, ${model.numLayers})`, String(p.layer));
    const att = model.weights.layers[p.layer].attention;
    const numHeads = att.kind === "mla" ? att.weights.queryUp.length : att.weights.queries.length;
    if (p.head >= numHeads) throw new ValueError("problem.params.head", `-1 or a head in [0, ${numHeads})`, String(p.head));
    const nQ = p.nQueries > 0 ? p.nQueries : p.n;
    if (nQ > p.n) throw new ValueError("problem.params.nQueries", `at most n = ${p.n}`, String(p.nQueries));
    const cap = capturedForward(pre).layers[p.layer];
    const post = p.tensors === "post-rope";
    const qs = (post ? cap.q : cap.qPre) as Matrix[];
    const ks = (post ? cap.k : cap.kPre) as Matrix[];
    const vs = cap.v as Matrix[];
    const group = qs.length / ks.length;
    const wanted = p.head < 0 ? qs.map((_, h) => h) : [p.head];
    const heads: AttentionHead[] = wanted.map((h) => {
      const g = Math.floor(h / group); // HF repeat_kv: contiguous query heads share a KV head
      return { queries: nQ === p.n ? qs[h] : sliceRows(qs[h], p.n - nQ, p.n), keys: ks[g], values: vs[g] };
    });
    const kernel =
      context.kernel.kind === "softmax" && context.kernel.scale === undefined
        ? { kind: "softmax" as const, scale: att.scale }
        : context.kernel;
    const numKvHeads = p.head < 0 ? ks.length : 1;
    return {
      heads,
      kernel,
      mask: context.mask,
      numKvHeads,
      pretrained: { model, ids: pre.ids, checkpoint: pre.checkpoint, layer: p.layer },
    };
  },
});

/** Size params a `budget` fills, in order of preference (the first the sketch's schema has). */
export const BUDGET_PARAMS = ["samples", "k", "numFrequencies", "sampleSize", "landmarks", "coresetSize", "rank", "budget"] as const;

/**
 * A sketch method's params from a JSON object text: unknown names and wrong types rejected,
 * defaults of its schema filled, and `budget` (when > 0) put into its first size param.
 */
export function sketchParamsFor(sketch: MethodDefinition, json: string, budget: number): Params {
  let given: unknown;
  try {
    given = JSON.parse(json);
  } catch {
    throw new ValueError("method.params.sketchParams", "a JSON object", JSON.stringify(json));
  }
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    throw new ValueError("method.params.sketchParams", "a JSON object", JSON.stringify(json));
  }
  const props = sketch.paramsSchema.properties;
  const out: Params = {};
  for (const [name, value] of Object.entries(given as Record<string, unknown>)) {
    const s = props[name];
    if (!s)
      throw new ValueError(`method.params.sketchParams.${name}`, `a param of "${sketch.name}" (${Object.keys(props).join(", ")})`, name);
    const type = s.type === "integer" ? "number" : (s.type as string);
    if (typeof value !== type || (s.type === "integer" && !Number.isInteger(value))) {
      throw new ValueError(`method.params.sketchParams.${name}`, `a ${s.type as string}`, JSON.stringify(value));
    }
    out[name] = value as number | string | boolean;
  }
  if (budget > 0) {
    const target = BUDGET_PARAMS.find((b) => b in props);
    if (!target)
      throw new ValueError("method.params.budget", `0 (method "${sketch.name}" has none of ${BUDGET_PARAMS.join(", ")})`, String(budget));
    out[target] = budget;
  }
  for (const [name, s] of Object.entries(props))
    if (!(name in out) && s.default !== undefined) out[name] = s.default as number | string | boolean;
  return out;
}

/** The layers of a `layers` param: "all" or a comma list of indices. */
export function parseLayers(spec: string, numLayers: number): number[] {
  if (spec.trim() === "all") return Array.from({ length: numLayers }, (_, l) => l);
  const out = spec.split(",").map((s) => Number(s.trim()));
  for (const l of out) {
    if (!Number.isInteger(l) || l < 0 || l >= numLayers) {
      throw new ValueError("method.params.layers", `"all" or comma-separated layers in [0, ${numLayers})`, JSON.stringify(spec));
    }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/** log-softmax of one logits row into `out`. */
function logSoftmaxRow(row: Float64Array, out: Float64Array): void {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of row) max = Math.max(max, v);
  let z = 0;
  for (const v of row) z += Math.exp(v - max);
  const lz = max + Math.log(z);
  for (let j = 0; j < row.length; j++) out[j] = row[j] - lz;
}

function argmax(row: Float64Array): number {
  let best = 0;
  for (let j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
  return best;
}

/** Downstream scores of approximate logits against exact ones for the token window `ids`. */
export interface DownstreamScores {
  /** exp(mean −log p̂(ids[i+1] | ids[..i])) over the window's N − 1 predictions. */
  readonly perplexity: number;
  /** The exact model's perplexity on the same predictions. */
  readonly exactPerplexity: number;
  /** Mean over the N positions of KL(p_exact ‖ p̂) in nats. */
  readonly meanKl: number;
  /** Fraction of the N positions whose argmax (lowest id on ties) agrees. */
  readonly top1Agreement: number;
}

/** The exact side of {@link downstreamScores}: per row, log p, p = exp(log p) and the argmax. */
interface ExactDistributions {
  readonly logProbs: Float64Array;
  readonly probs: Float64Array;
  readonly argmax: Int32Array;
}

/** The exact side of {@link downstreamScores} for a logits matrix. */
function distributionsOf(exact: Matrix): ExactDistributions {
  const n = exact.rows;
  const V = exact.cols;
  const logProbs = new Float64Array(n * V);
  const probs = new Float64Array(n * V);
  const best = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const re = exact.rowView(i);
    const le = logProbs.subarray(i * V, (i + 1) * V);
    logSoftmaxRow(re, le);
    for (let j = 0; j < V; j++) probs[i * V + j] = Math.exp(le[j]);
    best[i] = argmax(re);
  }
  return { logProbs, probs, argmax: best };
}

/**
 * The exact side per memoized exact forward (exactForward: one per window, never modified): every
 * task of a window scores against the same logits, and their log-softmax and exp(log p) — two of the
 * three exponentials per vocabulary entry and position — were recomputed by each (issue 14: 0.8 s
 * of the real-perplexity sweep's 5.5 s). The same expressions, so the same bits.
 */
const memoDistributions = new WeakMap<ForwardResult, ExactDistributions>();

function exactDistributionsOf(exact: ForwardResult): ExactDistributions {
  let d = memoDistributions.get(exact);
  if (d === undefined) {
    d = distributionsOf(exact.logits);
    memoDistributions.set(exact, d);
  }
  return d;
}

/** Perplexity, next-token KL and top-1 agreement of `approx` against `exact` logits. */
export function downstreamScores(exact: Matrix, approx: Matrix, ids: readonly number[]): DownstreamScores {
  return scoresAgainst(distributionsOf(exact), exact.rows, exact.cols, approx, ids);
}

/** {@link downstreamScores} with the exact side's distributions given (n × V). */
function scoresAgainst(exact: ExactDistributions, n: number, V: number, approx: Matrix, ids: readonly number[]): DownstreamScores {
  assertShape(approx, "approx", n, V, "the exact logits' shape");
  const { logProbs, probs, argmax: exactArgmax } = exact;
  const la = new Float64Array(V);
  let nllE = 0;
  let nllA = 0;
  let kl = 0;
  let agree = 0;
  for (let i = 0; i < n; i++) {
    const o = i * V;
    const ra = approx.rowView(i);
    logSoftmaxRow(ra, la);
    let k = 0;
    for (let j = 0; j < V; j++) k += probs[o + j] * (logProbs[o + j] - la[j]);
    kl += k;
    if (exactArgmax[i] === argmax(ra)) agree++;
    if (i + 1 < n) {
      nllE -= logProbs[o + ids[i + 1]];
      nllA -= la[ids[i + 1]];
    }
  }
  const m = Math.max(1, n - 1);
  return { perplexity: Math.exp(nllA / m), exactPerplexity: Math.exp(nllE / m), meanKl: kl / n, top1Agreement: agree / n };
}

const perplexitySchema = paramsSchema({
  sketch: {
    type: "string",
    minLength: 1,
    default: "exact",
    description: "registered method run in place of each replaced head's exact attention",
  },
  sketchParams: { type: "string", default: "{}", description: "the sketch's params as a JSON object (its defaults fill the rest)" },
  budget: intParam(0, 1 << 20, 0, "when > 0: the sketch's size param (samples, k, numFrequencies, rank, …, the first it has)"),
  layers: {
    type: "string",
    default: "all",
    minLength: 1,
    description: '"all" or comma-separated layer indices whose attention is replaced',
  },
});

/**
 * `sketch-perplexity`: the checkpoint of a `model` problem run over its token window twice —
 * exactly, and with every query head of the chosen layers attended by `sketch` (each on the
 * single-head problem of that head: its post-RoPE queries, the cached keys and values, the layer's
 * softmax scale and the causal mask). Later layers see the sketch's errors, so the scores are
 * end to end. Cost: the sketch's summed over replaced heads; `exact_attention_flops` is exact
 * materialized attention of the same heads, the reference for `flops`. Head (layer l, head h)
 * draws with the seed derive(seed, "layer", l, "head", h).
 */
export function sketchPerplexityMethod(lookup: (name: string, argument: string) => MethodDefinition): MethodDefinition {
  return defineMethod({
    name: "sketch-perplexity",
    description:
      "End-to-end evaluation on a `model` problem: a sketch replaces exact attention in chosen layers (prefill); perplexity, mean next-token KL and top-1 agreement against the exact model, with the sketch's cost.",
    family: "exact",
    paramsSchema: perplexitySchema,
    exposesWeights: false,
    extraMetrics: [
      { name: "perplexity", description: "perplexity of the window's next tokens with the sketch" },
      { name: "exact_perplexity", description: "perplexity of the exact model on the same tokens" },
      { name: "perplexity_ratio", description: "perplexity / exact_perplexity" },
      { name: "mean_kl_nats", description: "mean over positions of KL(exact ‖ sketched) next-token distributions, nats" },
      { name: "top1_agreement", description: "fraction of positions where the sketched model's argmax equals the exact one's" },
      { name: "exact_attention_flops", description: "flops of exact materialized attention in the replaced heads" },
      { name: "flops_ratio", description: "flops / exact_attention_flops" },
    ],
    estimateCost(problem, params) {
      const pre = problem.pretrained;
      if (!pre) throw new ValueError("problem", 'a "model" problem (a checkpoint and its token window)', "a problem without a checkpoint");
      const sketch = lookup(params.sketch, "method.params.sketch");
      if (sketch.name === "sketch-perplexity") throw new ValueError("method.params.sketch", "an attention method", '"sketch-perplexity"');
      const sp = sketchParamsFor(sketch, params.sketchParams, params.budget);
      const { attention: a, tokens: n } = pre;
      // Prefill from empty caches: every replaced head attends its n queries to the n keys, causally.
      const head: ProblemShape = {
        heads: [{ queries: { rows: n, cols: a.dQK }, keys: { rows: n, cols: a.dQK }, values: { rows: n, cols: a.dV } }],
        kernel: { kind: "softmax", scale: 1 / Math.sqrt(a.dQK) },
        mask: { kind: "causal", offset: 0 },
        numKvHeads: 1,
      };
      const one = sketch.estimateCost(head, sp);
      const heads = parseLayers(params.layers, a.numLayers).length * a.numHeads;
      return { flops: heads * one.flops, floatsStored: heads * one.floatsStored };
    },
    run(problem: ProblemInstance, params, context, seed) {
      const pre = problem.pretrained;
      if (!pre) throw new ValueError("problem", 'a "model" problem (a checkpoint and its token window)', "a problem without a checkpoint");
      const sketch = lookup(params.sketch, "method.params.sketch");
      if (sketch.name === "sketch-perplexity") throw new ValueError("method.params.sketch", "an attention method", '"sketch-perplexity"');
      const sp = sketchParamsFor(sketch, params.sketchParams, params.budget);
      const layers = new Set(parseLayers(params.layers, pre.model.numLayers));
      const exact = exactForward(pre);
      let flops = 0;
      let floatsStored = 0;
      let exactFlops = 0;
      const extraCost: Record<string, number> = {};
      const attentionOverride = (h: AttentionOverrideHead): Matrix | undefined => {
        if (!layers.has(h.layer)) return undefined;
        const inst: ProblemInstance = {
          heads: [{ queries: h.queries, keys: h.keys, values: h.values }],
          kernel: { kind: "softmax", scale: h.scale },
          mask: { kind: "causal", offset: h.offset },
          numKvHeads: 1,
        };
        const r = sketch.run(inst, sp, { baseDir: context.baseDir, wantWeights: false }, derive(seed, "layer", h.layer, "head", h.head));
        if (!r.output) throw new ValueError("method.params.sketch", "a method returning attention outputs", `"${sketch.name}" (no output)`);
        flops += r.cost.flops;
        floatsStored += r.cost.floatsStored;
        for (const [k, v] of Object.entries(r.cost))
          if (k !== "flops" && k !== "floatsStored" && typeof v === "number") extraCost[k] = (extraCost[k] ?? 0) + v;
        exactFlops += exactCost(inst, true).flops;
        return r.output;
      };
      const approx = pre.model.forward(pre.ids, { attentionOverride });
      const s = scoresAgainst(exactDistributionsOf(exact), exact.logits.rows, exact.logits.cols, approx.logits, pre.ids);
      const cost: Cost = { flops, floatsStored, ...extraCost };
      return {
        output: null,
        cost,
        extras: {
          perplexity: s.perplexity,
          exact_perplexity: s.exactPerplexity,
          perplexity_ratio: s.perplexity / s.exactPerplexity,
          mean_kl_nats: s.meanKl,
          top1_agreement: s.top1Agreement,
          exact_attention_flops: exactFlops,
          flops_ratio: exactFlops > 0 ? flops / exactFlops : null,
        },
      };
    },
  });
}
