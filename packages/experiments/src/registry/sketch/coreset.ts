/**
 * Coreset and Nyström adapters (@randattn/sketch coreset/, nystrom/): `wildcat` (RPCholesky key
 * coreset + Nyström weights), `thinformer` (kernel halving of key–value pairs), `nystromformer`
 * (segment-means landmarks), `skyformer` (Nyström of the PSD Gaussian embedding of [Q; K]).
 * None of the papers gives a causal form, so a masked problem is refused (ValueError naming
 * problem.mask). Softmax kernels only (each method approximates exp(β⟨q, k⟩)).
 */
import { concatCols } from "@randattn/core";
import { nystromformerAttention, skyformerAttention, thinformerAttention, wildcatAttention } from "@randattn/sketch";
import type { MethodDefinition, ProblemInstance } from "../types.js";
import { enumParam, headSeed, intParam, paramsSchema, rejectMask, requireHeads, softmaxScale, sumCosts } from "./common.js";

function prepare(problem: ProblemInstance, method: string): number | undefined {
  requireHeads(problem, method);
  rejectMask(problem, method);
  return softmaxScale(problem, method);
}

/** `wildcat`: sketch's `wildcatAttention` per head. */
export const wildcat: MethodDefinition = {
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
  run(problem, params, seed) {
    const scale = prepare(problem, "wildcat");
    const results = problem.heads.map((h, i) =>
      wildcatAttention(
        h.queries,
        h.keys,
        h.values,
        {
          coresetSize: Math.min(params.coresetSize as number, h.keys.rows),
          scale,
          temperature: params.temperature as number,
          pivoting: params.pivoting as "plain" | "accelerated",
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
};

/** `thinformer`: sketch's `thinformerAttention` per head. */
export const thinformer: MethodDefinition = {
  name: "thinformer",
  description:
    "Thinformer (Carrell et al. 2025): kernel halving (h rounds) of the key–value pairs under e^{β⟨k,k'⟩}(⟨v,v'⟩+1), softmax attention over the ⌊N/2^h⌋ kept pairs (sketch `thinformerAttention`).",
  family: "sampling",
  paramsSchema: paramsSchema({
    halvings: intParam(0, 30, 3, "h, halving rounds (coreset ⌊N_KV/2^h⌋ pairs)"),
    delta: { type: "number", exclusiveMinimum: 0, maximum: 1, default: 0.5, description: "kernel halving's failure probability δ" },
  }),
  exposesWeights: false,
  run(problem, params, seed) {
    const scale = prepare(problem, "thinformer");
    const results = problem.heads.map((h, i) =>
      thinformerAttention(
        h.queries,
        h.keys,
        h.values,
        { halvings: params.halvings as number, delta: params.delta as number, scale },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
};

/** `nystromformer`: sketch's `nystromformerAttention` per head (deterministic). */
export const nystromformer: MethodDefinition = {
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
        landmarks: Math.min(params.landmarks as number, h.queries.rows, h.keys.rows),
        pinv: params.pinv as "iterative" | "exact",
        pinvIterations: params.pinvIterations as number,
        scale,
      }),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
};

/** `skyformer`: sketch's `skyformerAttention` per head. */
export const skyformer: MethodDefinition = {
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
  run(problem, params, seed) {
    const scale = prepare(problem, "skyformer");
    const results = problem.heads.map((h, i) =>
      skyformerAttention(
        h.queries,
        h.keys,
        h.values,
        {
          landmarks: Math.min(params.landmarks as number, h.queries.rows + h.keys.rows),
          regularization: params.regularization as number,
          pinv: params.pinv as "iterative" | "exact",
          scale,
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
};
