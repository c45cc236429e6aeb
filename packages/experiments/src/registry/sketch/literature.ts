/**
 * Adapters for the 2021–2024 sub-quadratic attention methods of @randattn/sketch (issue 11):
 * `hyper-attention` (sortLSH + sampled residual + ApproxD; causal recursion under a causal mask),
 * `kdeformer` (sortLSH heavy entries + KDE normalizer + column-norm importance sampling; refuses
 * masks) and `scatterbrain` (LSH-sparse exact entries + Performer low rank). Each routes every head
 * through the sketch function with `derive(seed, "head", h)`; cost = the sum of the heads' flops and
 * floats. GERF / OPRF / DERF are feature kinds of `random-features` (features.ts).
 *
 * `hyper-attention` also reports the parameters of its guarantee (sketch `hyperAttentionParameters`,
 * same mask as the run): `hyper_alpha` = max over heads of α = N_KV·max_j ‖R_:j‖² and `hyper_kappa`
 * = max over heads of κ = max rᵢ / min rᵢ. They need the N_Q × N_KV matrix, so they are left empty
 * for masked problems (the causal form is a sum of sub-problems) and above 2²⁴ scores per head; they
 * are computed inside `run` (they depend on the seed's hyperplanes) but not counted in its cost.
 */
import { concatCols } from "@randattn/core";
import { hyperAttention, hyperAttentionParameters, kdeformerAttention, scatterbrainAttention } from "@randattn/sketch";
import { defineMethod } from "../define.js";
import type { HeadShape, ProblemShape } from "../shape.js";
import type { Cost, MaskSpec, ProblemInstance } from "../types.js";
import { randomFeatureAttentionCost } from "./features.js";
import { enumParam, headSeed, intParam, numberParam, paramsSchema, rejectMask, requireHeads, softmaxScale, sumCosts } from "./common.js";

/** Largest N_Q·N_KV per head for which α and κ are computed. */
const MAX_PARAMETER_SCORES = 1 << 24;

function kernelOf(problem: Pick<ProblemShape, "kernel">, method: string) {
  const scale = softmaxScale(problem, method);
  return scale === undefined ? {} : { kernel: { kind: "softmax" as const, scale } };
}

function maskOf(problem: ProblemInstance) {
  return problem.mask ? { mask: problem.mask.offset === undefined ? { kind: "causal" as const } : { ...problem.mask } } : {};
}

/** sortLSH's blocks from sizes alone (sketch lsh/simhash.ts): ⌈N_Q/b⌉ blocks of b queries and of ≈ N_KV/blocks keys. */
function sortLshBlocks(nQ: number, nK: number, blockSize: number) {
  const numBlocks = Math.max(1, Math.ceil(nQ / blockSize));
  const queryStart = (c: number) => Math.min(nQ, c * blockSize);
  const keyStart = (c: number) => (c === numBlocks ? nK : Math.round((c * nK) / numBlocks));
  let pairs = 0;
  for (let c = 0; c < numBlocks; c++) pairs += (queryStart(c + 1) - queryStart(c)) * (keyStart(c + 1) - keyStart(c));
  return { numBlocks, pairs, firstKeys: keyStart(1) - keyStart(0) };
}

/** sortLSH's hashing cost (sketch lsh/simhash.ts). */
function sortLshCost(nQ: number, nK: number, d: number, numBits: number) {
  const buckets = 1 << numBits;
  return { flops: 2 * (nQ + nK) * d * numBits + 2 * (nQ + nK) + buckets, floatsStored: numBits * d + 2 * (nQ + nK) + buckets };
}

/** The resolved options of hyperAttention that its cost reads. */
interface HyperSizes {
  numBits: number;
  blockSize: number;
  m: number;
  mD: number;
  exactD: boolean;
  sharedD: boolean;
  uniformValues: boolean;
}

/** `hyperPart`'s cost on nQ queries × nK keys (sketch hyper/attention.ts); returns its floats term (a max). */
function hyperPartCost(nQ: number, nK: number, d: number, dV: number, o: HyperSizes, tally: { flops: number; floatsStored: number }) {
  const lsh = sortLshCost(nQ, nK, d, o.numBits);
  const blocks = sortLshBlocks(nQ, nK, o.blockSize);
  tally.flops += lsh.flops;
  const residual = blocks.numBlocks > 1;
  if (residual && !o.uniformValues) tally.flops += 2 * nK * dV + nK;
  const m = residual ? o.m : 0;
  const mD = residual && !o.exactD && !o.sharedD ? o.mD : 0;
  tally.flops +=
    blocks.pairs * (2 * d + 2 + 2 * dV) + nQ * (mD * (2 * d + 2) + m * (2 * d + 3 + 2 * dV)) + (o.exactD ? nQ * nK * (2 * d + 2) : 0);
  tally.floatsStored = Math.max(tally.floatsStored, m * (dV + 2) + nK + blocks.firstKeys + mD + lsh.floatsStored);
}

/** `hyperAttention`'s cost for one head, from sizes: sortLSH's blocks are equal cuts of the sorted orders, so nothing depends on the data. */
function hyperAttentionCost(h: HeadShape, mask: MaskSpec | null, o: HyperSizes, minCausalLength: number): Cost {
  const nQ = h.queries.rows;
  const nK = h.keys.rows;
  const d = h.queries.cols;
  const dV = h.values.cols;
  const tally = { flops: 0, floatsStored: o.numBits * d };
  if (!mask) hyperPartCost(nQ, nK, d, dV, o, tally);
  else {
    const offset = mask.offset ?? nK - nQ;
    const causal = (n: number): void => {
      if (n <= minCausalLength) {
        tally.flops += ((n * (n + 1)) / 2) * (2 * d + 2 + 2 * dV);
        tally.floatsStored = Math.max(tally.floatsStored, n);
        return;
      }
      const half = Math.floor(n / 2);
      causal(half);
      causal(n - half);
      hyperPartCost(n - half, half, d, dV, o, tally);
    };
    causal(nQ);
    if (offset > 0) hyperPartCost(nQ, offset, d, dV, o, tally);
  }
  return { flops: tally.flops + nQ * dV, floatsStored: tally.floatsStored + nQ * (dV + 2) };
}

const LSH_PARAMS = {
  numBits: intParam(0, 24, 7, "r, SimHash bits of sortLSH (2^r buckets)"),
  blockSize: intParam(1, 1 << 20, 64, "b, queries per sortLSH block"),
  sampleSize: intParam(1, 1 << 20, 64, "m, sampled keys for the residual product with V"),
  normalizerSamples: intParam(1, 1 << 20, 64, "m_D, uniformly sampled keys for the residual normalizer"),
};

/** `hyper-attention`: sketch's `hyperAttention` on every head. */
export const hyperAttentionMethod = defineMethod({
  name: "hyper-attention",
  description:
    "HyperAttention (Han et al. 2024): sortLSH block-diagonal large entries exact, residual sampled ∝‖V_j‖², ApproxD normalizer; causal recursion (Algorithm 4) under a causal mask. Reports α and κ of its guarantee.",
  family: "sampling",
  paramsSchema: paramsSchema({
    ...LSH_PARAMS,
    normalizer: enumParam(
      ["approximate", "exact", "shared"],
      "approximate",
      "ApproxD, the exact D, or from the numerator's own (defensively mixed) samples",
    ),
    valueSampling: enumParam(["value-norm", "uniform"], "value-norm", "residual keys ∝‖V_j‖² (paper) or uniform (its code)"),
    minCausalLength: intParam(1, 1 << 20, 128, "causal recursion: blocks of at most this many queries are exact"),
  }),
  exposesWeights: false,
  extraMetrics: [
    { name: "hyper_alpha", description: "α = N_KV·max_j ‖(D⁻¹(1−M^H)⊙A)_:j‖², max over heads (unmasked problems)" },
    { name: "hyper_kappa", description: "κ = max_i r_i / min_i r_i of the residual row sums, max over heads (unmasked problems)" },
  ],
  estimateCost(problem, params) {
    requireHeads(problem, "hyper-attention");
    kernelOf(problem, "hyper-attention");
    const o: HyperSizes = {
      numBits: params.numBits,
      blockSize: params.blockSize,
      m: params.sampleSize,
      mD: params.normalizerSamples,
      exactD: params.normalizer === "exact",
      sharedD: params.normalizer === "shared",
      uniformValues: params.valueSampling === "uniform",
    };
    return sumCosts(problem.heads.map((h) => hyperAttentionCost(h, problem.mask, o, params.minCausalLength)));
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "hyper-attention");
    const options = {
      numBits: params.numBits,
      blockSize: params.blockSize,
      sampleSize: params.sampleSize,
      normalizerSamples: params.normalizerSamples,
      normalizer: params.normalizer as "approximate" | "exact" | "shared",
      valueSampling: params.valueSampling as "value-norm" | "uniform",
      minCausalLength: params.minCausalLength,
      ...kernelOf(problem, "hyper-attention"),
    };
    const results = problem.heads.map((h, i) =>
      hyperAttention(h.queries, h.keys, h.values, { ...options, ...maskOf(problem) }, headSeed(seed, i)),
    );
    let alpha: number | null = null;
    let kappa: number | null = null;
    if (!problem.mask && problem.heads.every((h) => h.queries.rows * h.keys.rows <= MAX_PARAMETER_SCORES)) {
      for (let i = 0; i < problem.heads.length; i++) {
        const h = problem.heads[i];
        const p = hyperAttentionParameters(h.queries, h.keys, h.values, { ...options, planes: results[i].planes }, headSeed(seed, i));
        alpha = Math.max(alpha ?? 0, p.alpha);
        kappa = Math.max(kappa ?? 0, p.kappa);
      }
    }
    return {
      output: concatCols(results.map((r) => r.output)),
      cost: sumCosts(results.map((r) => r.cost)),
      extras: { hyper_alpha: alpha, hyper_kappa: kappa },
    };
  },
});

/** `kdeformer`: sketch's `kdeformerAttention` on every head (no masks). */
export const kdeformerMethod = defineMethod({
  name: "kdeformer",
  description:
    "KDEformer (Zandieh et al. 2023): sortLSH heavy entries exact, normalizer by KDE (simplified: uniform key sample), residual keys sampled ∝ estimated squared column norms of D⁻¹A mixed with ε uniform. No masked form.",
  family: "sampling",
  paramsSchema: paramsSchema({
    ...LSH_PARAMS,
    columnSamples: intParam(1, 1 << 20, 64, "t, uniformly sampled queries of the column-norm KDE"),
    uniformShare: numberParam(1e-6, 1, 0.1, "ε, the uniform share of the sampling distribution"),
    normalizer: enumParam(["approximate", "exact"], "approximate", "KDE estimate, or the exact D"),
  }),
  exposesWeights: false,
  costEstimate: {
    kind: "approximate",
    note: "an upper bound: the normalizer's m_D uniformly sampled keys that fall into a query's own sortLSH block are skipped (data-dependent); the estimate counts them, so it exceeds the recorded flops by at most N_Q·m_D·(2d + 3)",
  },
  estimateCost(problem, params) {
    requireHeads(problem, "kdeformer");
    rejectMask(problem, "kdeformer");
    kernelOf(problem, "kdeformer");
    return sumCosts(
      problem.heads.map((h) => {
        const nQ = h.queries.rows;
        const nK = h.keys.rows;
        const d = h.queries.cols;
        const dV = h.values.cols;
        const lsh = sortLshCost(nQ, nK, d, params.numBits);
        const blocks = sortLshBlocks(nQ, nK, params.blockSize);
        const residual = blocks.numBlocks > 1;
        const exactD = params.normalizer === "exact";
        const mD = residual && !exactD ? params.normalizerSamples : 0;
        const normalizerEvaluations = exactD ? nQ * nK : blocks.pairs + nQ * mD;
        const t = residual ? Math.min(params.columnSamples, nQ) : 0;
        const m = residual ? params.sampleSize : 0;
        const pairs = blocks.pairs + nQ * m;
        return {
          flops:
            lsh.flops + normalizerEvaluations * (2 * d + 3) + (residual ? t * nK * (2 * d + 4) + 3 * nK : 0) + pairs * (2 * d + 3 + 2 * dV),
          floatsStored: params.numBits * d + lsh.floatsStored + 2 * nK + nQ + m * (dV + 2) + nQ * dV,
        };
      }),
    );
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "kdeformer");
    rejectMask(problem, "kdeformer");
    const results = problem.heads.map((h, i) =>
      kdeformerAttention(
        h.queries,
        h.keys,
        h.values,
        {
          numBits: params.numBits,
          blockSize: params.blockSize,
          sampleSize: params.sampleSize,
          normalizerSamples: params.normalizerSamples,
          columnSamples: params.columnSamples,
          uniformShare: params.uniformShare,
          normalizer: params.normalizer as "approximate" | "exact",
          ...kernelOf(problem, "kdeformer"),
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});

/** `scatterbrain`: sketch's `scatterbrainAttention` on every head. */
export const scatterbrainMethod = defineMethod({
  name: "scatterbrain",
  description:
    "Scatterbrain (Chen et al. 2021): exact entries on the SimHash-bucket support plus the FAVOR+ low-rank estimate elsewhere (unbiased, no double counting); causal prefix sums under a causal mask.",
  family: "features",
  paramsSchema: paramsSchema({
    numFrequencies: intParam(1, 1 << 16, 64, "m, random frequencies of the low-rank part"),
    numBits: intParam(0, 24, 4, "SimHash bits of the sparse support (2^numBits buckets)"),
    projection: enumParam(["iid", "orthogonal"], "orthogonal", "i.i.d. or block-orthogonal frequencies"),
    normalizer: enumParam(["estimated", "exact"], "estimated", "row sums of the estimate, or the exact Z"),
  }),
  exposesWeights: false,
  costEstimate: {
    kind: "approximate",
    note: "the sparse support (query–key pairs sharing a SimHash bucket) depends on the data: the estimate assumes uniform buckets, i.e. each visible pair collides with probability 2^(−numBits) (uncorrelated queries and keys); clustered or aligned inputs collide more",
  },
  estimateCost(problem, params) {
    requireHeads(problem, "scatterbrain");
    kernelOf(problem, "scatterbrain");
    return sumCosts(
      problem.heads.map((h) => {
        const nQ = h.queries.rows;
        const nK = h.keys.rows;
        const d = h.queries.cols;
        const dV = h.values.cols;
        const m = params.numFrequencies;
        const F = m; // positive features
        const rf = randomFeatureAttentionCost(h, problem.mask, { numFrequencies: m, features: "positive", blockSize: 64 });
        let visible = nQ * nK;
        if (problem.mask) {
          const offset = problem.mask.offset ?? nK - nQ;
          visible = 0;
          for (let i = 0; i < nQ; i++) visible += Math.max(0, Math.min(nK, offset + i + 1));
        }
        const support = visible / 2 ** params.numBits;
        const exactPairs = params.normalizer === "exact" ? visible : 0;
        return {
          flops:
            rf.flops +
            2 * (nQ + nK) * d * m +
            (nQ + nK) * F +
            2 * (nQ + nK) * d * params.numBits +
            support * (2 * d + 2 * F + 4 + 2 * dV) +
            exactPairs * (2 * d + 2) +
            nQ * dV * 2,
          floatsStored: rf.floatsStored + params.numBits * d + 2 * (nQ + nK) + nQ * dV,
        };
      }),
    );
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "scatterbrain");
    const results = problem.heads.map((h, i) =>
      scatterbrainAttention(
        h.queries,
        h.keys,
        h.values,
        {
          numFrequencies: params.numFrequencies,
          numBits: params.numBits,
          projection: params.projection as "iid" | "orthogonal",
          normalizer: params.normalizer as "estimated" | "exact",
          ...kernelOf(problem, "scatterbrain"),
          ...maskOf(problem),
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});
