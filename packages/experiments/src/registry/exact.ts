/**
 * The exact methods: materialized and streaming (online-softmax) attention from core, with their
 * analytic costs. Also the reference every other method is measured against.
 */
import { defineMethod } from "./define.js";
import { attention, attentionWeights, concatCols, type Matrix, streamingAttention } from "@randattn/core";
import { attentionOptions } from "./kernel.js";
import { requireHeads } from "./sketch/common.js";
import type { Dims, HeadShape } from "./shape.js";
import type { Cost, MethodDefinition, MethodResult, ProblemInstance } from "./types.js";
/**
 * Flops charged per score for the kernel and row statistics (scale, row max, subtract, exp, row
 * sum) — the convention of core's accounting/flops.ts, so exact and sketch costs compare.
 */
export const SOFTMAX_FLOPS_PER_SCORE = 5;

/**
 * Flops of materialized attention of one head: QKᵀ (2·N_Q·N_KV·d_QK), the kernel (5 per score),
 * A·V (2·N_Q·N_KV·d_V) and Z⁻¹ (N_Q·d_V).
 */
export function headAttentionFlops(h: HeadShape): number {
  const nQ = h.queries.rows;
  const nK = h.keys.rows;
  const dv = h.values.cols;
  return 2 * nQ * nK * h.queries.cols + SOFTMAX_FLOPS_PER_SCORE * nQ * nK + 2 * nQ * nK * dv + nQ * dv;
}

/**
 * Analytic cost of exact materialized attention over all heads: per head QKᵀ (2·N_Q·N_KV·d_QK),
 * the kernel (5 per score), A·V (2·N_Q·N_KV·d_V) and Z⁻¹ (N_Q·d_V); memory: the distinct K/V blocks
 * (G of them for GQA) plus one N_Q×N_KV weight matrix (heads are processed one at a time).
 */
export function exactCost(problem: { readonly heads: readonly HeadShape[] }, materialized: boolean, blockSize = 64): Cost {
  let flops = 0;
  let largest = 0;
  const seen = new Set<Dims>();
  let kv = 0;
  for (const h of problem.heads) {
    const nQ = h.queries.rows;
    const nK = h.keys.rows;
    const dv = h.values.cols;
    flops += headAttentionFlops(h);
    if (!materialized) {
      // Online softmax rescales the running output once per key block: N_Q·(d_V + 2) per block.
      flops += Math.ceil(nK / blockSize) * nQ * (dv + 2);
    }
    for (const m of [h.keys, h.values]) {
      if (!seen.has(m)) {
        seen.add(m);
        kv += m.rows * m.cols;
      }
    }
    largest = Math.max(largest, materialized ? nQ * nK : nQ * (Math.min(blockSize, nK) + dv + 2));
  }
  return { flops, floatsStored: kv + largest };
}

/**
 * Exact materialized attention per head with core's `attention` (Y = Z⁻¹(AV), §2.1); when
 * weights are wanted, P = Z⁻¹A is formed as well by `attentionWeights` (into `weightsBuffer(h, n)`
 * when given: see RunContext). The output always comes
 * from the same code path, so the reference (and the exact method's zero error) never depends on
 * whether weights were asked for — or on which task a worker ran before.
 */
export function exactAttention(
  problem: ProblemInstance,
  wantWeights: boolean,
  weightsBuffer?: (head: number, n: number) => Float64Array,
): MethodResult {
  const opts = attentionOptions(problem.kernel, problem.mask);
  const outputs: Matrix[] = [];
  const weights: Matrix[] = [];
  for (const [i, h] of problem.heads.entries()) {
    outputs.push(attention(h.queries, h.keys, h.values, opts));
    if (wantWeights) weights.push(attentionWeights(h.queries, h.keys, opts, weightsBuffer?.(i, h.queries.rows * h.keys.rows)));
  }
  return { output: concatCols(outputs), cost: exactCost(problem, true), ...(wantWeights ? { weights } : {}) };
}

export const exact: MethodDefinition = {
  name: "exact",
  description: "Exact attention Y = Z⁻¹AV with the N_Q×N_KV kernel matrix materialized (core `attention`).",
  family: "exact",
  paramsSchema: { type: "object", properties: {}, additionalProperties: false },
  exposesWeights: true,
  estimateCost: (problem) => exactCost(problem, true),
  run(problem, _params, context, _seed) {
    requireHeads(problem, "exact");
    return exactAttention(problem, context.wantWeights, context.weightsBuffer);
  },
};

export const exactStreaming = defineMethod({
  name: "exact-streaming",
  description: "Exact attention by online softmax over key blocks, never forming N_Q×N_KV (core `streamingAttention`).",
  family: "exact",
  paramsSchema: {
    type: "object",
    properties: { blockSize: { type: "integer", minimum: 1, maximum: 1 << 20, default: 64, description: "keys per block" } },
    additionalProperties: false,
  },
  exposesWeights: false,
  estimateCost: (problem, params) => exactCost(problem, false, params.blockSize),
  run(problem, params) {
    requireHeads(problem, "exact-streaming");
    const blockSize = params.blockSize;
    const opts = { ...attentionOptions(problem.kernel, problem.mask), blockSize };
    const outputs = problem.heads.map((h) => streamingAttention(h.queries, h.keys, h.values, opts));
    return { output: concatCols(outputs), cost: exactCost(problem, false, blockSize) };
  },
});
