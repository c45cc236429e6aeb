/**
 * Attention anatomy (issue 10 §4): per-head statistics that say which synthetic generator
 * resembles real attention. The `anatomy-source` problem puts a shipped checkpoint's real heads
 * (through the `model` problem) and the synthetic generators under one name, so a single sweep
 * shows them side by side; the `attention-anatomy` method measures one head.
 */
import { attentionWeights, type Matrix, ValueError } from "@randattn/core";
import { exactSingularValues } from "@randattn/sketch";
import { defineMethod, defineProblem, enumParam, intParam, paramsSchema } from "./define.js";
import { exactForward, modelProblem } from "./real.js";
import { shapeOf } from "./shape.js";
import type { Params, ProblemDefinition, ProblemInstance } from "./types.js";

/** The shipped checkpoints (folders under `modelsDir`) and the synthetic generators compared. */
export const ANATOMY_SOURCES = [
  "llama-gqa-fortunes",
  "deepseek-mla-fortunes",
  "gaussian",
  "low-rank",
  "heavy-tailed",
  "clustered",
  "deepseek-v2-mla",
] as const;
const CHECKPOINTS: readonly string[] = ANATOMY_SOURCES.slice(0, 2);

const sourceSchema = paramsSchema({
  source: enumParam(ANATOMY_SOURCES, "llama-gqa-fortunes", "a shipped checkpoint (real heads) or a synthetic generator (its defaults)"),
  modelsDir: {
    type: "string",
    minLength: 1,
    default: "../../../models",
    description: "folder holding the checkpoints and heldout.txt, relative to the config",
  },
  n: intParam(2, 4096, 256, "sequence length (real: held-out tokens; synthetic: n)"),
  d: intParam(1, 512, 16, "d_QK = d_V of the synthetic generators (the models have their own)"),
  layer: intParam(0, 1024, 0, "real: decoder layer; synthetic: draw index (a new draw per value)"),
  head: intParam(0, 4096, 0, "real: query head; synthetic: draw index (deepseek-v2-mla: its head, modulo its heads)"),
});

/** Every schema default of a generator, then `given`. */
function withDefaults(def: ProblemDefinition, given: Params): Params {
  const out: Params = {};
  for (const [name, s] of Object.entries(def.paramsSchema.properties)) if (s.default !== undefined) out[name] = s.default as Params[string];
  return { ...out, ...given };
}

/**
 * `anatomy-source`: one head of a shipped checkpoint (post-RoPE Q, K and V of `layer`, `head` over
 * `n` held-out tokens) or of a synthetic generator at its default params (n tokens, width d), so
 * one config sweeps real and synthetic heads together.
 */
export function anatomySourceProblem(lookup: (name: string) => ProblemDefinition): ProblemDefinition {
  const anatomySource: ProblemDefinition = defineProblem({
    name: "anatomy-source",
    description:
      "One attention head from a shipped checkpoint (real, via `model`) or a synthetic generator at its defaults, for side-by-side statistics (attention-anatomy).",
    paramsSchema: sourceSchema,
    structuralParams: ["source", "modelsDir", "n", "d", "layer", "head"],
    producesTensors: true,
    shape(p, context) {
      if (CHECKPOINTS.includes(p.source)) {
        const params = withDefaults(modelProblem, { checkpoint: `${p.modelsDir}/${p.source}`, n: p.n, layer: p.layer, head: p.head });
        return modelProblem.shape!(params, context);
      }
      // A synthetic source is cheap to draw: its sizes are those of the drawn instance.
      return shapeOf(anatomySource.generate(p, context, [0, "shape"]));
    },
    generate(p, context, seed) {
      if (CHECKPOINTS.includes(p.source)) {
        const params = withDefaults(modelProblem, { checkpoint: `${p.modelsDir}/${p.source}`, n: p.n, layer: p.layer, head: p.head });
        return modelProblem.generate(params, context, seed);
      }
      const gen = lookup(p.source);
      if (p.source === "deepseek-v2-mla") {
        const inst = gen.generate(withDefaults(gen, { n: p.n }), context, seed);
        const h = p.head % inst.heads.length;
        return { ...inst, heads: [inst.heads[h]], numKvHeads: 1 };
      }
      return gen.generate(withDefaults(gen, { n: p.n, d: p.d, dv: p.d }), context, seed);
    },
  });
  return anatomySource;
}

/** Hill's estimator of the tail index α from the k largest of `x` (> 0): 1 / mean log(x_(i)/x_(k+1)). */
export function hillTailIndex(x: ArrayLike<number>, k: number): number {
  const s = Array.from(x).sort((a, b) => b - a);
  if (k < 1 || k >= s.length) throw new ValueError("k", `an integer in [1, ${s.length - 1}]`, String(k));
  let sum = 0;
  for (let i = 0; i < k; i++) sum += Math.log(s[i] / s[k]);
  return k / sum;
}

/** Roy–Vetterli effective rank exp(H(σ/Σσ)) of singular values σ. */
export function effectiveRank(sigma: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < sigma.length; i++) total += sigma[i];
  if (total === 0) return 0;
  let h = 0;
  for (let i = 0; i < sigma.length; i++) {
    const p = sigma[i] / total;
    if (p > 0) h -= p * Math.log(p);
  }
  return Math.exp(h);
}

/** Least-squares slope β of log σ_i = c − β log i over the positive σ (i = 1, 2, …). */
export function powerLawDecay(sigma: ArrayLike<number>): number {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < sigma.length; i++) {
    if (sigma[i] > 0) {
      xs.push(Math.log(i + 1));
      ys.push(Math.log(sigma[i]));
    }
  }
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  return -sxy / sxx;
}

/** Statistics of a row-stochastic causal attention matrix P (rows i ≥ 1: row 0 sees one key). */
export function attentionStatistics(p: Matrix, offset: number): { entropy: number; sink: number; previous: number } {
  let entropy = 0;
  let sink = 0;
  let previous = 0;
  let rows = 0;
  for (let i = 0; i < p.rows; i++) {
    const visible = Math.min(p.cols, offset + i + 1);
    if (visible < 2) continue;
    const row = p.rowView(i);
    let h = 0;
    for (let j = 0; j < visible; j++) if (row[j] > 0) h -= row[j] * Math.log(row[j]);
    entropy += h / Math.log(visible);
    sink += row[0];
    previous += row[offset + i - 1];
    rows++;
  }
  return { entropy: entropy / rows, sink: sink / rows, previous: previous / rows };
}

/**
 * `attention-anatomy`: statistics of a problem's single head under the causal mask — normalized
 * attention entropy H(P_i)/log(i+1), sink mass P[i, 0] and previous-token mass P[i, i−1] (means
 * over rows i ≥ 1), Hill's tail index of the key norms (top 10 %), Roy–Vetterli effective rank of
 * K (and over d_QK), and for MLA heads the latent's singular-value power-law decay β and the
 * fraction of its d_L directions holding 90 % of its energy.
 */
export const attentionAnatomy = defineMethod({
  name: "attention-anatomy",
  description:
    "Per-head statistics (no approximation): attention entropy, sink and previous-token mass, key-norm Hill tail index, effective rank of K, MLA latent spectrum decay.",
  family: "exact",
  paramsSchema: paramsSchema({
    tailFraction: {
      type: "number",
      exclusiveMinimum: 0,
      maximum: 0.5,
      default: 0.1,
      description: "share of the largest key norms Hill's estimator uses",
    },
  }),
  exposesWeights: false,
  // Statistics, not an approximation: no cost is charged (run reports 0).
  estimateCost: () => ({ flops: 0, floatsStored: 0 }),
  extraMetrics: [
    { name: "attention_entropy", description: "mean over rows i ≥ 1 of H(P_i)/log(visible keys) (1 = uniform)" },
    { name: "sink_mass", description: "mean over rows i ≥ 1 of the weight on the first token" },
    { name: "previous_token_mass", description: "mean over rows i ≥ 1 of the weight on token i − 1" },
    { name: "key_norm_tail_index", description: "Hill estimator α of the key norms' tail (top tailFraction; small = heavy)" },
    { name: "key_effective_rank", description: "exp(entropy of σ(K)/Σσ(K)) (Roy–Vetterli)" },
    { name: "key_effective_rank_fraction", description: "key_effective_rank / d_QK" },
    { name: "latent_spectrum_decay", description: "β of σ_i(L) ∝ i^(−β), least squares (MLA heads)" },
    { name: "latent_energy90_fraction", description: "fewest singular directions of L with 90 % of ‖L‖²_F, over d_L (MLA heads)" },
  ],
  run(problem: ProblemInstance, params, _context, _seed) {
    if (problem.heads.length !== 1) throw new ValueError("problem.heads", "one head (set head)", `${problem.heads.length} heads`);
    const { queries: q, keys: k } = problem.heads[0];
    const offset = k.rows - q.rows;
    const scale = problem.kernel.kind === "softmax" ? problem.kernel.scale : undefined;
    const p = attentionWeights(q, k, {
      kernel: { kind: "softmax", ...(scale === undefined ? {} : { scale }) },
      mask: { kind: "causal", offset },
    });
    const stats = attentionStatistics(p, offset);
    const norms = Array.from({ length: k.rows }, (_, i) => Math.hypot(...k.rowView(i)));
    const tail = hillTailIndex(norms, Math.max(2, Math.floor(params.tailFraction * k.rows)));
    const erank = effectiveRank(exactSingularValues(k));
    let latent: Matrix | undefined = problem.latent?.latent;
    if (!latent && problem.pretrained && problem.pretrained.layer !== undefined) {
      latent = exactForward(problem.pretrained).layers[problem.pretrained.layer].latent;
    }
    let decay: number | null = null;
    let energy: number | null = null;
    if (latent) {
      const s = exactSingularValues(latent);
      decay = powerLawDecay(s);
      const total = s.reduce((a, b) => a + b * b, 0);
      let acc = 0;
      let r = 0;
      while (acc < 0.9 * total) acc += s[r++] ** 2;
      energy = r / latent.cols;
    }
    return {
      output: null,
      cost: { flops: 0, floatsStored: 0 },
      extras: {
        attention_entropy: stats.entropy,
        sink_mass: stats.sink,
        previous_token_mass: stats.previous,
        key_norm_tail_index: tail,
        key_effective_rank: erank,
        key_effective_rank_fraction: erank / k.cols,
        latent_spectrum_decay: decay,
        latent_energy90_fraction: energy,
      },
    };
  },
});
