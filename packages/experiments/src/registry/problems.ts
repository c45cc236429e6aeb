/**
 * Problem generators: the attention inputs every method of a sweep is compared on.
 *
 * Each generator draws its tensors from streams keyed by (root seed, "inputs", generator,
 * structural params, trial) — see plan/seeds.ts — so every method of a cell sees the same
 * Q/K/V, and a non-structural param (the input `scale`) rescales the same draw.
 */
import {
  DEEPSEEK_V2,
  FormatError,
  GEMMA3_27B,
  initMlaWeights,
  initWeight,
  LLAMA3_70B,
  Matrix,
  matmul,
  type ModelPreset,
  type MultiHeadWeights,
  RandomStream,
  randomMatrix,
  type SeedKey,
  ValueError,
  derive,
} from "@randattn/core";
import { anatomySourceProblem } from "./anatomy.js";
import { checkpointDecode, syntheticDecoder } from "./decode.js";
import { readNpyMatrices } from "./npy.js";
import { modelProblem } from "./real.js";
import type { AttentionHead, KernelSpec, MaskSpec, ProblemDefinition, ProblemInstance } from "./types.js";
import { sha256 } from "../base/canonical.js";
import { defineProblem, type IntegerParamSchema, type NumberParamSchema, paramsSchema } from "./define.js";
import { nodeFs, nodePath } from "../platform/node.js";

/** Largest sequence length a generator accepts (keeps a typo from allocating terabytes). */
export const MAX_SEQUENCE_LENGTH = 65_536;
/** Largest head / model width a generator accepts. */
export const MAX_WIDTH = 8_192;

/** An integer param: with a default, or (def undefined) one a config must give. */
function int(min: number, max: number, def: number, description: string): IntegerParamSchema & { default: number };
function int(min: number, max: number, def: undefined, description: string): IntegerParamSchema;
function int(min: number, max: number, def: number | undefined, description: string): IntegerParamSchema {
  return def === undefined
    ? { type: "integer", minimum: min, maximum: max, description }
    : { type: "integer", minimum: min, maximum: max, default: def, description };
}
/** A positive real param with a default. */
function positive(def: number, description: string, max = 1e6): NumberParamSchema & { default: number } {
  return { type: "number", exclusiveMinimum: 0, maximum: max, default: def, description };
}

const SIZE_PROPS = {
  n: int(1, MAX_SEQUENCE_LENGTH, undefined, "sequence length N_KV (and N_Q unless nQueries is set)"),
  nQueries: int(0, MAX_SEQUENCE_LENGTH, 0, "N_Q; 0 means N_Q = n"),
  d: int(1, MAX_WIDTH, 16, "d_QK, the query/key width"),
  dv: int(1, MAX_WIDTH, 16, "d_V, the value width"),
  scale: positive(1, "multiplies queries and keys (input scale: logits scale by scale²)"),
};
const SIZE_STRUCTURAL = ["n", "nQueries", "d", "dv"] as const;

function nq(p: { readonly n: number; readonly nQueries: number }): number {
  return p.nQueries > 0 ? p.nQueries : p.n;
}

function scaleInPlace(m: Matrix, s: number): Matrix {
  if (s !== 1) for (let i = 0; i < m.data.length; i++) m.data[i] *= s;
  return m;
}

function singleHead(queries: Matrix, keys: Matrix, values: Matrix, kernel: KernelSpec, mask: MaskSpec | null): ProblemInstance {
  return { heads: [{ queries, keys, values }], kernel, mask, numKvHeads: 1 };
}

/** `rows × cols` Gaussian plus a low-rank part: G (rows×r) H (r×cols)/√r + noise·E. */
function lowRankPlusNoise(rows: number, cols: number, rank: number, noise: number, key: SeedKey): Matrix {
  const r = Math.min(rank, rows, cols);
  const g = randomMatrix(rows, r, {}, derive(key, "left"));
  const h = randomMatrix(r, cols, { scale: 1 / Math.sqrt(r) }, derive(key, "right"));
  const out = matmul(g, h);
  const e = randomMatrix(rows, cols, {}, derive(key, "noise"));
  for (let i = 0; i < out.data.length; i++) out.data[i] += noise * e.data[i];
  return out;
}

/** Rows of a Gaussian matrix rescaled by Pareto(α) factors u^(−1/α) ≥ 1 (heavy-tailed row norms). */
function heavyTailedRows(rows: number, cols: number, tailIndex: number, key: SeedKey): Matrix {
  const m = randomMatrix(rows, cols, {}, derive(key, "directions"));
  const rng = new RandomStream(derive(key, "norms"));
  for (let i = 0; i < rows; i++) {
    // The same uniforms for every α (common random numbers across a tailIndex sweep).
    const factor = rng.uniformOpen() ** (-1 / tailIndex);
    for (let j = i * cols; j < (i + 1) * cols; j++) m.data[j] *= factor;
  }
  return m;
}

const gaussian = defineProblem({
  name: "gaussian",
  description: "Synthetic Q, K ~ N(0, scale²), V ~ N(0, 1), i.i.d. entries.",
  paramsSchema: paramsSchema({ ...SIZE_PROPS }, ["n"]),
  structuralParams: SIZE_STRUCTURAL,
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const s = p.scale;
    const q = randomMatrix(nq(p), p.d, { scale: s }, derive(seed, "queries"));
    const k = randomMatrix(p.n, p.d, { scale: s }, derive(seed, "keys"));
    const v = randomMatrix(p.n, p.dv, {}, derive(seed, "values"));
    return singleHead(q, k, v, kernel, mask);
  },
});

const lowRank = defineProblem({
  name: "low-rank",
  description: "Q, K and V each rank-r Gaussian products plus Gaussian noise (scale multiplies Q and K).",
  paramsSchema: paramsSchema(
    {
      ...SIZE_PROPS,
      rank: int(1, MAX_WIDTH, 4, "rank r of the low-rank part"),
      noise: { type: "number", minimum: 0, maximum: 1e3, default: 0.1 },
    },
    ["n"],
  ),
  structuralParams: [...SIZE_STRUCTURAL, "rank"],
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const r = p.rank;
    const noise = p.noise;
    const q = scaleInPlace(lowRankPlusNoise(nq(p), p.d, r, noise, derive(seed, "queries")), p.scale);
    const k = scaleInPlace(lowRankPlusNoise(p.n, p.d, r, noise, derive(seed, "keys")), p.scale);
    const v = lowRankPlusNoise(p.n, p.dv, r, noise, derive(seed, "values"));
    return singleHead(q, k, v, kernel, mask);
  },
});

const heavyTailed = defineProblem({
  name: "heavy-tailed",
  description: "Gaussian directions with Pareto(tailIndex) row norms for keys and values; Gaussian queries.",
  paramsSchema: paramsSchema({ ...SIZE_PROPS, tailIndex: positive(1.5, "Pareto tail index α (smaller = heavier tails)", 100) }, ["n"]),
  structuralParams: SIZE_STRUCTURAL,
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const s = p.scale;
    const a = p.tailIndex;
    const q = randomMatrix(nq(p), p.d, { scale: s }, derive(seed, "queries"));
    const k = scaleInPlace(heavyTailedRows(p.n, p.d, a, derive(seed, "keys")), s);
    const v = heavyTailedRows(p.n, p.dv, a, derive(seed, "values"));
    return singleHead(q, k, v, kernel, mask);
  },
});

const clustered = defineProblem({
  name: "clustered",
  description: "Keys and queries drawn around shared cluster centres (centre + spread·noise); Gaussian values.",
  paramsSchema: paramsSchema(
    {
      ...SIZE_PROPS,
      clusters: int(1, 4096, 4, "number of cluster centres"),
      spread: { type: "number", minimum: 0, maximum: 1e3, default: 0.1, description: "noise around a centre" },
    },
    ["n"],
  ),
  structuralParams: [...SIZE_STRUCTURAL, "clusters"],
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const d = p.d;
    const c = p.clusters;
    const spread = p.spread;
    const s = p.scale;
    const centres = randomMatrix(c, d, {}, derive(seed, "centres"));
    const around = (rows: number, purpose: string): Matrix => {
      const rng = new RandomStream(derive(seed, purpose, "assignment"));
      const noise = randomMatrix(rows, d, {}, derive(seed, purpose, "noise"));
      const m = new Matrix(rows, d);
      for (let i = 0; i < rows; i++) {
        const g = rng.int(c);
        for (let j = 0; j < d; j++) m.data[i * d + j] = s * (centres.data[g * d + j] + spread * noise.data[i * d + j]);
      }
      return m;
    };
    const q = around(nq(p), "queries");
    const k = around(p.n, "keys");
    const v = randomMatrix(p.n, p.dv, {}, derive(seed, "values"));
    return singleHead(q, k, v, kernel, mask);
  },
});

/** Query heads per KV head of Llama 3 70B (Table 3: 64 heads, 8 KV heads). */
const LLAMA_GROUP = LLAMA3_70B.attention.numHeads / ((LLAMA3_70B.attention as { numKvHeads?: number }).numKvHeads ?? 1);

const llamaGqa = defineProblem({
  name: "llama3-gqa",
  description: `Llama-3-like grouped-query heads, scaled down: X ~ N(0, scale²) projected by LeCun-normal W_Q, W_K, W_V; ${LLAMA_GROUP} query heads per KV head (Table 3).`,
  paramsSchema: paramsSchema(
    {
      n: SIZE_PROPS.n,
      numKvHeads: int(1, 64, 1, "G, the number of KV heads"),
      groupSize: int(1, 64, LLAMA_GROUP, "query heads per KV head (H = G·groupSize)"),
      headDim: int(1, 512, 16, "d_head = d_QK = d_V"),
      dIn: int(0, MAX_WIDTH, 0, "model width d_in; 0 means H·d_head as in Llama 3"),
      scale: SIZE_PROPS.scale,
    },
    ["n"],
  ),
  structuralParams: ["n", "numKvHeads", "groupSize", "headDim", "dIn"],
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const n = p.n;
    const g = p.numKvHeads;
    const h = g * p.groupSize;
    const dh = p.headDim;
    const dIn = p.dIn > 0 ? p.dIn : h * dh;
    const x = randomMatrix(n, dIn, { scale: p.scale }, derive(seed, "x"));
    const wK = Array.from({ length: g }, (_, j) => initWeight(dIn, dh, {}, derive(seed, "wK", j)));
    const wV = Array.from({ length: g }, (_, j) => initWeight(dIn, dh, {}, derive(seed, "wV", j)));
    const wQ = Array.from({ length: h }, (_, i) => initWeight(dIn, dh, {}, derive(seed, "wQ", i)));
    const keys = wK.map((w) => matmul(x, w));
    const values = wV.map((w) => matmul(x, w));
    const heads: AttentionHead[] = [];
    for (let i = 0; i < h; i++) {
      // GQA group map g(h) = ⌊h / (H/G)⌋ (ERRATA), so contiguous query heads share a KV head.
      const grp = Math.floor(i / (h / g));
      heads.push({ queries: matmul(x, wQ[i]), keys: keys[grp], values: values[grp] });
    }
    // W_O = I: the layer output is the concatenation of the heads, which is what methods are scored on.
    const weights: MultiHeadWeights = { queries: wQ, keys: wK, values: wV, output: Matrix.identity(h * dh) };
    return { heads, kernel, mask, numKvHeads: g, multiHead: { x, weights } };
  },
});

const DS = DEEPSEEK_V2.attention as { numHeads: number; latentDim?: number; headDim: number; dIn: number; queryLatentDim?: number };

const deepseekMla = defineProblem({
  name: "deepseek-v2-mla",
  description:
    "DeepSeek-V2-like multi-head latent attention layer scaled down by `shrink` (Table 3: 128 heads, d_L = 512, d_head = 128, d_in = 5120); K_h = L W_LK^h, V_h = L W_LV^h from the cached latent L = X W_L (§4.2), no decoupled RoPE; `decay` makes the input anisotropic.",
  paramsSchema: paramsSchema(
    {
      n: SIZE_PROPS.n,
      shrink: int(1, 128, 16, "divides every DeepSeek-V2 width (heads, d_L, d_LQ, d_head, d_in)"),
      scale: SIZE_PROPS.scale,
      decay: {
        type: "number",
        minimum: 0,
        maximum: 8,
        default: 0,
        description: "input anisotropy: column j of X scaled by (j+1)^(−decay), so the latent's spectrum decays (0: isotropic)",
      },
    },
    ["n"],
  ),
  structuralParams: ["n", "shrink"],
  producesTensors: true,
  generate(p, { kernel, mask }, seed) {
    const f = p.shrink;
    const dims = {
      dIn: Math.max(1, Math.round(DS.dIn / f)),
      numHeads: Math.max(1, Math.round(DS.numHeads / f)),
      latentDim: Math.max(1, Math.round((DS.latentDim ?? 512) / f)),
      queryLatentDim: Math.max(1, Math.round((DS.queryLatentDim ?? 1536) / f)),
      headDim: Math.max(1, Math.round(DS.headDim / f)),
    };
    const w = initMlaWeights(dims, derive(seed, "weights"));
    const x = randomMatrix(p.n, dims.dIn, { scale: p.scale }, derive(seed, "x"));
    const decay = p.decay;
    if (decay > 0) {
      // Hidden states of trained models are far from isotropic; a power-law column scale gives the
      // latent L = X W_L a decaying spectrum (the regime where a low-rank latent cache makes sense).
      // The same Gaussian draw for every decay (common random numbers across a decay sweep).
      for (let i = 0; i < x.rows; i++) for (let j = 0; j < x.cols; j++) x.data[i * x.cols + j] *= (j + 1) ** -decay;
    }
    const latent = matmul(x, w.latentDown);
    const queryLatent = matmul(x, w.queryDown);
    const heads: AttentionHead[] = w.keyUp.map((wk, h) => ({
      queries: matmul(queryLatent, w.queryUp[h]),
      keys: matmul(latent, wk),
      values: matmul(latent, w.valueUp[h]),
    }));
    return {
      heads,
      kernel,
      mask,
      numKvHeads: dims.numHeads,
      latent: { latent, keyUp: w.keyUp, valueUp: w.valueUp },
    };
  },
});

const kernelPairs = defineProblem({
  name: "kernel-pairs",
  description:
    "n pairs (q_i, k_i) for kernel-value methods (no attention): after the softmax kernel's scale, x = √scale·q and y = √scale·k have ‖x‖ = ‖y‖ = norm and cos∠(x, y) = cosine, so SM(x, y) = exp(norm²·cosine); random directions.",
  paramsSchema: paramsSchema(
    {
      n: int(1, MAX_SEQUENCE_LENGTH, undefined, "number of pairs"),
      d: SIZE_PROPS.d,
      norm: { type: "number", minimum: 0, maximum: 100, default: 1, description: "‖x‖ = ‖y‖ of the scaled vectors" },
      cosine: { type: "number", minimum: -1, maximum: 1, default: 0, description: "cosine of the angle between x and y" },
    },
    ["n"],
  ),
  // norm and cosine reshape the same directions (common random numbers across a norm sweep).
  structuralParams: ["n", "d"],
  producesTensors: true,
  generate(p, { kernel }, seed) {
    if (kernel.kind !== "softmax") throw new ValueError("problem.kernel", 'the softmax kernel for "kernel-pairs"', `"${kernel.kind}"`);
    const n = p.n;
    const d = p.d;
    if (d < 2) throw new ValueError("problem.params.d", "d ≥ 2 (two directions per pair)", String(d));
    const r = p.norm;
    const c = p.cosine;
    const s = Math.sqrt(1 - c * c);
    const unscale = 1 / Math.sqrt(kernel.scale ?? 1 / Math.sqrt(d));
    const u = randomMatrix(n, d, {}, derive(seed, "u"));
    const w = randomMatrix(n, d, {}, derive(seed, "w"));
    const q = new Matrix(n, d);
    const k = new Matrix(n, d);
    for (let i = 0; i < n; i++) {
      const o = i * d;
      let uu = 0;
      for (let j = 0; j < d; j++) uu += u.data[o + j] ** 2;
      const un = Math.sqrt(uu);
      for (let j = 0; j < d; j++) u.data[o + j] /= un;
      // e ⟂ u by one Gram–Schmidt step, then normalized: y = r(c·u + √(1−c²)·e).
      let uw = 0;
      for (let j = 0; j < d; j++) uw += u.data[o + j] * w.data[o + j];
      let ee = 0;
      for (let j = 0; j < d; j++) {
        w.data[o + j] -= uw * u.data[o + j];
        ee += w.data[o + j] ** 2;
      }
      const en = Math.sqrt(ee);
      for (let j = 0; j < d; j++) {
        q.data[o + j] = unscale * r * u.data[o + j];
        k.data[o + j] = unscale * r * (c * u.data[o + j] + (s * w.data[o + j]) / en);
      }
    }
    return { heads: [], kernel, mask: null, numKvHeads: 0, kernelPairs: { queries: q, keys: k } };
  },
});

/** sha256 of a data file, recorded in the canonical config so changed data invalidates resume. */
export function fileSha256(path: string): string {
  return sha256(nodeFs("problem.params").readFileSync(path));
}

/** Resolves a data path of a config against the config's folder. */
export function resolveDataPath(path: string, baseDir: string): string {
  const { isAbsolute, resolve } = nodePath("problem.params");
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

const npy = defineProblem({
  name: "npy",
  description:
    "Queries, keys and values loaded from .npy files (2-D N×d for one head, or 3-D heads×N×d); paths relative to the config file. `scale` multiplies Q and K.",
  paramsSchema: paramsSchema(
    {
      queries: { type: "string", pattern: "\\.npy$", maxLength: 1024 },
      keys: { type: "string", pattern: "\\.npy$", maxLength: 1024 },
      values: { type: "string", pattern: "\\.npy$", maxLength: 1024 },
      scale: SIZE_PROPS.scale,
    },
    ["queries", "keys", "values"],
  ),
  structuralParams: ["queries", "keys", "values"],
  producesTensors: true,
  generate(p, context, _seed) {
    const { kernel, mask } = context;
    const load = (name: "queries" | "keys" | "values") =>
      readNpyMatrices(resolveDataPath(p[name], context.baseDir), `problem.params.${name}`);
    const q = load("queries");
    const k = load("keys");
    const v = load("values");
    if (k.length !== v.length) throw new FormatError("problem.params.values", `${k.length} heads (as keys)`, `${v.length} heads`);
    if (q.length % k.length !== 0) {
      throw new FormatError("problem.params.queries", `a multiple of the ${k.length} key heads`, `${q.length} heads`);
    }
    const s = p.scale;
    const ks = k.map((m) => scaleInPlace(m, s));
    const heads = q.map((m, h) => {
      const g = Math.floor(h / (q.length / k.length));
      return { queries: scaleInPlace(m, s), keys: ks[g], values: v[g] };
    });
    return { heads, kernel, mask, numKvHeads: k.length };
  },
});

/** The Table 3 models by config name. */
export const MODEL_PRESETS: Readonly<Record<string, ModelPreset>> = {
  "llama3-70b": LLAMA3_70B,
  "gemma3-27b": GEMMA3_27B,
  "deepseek-v2": DEEPSEEK_V2,
};

const modelPreset = defineProblem({
  name: "model-preset",
  description:
    "A full-size model of Table 3 (llama3-70b, gemma3-27b, deepseek-v2) and a context length, for the accounting methods (no tensors).",
  paramsSchema: paramsSchema(
    {
      preset: { type: "string", enum: Object.keys(MODEL_PRESETS) },
      tokens: int(1, 2 ** 30, 4096, "context length N_KV"),
    },
    ["preset"],
  ),
  structuralParams: ["preset", "tokens"],
  producesTensors: false,
  generate(p, { kernel, mask }, _seed) {
    return { heads: [], kernel, mask, numKvHeads: 0, accounting: { preset: p.preset, tokens: p.tokens } };
  },
});

const PROBLEMS = new Map<string, ProblemDefinition>();

/**
 * Adds a generator to the registry.
 * @throws ValueError when the name is taken or not kebab-case.
 */
export function registerProblem(def: ProblemDefinition): void {
  if (!/^[a-z][a-z0-9-]*$/.test(def.name)) throw new ValueError("problem.name", "a kebab-case name", JSON.stringify(def.name));
  if (PROBLEMS.has(def.name)) throw new ValueError("problem.name", "a name not yet registered", JSON.stringify(def.name));
  PROBLEMS.set(def.name, def);
}

for (const def of [
  gaussian,
  lowRank,
  heavyTailed,
  clustered,
  llamaGqa,
  deepseekMla,
  kernelPairs,
  npy,
  modelPreset,
  syntheticDecoder,
  checkpointDecode,
  modelProblem,
  anatomySourceProblem(getProblem),
]) {
  registerProblem(def);
}

/**
 * The generator registered as `name`.
 * @throws ValueError listing the registered names.
 */
export function getProblem(name: string, argument = "problem.generator"): ProblemDefinition {
  const def = PROBLEMS.get(name);
  if (!def) throw new ValueError(argument, `one of ${[...PROBLEMS.keys()].join(", ")}`, JSON.stringify(name));
  return def;
}

/** All registered generators, by name. */
export function listProblems(): ProblemDefinition[] {
  return [...PROBLEMS.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
