/**
 * Low-rank adapters (@randattn/sketch lowrank/) on model-shaped problems:
 * - `latent-rsvd` / `latent-svd`: compress the MLA latent cache L = X W_L (N_KV × d_L) of a
 *   `deepseek-v2-mla` problem to rank k with sketch's `compressLatent` (randomized SVD, or the
 *   optimal truncated SVD as the reference method): C = L Ṽ (N_KV × k) is what the cache holds,
 *   and every head attends to K̃_h = C (Ṽᵀ W_LK^h), Ṽ_h = C (Ṽᵀ W_LV^h) — i.e. to the compressed
 *   latent L̃ = C Ṽᵀ (§4.2; the basis folds into the up-projections).
 * - `mha-to-mla`: convert the GQA/MHA layer of a `llama3-gqa` problem to MLA with sketch's
 *   `multiHeadToMla` (SVD of the stacked [W_K, W_V]), then attend with K_h = X W_L W_LK^h,
 *   V_h = X W_L W_LV^h; the cache holds d_L floats per token instead of G·(d_QK + d_V).
 *
 * Reference columns (outside the timed run): the Eckart–Young optimum of the latent (τ_{k+1}/‖L‖_F,
 * σ_{k+1}/σ_1) and, for `latent-rsvd`, the HMT bound on the expected spectral error.
 */
import { type Matrix, ValueError, attention, concatCols, matmul } from "@randattn/core";
import {
  type Orthonormalization,
  type SvdMethod,
  type TestMatrixKind,
  compressLatent,
  countSketch,
  createSketch,
  exactSingularValues,
  gaussianSketch,
  multiHeadToMla,
  rademacherSketch,
  sparseSignSketch,
  srhtSketch,
} from "@randattn/sketch";
import type { HeadShape, ProblemShape } from "../shape.js";
import { spectralNorm } from "../../base/metrics.js";
import { headAttentionFlops } from "../exact.js";
import { attentionOptions } from "../kernel.js";
import type { AttentionHead, Cost, LatentStructure, ProblemInstance } from "../types.js";
import { defineMethod, enumParam, intParam, paramsSchema, requireHeads } from "./common.js";

const TEST_MATRICES: readonly TestMatrixKind[] = ["gaussian", "rademacher", "srht", "countsketch", "sparse-sign"];
const ORTHONORMALIZATIONS: readonly Orthonormalization[] = ["qr", "lu", "none"];

/** The randomized-SVD params shared by `latent-rsvd` and `mha-to-mla`. */
const RSVD_PARAMS = {
  oversampling: intParam(0, 4096, 10, "p, extra samples: ℓ = min(k + p, m, n)"),
  powerIterations: intParam(0, 64, 2, "q, power (subspace) iterations"),
  testMatrix: enumParam(TEST_MATRICES, "gaussian", "test matrix Ω of the range finder"),
  orthonormalization: enumParam(ORTHONORMALIZATIONS, "qr", "re-normalization between power steps"),
};

/** The range-finder options of the typed RSVD params (absent ones keep the sketch defaults). */
function rsvdOptions(params: {
  readonly oversampling?: number;
  readonly powerIterations?: number;
  readonly testMatrix?: TestMatrixKind;
  readonly orthonormalization?: Orthonormalization;
}) {
  return {
    oversampling: params.oversampling,
    powerIterations: params.powerIterations,
    testMatrix: params.testMatrix,
    orthonormalization: params.orthonormalization,
  };
}

export function requireLatent<L>(problem: { readonly heads: readonly HeadShape[]; readonly latent?: L }, method: string): L {
  requireHeads(problem, method);
  if (!problem.latent)
    throw new ValueError("problem", `an MLA problem (deepseek-v2-mla) for method "${method}"`, "a problem without a latent");
  return problem.latent;
}

/** Flops of materialized attention of new heads (same count as the exact method's). */
function attentionFlops(heads: readonly AttentionHead[]): number {
  let flops = 0;
  for (const h of heads) flops += headAttentionFlops(h);
  return flops;
}

/** Largest N_Q × N_KV score matrix over heads (heads are processed one at a time). */
export function largestScores(problem: Pick<ProblemShape, "heads">): number {
  return Math.max(...problem.heads.map((h) => h.queries.rows * h.keys.rows));
}

/**
 * Flops of attending on a rank-k latent factor (N_KV × k) with d_L-wide up-projections: folding the
 * basis into each head's W_LK^h, W_LV^h (2·k·d_L·width), forming K̃_h, Ṽ_h (2·N_KV·k·width) and
 * materialized attention of the new heads — `attendOnFactor`'s count, from sizes.
 */
export function attendOnFactorFlops(
  problem: Pick<ProblemShape, "heads">,
  latent: NonNullable<ProblemShape["latent"]>,
  n: number,
  k: number,
): number {
  const dL = latent.latent.cols;
  let flops = 0;
  problem.heads.forEach((h, i) => {
    const width = latent.keyUp[i].cols + latent.valueUp[i].cols;
    flops += 2 * k * dL * width + 2 * n * k * width;
    flops += headAttentionFlops({
      queries: h.queries,
      keys: { rows: n, cols: latent.keyUp[i].cols },
      values: { rows: n, cols: latent.valueUp[i].cols },
    });
  });
  return flops;
}

/** The flops of sketch's `randomizedSvd` of an m × n matrix at rank k (its qb + range finder accounting, lowrank/svd.ts, qb.ts, rangefinder.ts). */
export function randomizedSvdFlops(
  m: number,
  n: number,
  k: number,
  params: { oversampling: number; powerIterations: number; testMatrix: TestMatrixKind; orthonormalization: Orthonormalization },
): number {
  const l = Math.min(k + params.oversampling, m, n);
  const dist = {
    gaussian: gaussianSketch,
    rademacher: rademacherSketch,
    srht: srhtSketch,
    countsketch: countSketch,
    "sparse-sign": sparseSignSketch,
  }[params.testMatrix](n, l);
  // The operator is lazy: its cost is a function of its distribution (no entries are drawn here).
  const sketch = createSketch(dist, [0, "cost-estimate"]).cost(m, "right").flops;
  const renorm = (rows: number) =>
    params.orthonormalization === "qr" ? qrFlops(rows, l) : params.orthonormalization === "lu" ? rows * l * l : 0;
  const power = params.powerIterations * (renorm(m) + renorm(n) + 4 * m * n * l);
  return sketch + power + qrFlops(m, l) + 2 * m * n * l + 4 * n * l * l + 8 * l * l * l + 2 * m * l * k;
}

/** Householder QR with explicit thin Q of an m × n matrix (sketch lowrank/rangefinder.ts `qrFlops`). */
function qrFlops(m: number, n: number): number {
  return 4 * m * n * n - (4 / 3) * n * n * n;
}

/** Attention of every head on the latent factor C with folded up-projections Bᵀ W^h (B = basis). */
export function attendOnFactor(
  problem: ProblemInstance,
  latent: LatentStructure,
  factor: Matrix,
  basis: Matrix,
): { output: Matrix; flops: number } {
  const opts = attentionOptions(problem.kernel, problem.mask);
  const heads = problem.heads.map((h, i) => ({
    queries: h.queries,
    keys: matmul(factor, matmul(basis, latent.keyUp[i])),
    values: matmul(factor, matmul(basis, latent.valueUp[i])),
  }));
  const output = concatCols(heads.map((h) => attention(h.queries, h.keys, h.values, opts)));
  const n = factor.rows;
  const k = factor.cols;
  const dL = basis.cols;
  let fold = 0;
  for (let i = 0; i < heads.length; i++) {
    const width = latent.keyUp[i].cols + latent.valueUp[i].cols;
    fold += 2 * k * dL * width + 2 * n * k * width;
  }
  return { output, flops: fold + attentionFlops(heads) };
}

/** ‖L − L̃‖₂/‖L‖₂ of the compressed latent L̃ = C Ṽᵀ. */
export function latentSpectralError(latent: Matrix, factor: Matrix, basis: Matrix): number {
  const diff = matmul(factor, basis);
  for (let i = 0; i < diff.data.length; i++) diff.data[i] = latent.data[i] - diff.data[i];
  return spectralNorm(diff) / spectralNorm(latent);
}

// Singular values of a problem's latent, computed once per instance (the runner caches instances).
const spectra = new WeakMap<Matrix, Float64Array>();
export function singularValues(a: Matrix): Float64Array {
  let s = spectra.get(a);
  if (!s) {
    s = exactSingularValues(a);
    spectra.set(a, s);
  }
  return s;
}

/**
 * The HMT bound on E‖A − A Ṽ_k Ṽ_kᵀ‖₂ for the rank-k truncated randomized SVD with ℓ = k + p
 * samples and q power iterations. HMT 2011 Cor. 10.10 bounds the projection error of the
 * ℓ-dimensional range: E‖A − QQᵀA‖₂ ≤ [(1 + √(k/(p−1)))σ_{k+1}^{2q+1} +
 * (e√(k+p)/p)(Σ_{j>k} σ_j^{2(2q+1)})^{1/2}]^{1/(2q+1)} (p ≥ 2). Truncating to rank k costs at most
 * σ_{k+1} more: ‖A − [[QQᵀA]]_k‖₂ ≤ ‖A − QQᵀA‖₂ + ‖QQᵀ(A − A_k)‖₂, and A Ṽ_kṼ_kᵀ is the best
 * approximation with that row space, so it is no worse. Null when the effective p = ℓ − k < 2.
 */
export function hmtSpectralBound(sigma: Float64Array, k: number, oversampling: number, q: number, m: number, n: number): number | null {
  const p = Math.min(k + oversampling, m, n) - k;
  if (p < 2) return null;
  const e = 2 * q + 1;
  const tail = sigma.length > k ? sigma[k] : 0;
  let sum = 0;
  for (let j = k; j < sigma.length; j++) sum += sigma[j] ** (2 * e);
  const inner = (1 + Math.sqrt(k / (p - 1))) * tail ** e + ((Math.E * Math.sqrt(k + p)) / p) * Math.sqrt(sum);
  return tail + inner ** (1 / e);
}

/** Eckart–Young optimum of a rank-k approximation, relative: τ_{k+1}/‖L‖_F and σ_{k+1}/σ_1. */
export function optimum(sigma: Float64Array, k: number): { frobenius: number; spectral: number } {
  let tail = 0;
  let total = 0;
  for (let j = 0; j < sigma.length; j++) {
    total += sigma[j] ** 2;
    if (j >= k) tail += sigma[j] ** 2;
  }
  return { frobenius: Math.sqrt(tail / total), spectral: (sigma[k] ?? 0) / sigma[0] };
}

const LATENT_EXTRAS = [
  { name: "cache_floats", description: "floats in the KV cache: N_KV·k for a rank-k latent (N_KV·d_L exact), N_KV·d_L after MHA→MLA" },
  { name: "latent_rel_error", description: "‖L − L̃‖_F/‖L‖_F of the compressed latent" },
  { name: "latent_rel_spectral_error", description: "‖L − L̃‖₂/‖L‖₂ of the compressed latent" },
  { name: "optimal_latent_rel_error", description: "Eckart–Young optimum τ_{k+1}/‖L‖_F (truncated SVD)" },
  { name: "optimal_latent_rel_spectral_error", description: "Eckart–Young optimum σ_{k+1}/σ_1" },
] as const;

function latentMethod(name: string, svd: SvdMethod) {
  const randomized = svd === "randomized";
  return defineMethod({
    name,
    description: randomized
      ? "MLA latent cache compressed to rank k by randomized SVD (sketch `compressLatent`: HMT range finder with p, q, test matrix); heads attend to L̃ = C Ṽᵀ, the cache holds C = L Ṽ (N_KV × k)."
      : "Reference: MLA latent cache compressed to rank k by the optimal truncated SVD (Eckart–Young; sketch `compressLatent` with method exact).",
    family: "latent",
    paramsSchema: paramsSchema({ rank: intParam(1, 8192, 16, "k, the compressed latent width"), ...(randomized ? RSVD_PARAMS : {}) }),
    exposesWeights: false,
    extraMetrics: [
      ...LATENT_EXTRAS,
      ...(randomized
        ? [{ name: "hmt_bound_rel_spectral_error", description: "HMT bound (Cor. 10.10 + σ_{k+1} for truncation) on E‖L − L̃‖₂, over σ_1" }]
        : []),
    ],
    estimateCost(problem, params) {
      const latent = requireLatent(problem, name);
      const k = params.rank;
      const { rows: n, cols: dL } = latent.latent;
      const svdFlops = randomized
        ? randomizedSvdFlops(n, dL, k, params as unknown as Parameters<typeof randomizedSvdFlops>[3])
        : 4 * n * dL * Math.min(n, dL) + 8 * Math.min(n, dL) ** 3;
      // compressLatent adds C = L Ṽ (2·N_KV·d_L·k).
      return {
        flops: svdFlops + 2 * n * dL * k + attendOnFactorFlops(problem, latent, n, k),
        floatsStored: n * k + largestScores(problem),
      };
    },
    run(problem, params, _context, seed) {
      const latent = requireLatent(problem, name);
      const k = params.rank;
      const compressed = compressLatent(latent.latent, { rank: k, method: svd, ...(randomized ? rsvdOptions(params) : {}) }, seed);
      const { output, flops } = attendOnFactor(problem, latent, compressed.factor, compressed.basis);
      const cost: Cost = { flops: compressed.cost.flops + flops, floatsStored: compressed.factor.data.length + largestScores(problem) };
      return {
        output,
        cost,
        extras: {
          cache_floats: compressed.factor.data.length,
          latent_rel_error: compressed.relativeError,
          latent_rel_spectral_error: latentSpectralError(latent.latent, compressed.factor, compressed.basis),
        },
      };
    },
    references(problem, params) {
      if (!problem.latent) return {};
      const l = problem.latent.latent;
      const sigma = singularValues(l);
      const k = params.rank;
      const opt = optimum(sigma, k);
      const out: Record<string, number | null> = {
        optimal_latent_rel_error: opt.frobenius,
        optimal_latent_rel_spectral_error: opt.spectral,
      };
      if (randomized) {
        const bound = // present whenever randomized: the RSVD params are in the schema with defaults
          hmtSpectralBound(sigma, k, params.oversampling!, params.powerIterations!, l.rows, l.cols);
        out.hmt_bound_rel_spectral_error = bound === null ? null : bound / sigma[0];
      }
      return out;
    },
  });
}

/** `latent-rsvd`: randomized-SVD compression of the MLA latent. */
export const latentRsvd = latentMethod("latent-rsvd", "randomized");
/** `latent-svd`: the optimal truncated SVD of the latent (reference method). */
export const latentSvd = latentMethod("latent-svd", "exact");

/** `mha-to-mla`: MHA/GQA → MLA conversion by (randomized) SVD of the stacked K/V weights. */
export const mhaToMla = defineMethod({
  name: "mha-to-mla",
  description:
    "Converts the GQA/MHA layer of a llama3-gqa problem to MLA (sketch `multiHeadToMla`: SVD of [W_K, W_V], W_L = U_r Σ_r) and attends with K_h = X W_L W_LK^h, V_h = X W_L W_LV^h; the cache holds d_L floats per token instead of G·(d_QK + d_V).",
  family: "lowrank",
  paramsSchema: paramsSchema({
    latentDim: intParam(1, 8192, 16, "d_L, the latent width"),
    svd: enumParam(["randomized", "exact"], "randomized", "randomized SVD or the exact (optimal) truncated SVD"),
    ...RSVD_PARAMS,
  }),
  exposesWeights: false,
  extraMetrics: [
    { name: "cache_floats", description: "floats in the KV cache: N_KV·d_L (the GQA layer: N_KV·G·(d_QK + d_V))" },
    { name: "weight_rel_error", description: "‖[W_K, W_V] − W_L[W_LK, W_LV]‖_F/‖[W_K, W_V]‖_F" },
  ],
  estimateCost(problem, params) {
    requireHeads(problem, "mha-to-mla");
    const mh = problem.multiHead;
    if (!mh)
      throw new ValueError("problem", 'a multi-head problem (llama3-gqa) for method "mha-to-mla"', "a problem without multi-head weights");
    // The conversion is of the weights (once per model, offline): the cost is the layer's use of it.
    const n = mh.x.rows;
    const dL = params.latentDim;
    let flops = 2 * n * mh.x.cols * dL;
    problem.heads.forEach((h) => {
      const up = { keys: { rows: n, cols: h.keys.cols }, values: { rows: n, cols: h.values.cols } };
      flops += 2 * n * dL * (up.keys.cols + up.values.cols) + headAttentionFlops({ queries: h.queries, ...up });
    });
    return { flops, floatsStored: n * dL + largestScores(problem) };
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "mha-to-mla");
    const mh = problem.multiHead;
    if (!mh)
      throw new ValueError("problem", 'a multi-head problem (llama3-gqa) for method "mha-to-mla"', "a problem without multi-head weights");
    const { weights, report } = multiHeadToMla(
      mh.weights,
      { latentDim: params.latentDim, method: params.svd, ...rsvdOptions(params) },
      seed,
    );
    const latent = matmul(mh.x, weights.latentDown);
    const opts = attentionOptions(problem.kernel, problem.mask);
    const heads = problem.heads.map((h, i) => ({
      queries: h.queries,
      keys: matmul(latent, weights.keyUp[i]),
      values: matmul(latent, weights.valueUp[i]),
    }));
    const output = concatCols(heads.map((h) => attention(h.queries, h.keys, h.values, opts)));
    const n = mh.x.rows;
    const dL = latent.cols;
    let up = 0;
    for (let i = 0; i < heads.length; i++) up += 2 * n * dL * (heads[i].keys.cols + heads[i].values.cols);
    return {
      output,
      cost: { flops: 2 * n * mh.x.cols * dL + up + attentionFlops(heads), floatsStored: n * dL + largestScores(problem) },
      extras: { cache_floats: n * dL, weight_rel_error: report.weightRelativeError },
    };
  },
});
