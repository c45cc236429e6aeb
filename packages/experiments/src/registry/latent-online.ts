/**
 * `latent-online`: the MLA latent of a `deepseek-v2-mla` problem compressed WHILE it is appended —
 * sketch kvcache's `OnlineLatentCache` (incremental SVD truncated to rank k after every append),
 * fed a prefill of `prefill` rows then one row per decode step — against the one-shot
 * `latent-rsvd` / `latent-svd` that see the whole latent at once. The heads then attend to the
 * final L̃ exactly as those methods do (registry/sketch/lowrank.ts), so the columns compare.
 */
import { defineMethod } from "./define.js";
import { Matrix } from "@randattn/core";
import { OnlineLatentCache } from "@randattn/sketch";
import {
  attendOnFactor,
  attendOnFactorFlops,
  largestScores,
  latentSpectralError,
  optimum,
  requireLatent,
  singularValues,
} from "./sketch/lowrank.js";

export const latentOnline = defineMethod({
  name: "latent-online",
  description:
    "MLA latent compressed online to rank k (sketch kvcache `OnlineLatentCache`: incremental SVD, truncated after each append; prefill then one token per step); heads attend to the final L̃ = W diag(σ) Uᵀ. Stores N·k + k + d_L·k floats.",
  family: "latent",
  paramsSchema: {
    type: "object",
    properties: {
      rank: { type: "integer", minimum: 1, maximum: 8192, default: 16, description: "k, the rank kept" },
      prefill: { type: "integer", minimum: 1, maximum: 65536, default: 64, description: "rows appended in the first call" },
    },
    additionalProperties: false,
  },
  exposesWeights: false,
  extraMetrics: [
    { name: "cache_floats", description: "floats in the KV cache: N_KV·k for a rank-k latent (N_KV·d_L exact), N_KV·d_L after MHA→MLA" },
    { name: "latent_rel_error", description: "‖L − L̃‖_F/‖L‖_F of the compressed latent" },
    { name: "latent_rel_spectral_error", description: "‖L − L̃‖₂/‖L‖₂ of the compressed latent" },
    { name: "optimal_latent_rel_error", description: "Eckart–Young optimum τ_{k+1}/‖L‖_F (truncated SVD)" },
    { name: "optimal_latent_rel_spectral_error", description: "Eckart–Young optimum σ_{k+1}/σ_1" },
  ],
  estimateCost(problem, params) {
    const latent = requireLatent(problem, "latent-online");
    const { rows: N, cols: dL } = latent.latent;
    const prefill = Math.min(params.prefill, N);
    const { flops, rows: n, rank: k } = onlineLatentAppendCost(dL, params.rank, prefill, N - prefill);
    const cacheFloats = n * k + dL * k + k;
    return { flops: flops + attendOnFactorFlops(problem, latent, N, k), floatsStored: cacheFloats + largestScores(problem) };
  },
  run(problem, params) {
    const latent = requireLatent(problem, "latent-online");
    const L = latent.latent;
    const cache = new OnlineLatentCache({ latentDim: L.cols, rank: params.rank });
    const prefill = Math.min(params.prefill, L.rows);
    let flops = 0;
    const rows = (a: number, b: number) => new Matrix(b - a, L.cols, L.data.slice(a * L.cols, b * L.cols));
    cache.append(rows(0, prefill));
    flops += cache.lastFlops;
    for (let i = prefill; i < L.rows; i++) {
      cache.append(rows(i, i + 1));
      flops += cache.lastFlops;
    }
    const { factor, basis } = cache.factors();
    const attended = attendOnFactor(problem, latent, factor, basis);
    const approx = cache.latent();
    let num = 0;
    let den = 0;
    for (let i = 0; i < L.data.length; i++) {
      num += (L.data[i] - approx.data[i]) ** 2;
      den += L.data[i] ** 2;
    }
    return {
      output: attended.output,
      cost: { flops: flops + attended.flops, floatsStored: cache.floatsStored() + largestScores(problem) },
      extras: {
        cache_floats: cache.floatsStored(),
        latent_rel_error: Math.sqrt(num / den),
        latent_rel_spectral_error: latentSpectralError(L, factor, basis),
      },
    };
  },
  references(problem, params): Record<string, number | null> {
    if (!problem.latent) return {};
    const opt = optimum(singularValues(problem.latent.latent), params.rank);
    return { optimal_latent_rel_error: opt.frobenius, optimal_latent_rel_spectral_error: opt.spectral };
  },
});

/**
 * `OnlineLatentCache.update`'s flop count (sketch kvcache/latent.ts) for a prefill of `prefill` rows
 * followed by `singles` one-row appends, chunked by d_L, with the rank it keeps: min(rank, k + t).
 * Every singular value of the core is > 0 unless the latent is rank-deficient (then the recorded
 * flops are lower: a bound). Returns the flops, the rows held and the rank kept at the end.
 */
export function onlineLatentAppendCost(
  dL: number,
  rank: number,
  prefill: number,
  singles: number,
): { flops: number; rows: number; rank: number } {
  let n = 0;
  let k = 0;
  let flops = 0;
  const append = (t0: number) => {
    for (let r0 = 0; r0 < t0; r0 += dL) {
      const t = Math.min(dL, t0 - r0);
      const m = k + t;
      const keep = Math.max(1, Math.min(rank, m));
      flops += 4 * t * k * dL + 2 * dL * t * t + 20 * m * m * m + 2 * (n + t) * m * keep + 2 * dL * m * keep;
      n += t;
      k = keep;
    }
  };
  append(prefill);
  for (let i = 0; i < singles; i++) append(1);
  return { flops, rows: n, rank: k };
}
