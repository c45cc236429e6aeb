/**
 * Coreset and Nyström adapters (@randattn/sketch coreset/, nystrom/): `wildcat` (RPCholesky key
 * coreset + Nyström weights), `thinformer` (kernel halving of key–value pairs), `nystromformer`
 * (segment-means landmarks), `skyformer` (Nyström of the PSD Gaussian embedding of [Q; K]).
 * None of the papers gives a causal form, so a masked problem is refused (ValueError naming
 * problem.mask). Softmax kernels only (each method approximates exp(β⟨q, k⟩)).
 */
import { attention, concatCols } from "@randattn/core";
import { nystromformerAttention, skyformerAttention, thinformerAttention, wildcatAttention } from "@randattn/sketch";
import { defineMethod } from "../define.js";
import type { ProblemInstance } from "../types.js";
import {
  boolParam,
  coreKernel,
  enumParam,
  frobenius2,
  headSeed,
  intParam,
  paramsSchema,
  rejectMask,
  requireHeads,
  softmaxScale,
  sumCosts,
} from "./common.js";

function prepare(problem: ProblemInstance, method: string): number | undefined {
  requireHeads(problem, method);
  rejectMask(problem, method);
  return softmaxScale(problem, method);
}

/** `wildcat`: sketch's `wildcatAttention` per head. */
export const wildcat = defineMethod({
  name: "wildcat",
  description:
    "WildCat (Schröder & Mackey 2026): keys coreset of size r by randomly pivoted Cholesky on exp((β/τ²)⟨k,k'⟩), Nyström weights W = K_SS⁻¹K_S:, Ŷ = e^{βQK_Sᵀ}WV / e^{βQK_Sᵀ}W1 (sketch `wildcatAttention`).",
  family: "lowrank",
  paramsSchema: paramsSchema({
    coresetSize: intParam(1, 1 << 20, 32, "r, coreset keys per head"),
    temperature: {
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1e3,
      default: 1,
      description: "τ of the Nyström kernel exp((β/τ²)⟨k,k'⟩)",
    },
    pivoting: enumParam(["plain", "accelerated"], "plain", "RPCholesky: one pivot at a time, or blocks with rejection"),
  }),
  exposesWeights: false,
  run(problem, params, _context, seed) {
    const scale = prepare(problem, "wildcat");
    const results = problem.heads.map((h, i) =>
      wildcatAttention(
        h.queries,
        h.keys,
        h.values,
        {
          coresetSize: Math.min(params.coresetSize, h.keys.rows),
          scale,
          temperature: params.temperature,
          pivoting: params.pivoting as "plain" | "accelerated",
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});

/** `thinformer`: sketch's `thinformerAttention` per head. */
export const thinformer = defineMethod({
  name: "thinformer",
  description:
    "Thinformer (Carrell et al. 2025): KH-Compress (oversampling g, ≈2^g√N pairs) or h rounds of kernel halving (⌊N/2^h⌋ pairs) of the key–value pairs under e^{β⟨k,k'⟩}(⟨v,v'⟩+1), softmax over the kept pairs (sketch `thinformerAttention`); optional a-posteriori error certificate.",
  family: "sampling",
  paramsSchema: paramsSchema({
    algorithm: enumParam(["kh-compress", "kh"], "kh-compress", "KH-Compress (near-linear) or repeated kernel halving (O(N²))"),
    oversampling: intParam(0, 30, 1, "g of KH-Compress (coreset ≈ 2^g·√N)"),
    halvings: intParam(0, 30, 1, "h, halving rounds of kh (coreset ⌊N/2^h⌋ pairs)"),
    delta: { type: "number", exclusiveMinimum: 0, maximum: 1, default: 0.5, description: "kernel halving's failure probability δ" },
    certificate: boolParam(false, "fill thinning_bound_rel_error (O(N²) reference work, not in the cost)"),
  }),
  exposesWeights: false,
  extraMetrics: [
    {
      name: "thinning_bound_rel_error",
      description:
        "a-posteriori bound √(Σ_i bound_i²)/‖Y‖_F from the MMD certificate (‖Ŷ_i−Y_i‖ ≤ √(1+‖Ŷ_i‖²)e(q_i)/(Ẑ_i−e(q_i)), e(q) = e^{β‖q‖²/2}·MMD); only with certificate: true",
    },
  ],
  run(problem, params, _context, seed) {
    const scale = prepare(problem, "thinformer");
    const certificate = params.certificate;
    const results = problem.heads.map((h, i) =>
      thinformerAttention(
        h.queries,
        h.keys,
        h.values,
        {
          algorithm: params.algorithm as "kh-compress" | "kh",
          oversampling: params.oversampling,
          halvings: params.halvings,
          delta: params.delta,
          scale,
          certificate,
        },
        headSeed(seed, i),
      ),
    );
    let extra: number | null = null;
    if (certificate) {
      // Reference work (not in the method's cost): ‖Y‖_F of the exact heads.
      let bound2 = 0;
      let norm2 = 0;
      for (let i = 0; i < results.length; i++) {
        for (const b of results[i].certificate?.rowErrorBound ?? []) bound2 += b * b;
        const h = problem.heads[i];
        norm2 += frobenius2(attention(h.queries, h.keys, h.values, { kernel: coreKernel(problem) }));
      }
      extra = norm2 > 0 ? Math.sqrt(bound2 / norm2) : null;
    }
    return {
      output: concatCols(results.map((r) => r.output)),
      cost: sumCosts(results.map((r) => r.cost)),
      extras: { thinning_bound_rel_error: extra },
    };
  },
});

/** `nystromformer`: sketch's `nystromformerAttention` per head (deterministic). */
export const nystromformer = defineMethod({
  name: "nystromformer",
  description:
    "Nyströmformer (Xiong et al. 2021): segment-means landmarks, softmax(QK̃ᵀ)·softmax(Q̃K̃ᵀ)⁺·softmax(Q̃Kᵀ)V with the paper's iterative or an exact pseudo-inverse (sketch `nystromformerAttention`).",
  family: "lowrank",
  paramsSchema: paramsSchema({
    landmarks: intParam(1, 1 << 20, 32, "m, landmarks per head"),
    pinv: enumParam(["iterative", "exact"], "iterative", "pseudo-inverse of the m × m landmark matrix"),
    pinvIterations: intParam(0, 1000, 6, "iterations of the iterative pseudo-inverse"),
  }),
  exposesWeights: false,
  run(problem, params) {
    const scale = prepare(problem, "nystromformer");
    const results = problem.heads.map((h) =>
      nystromformerAttention(h.queries, h.keys, h.values, {
        landmarks: Math.min(params.landmarks, h.queries.rows, h.keys.rows),
        pinv: params.pinv as "iterative" | "exact",
        pinvIterations: params.pinvIterations,
        scale,
      }),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});

/** `skyformer`: sketch's `skyformerAttention` per head. */
export const skyformer = defineMethod({
  name: "skyformer",
  description:
    "Skyformer (Chen et al. 2021): Nyström of the PSD Gaussian-kernel matrix on [Q; K] with m uniform landmarks, used inside softmax attention via e^{β⟨q,k⟩} = e^{β‖q‖²/2}G(q,k)e^{β‖k‖²/2} and row normalization (sketch `skyformerAttention`).",
  family: "lowrank",
  paramsSchema: paramsSchema({
    landmarks: intParam(1, 1 << 20, 32, "m, landmarks per head drawn from the rows of [Q; K]"),
    regularization: { type: "number", minimum: 0, maximum: 1e3, default: 0, description: "λ added to G(L, L)'s diagonal" },
    pinv: enumParam(["iterative", "exact"], "exact", "pseudo-inverse of the m × m landmark matrix"),
  }),
  exposesWeights: false,
  run(problem, params, _context, seed) {
    const scale = prepare(problem, "skyformer");
    const results = problem.heads.map((h, i) =>
      skyformerAttention(
        h.queries,
        h.keys,
        h.values,
        {
          landmarks: Math.min(params.landmarks, h.queries.rows + h.keys.rows),
          regularization: params.regularization,
          pinv: params.pinv as "iterative" | "exact",
          scale,
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});
