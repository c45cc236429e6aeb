/**
 * Row-sampling adapters (@randattn/sketch sampling/): `row-sampling` (Y ≈ Z⁻¹ A S Sᵀ V from s
 * sampled keys, any scheme × design × normalizer) and the deterministic `top-k` baseline.
 *
 * `row-sampling` also fills `dkm_expected_rel_error`, the Drineas–Kannan–Mahoney expectation
 * √(E‖Ŷ − Y‖²_F)/‖Y‖_F over all heads (DKM 2006, Lemma 4), so the row-sampling figure can draw
 * theory next to the measured error:
 *  - normalizer "exact": Ŷ_i = Σ_t c_t P[i,j_t] V_{j_t} is the with-replacement AMM estimator of
 *    PV, and sketch's `dkmExpectedSquaredError(P, V, s, p)` is its exact expected squared error
 *    (per-row distributions for the "attention" scheme);
 *  - normalizer "estimated" (the ratio estimator Σ_t c_t A_ij V_j / Σ_t c_t A_ij): its error is
 *    Ŷ_i − Y_i = Σ_t c_t A_ij (V_j − Y_i) / Ẑ_i, so to first order in 1/s (Ẑ_i → Z_i) it is the AMM
 *    estimator of P(V − 1Y_iᵀ) = 0: E‖Ŷ_i − Y_i‖² ≈ (1/s) Σ_k P_ik² ‖V_k − Y_i‖² / p_k (the
 *    delta method; exact for the "attention" scheme, whose Ẑ_i is exactly 1).
 * Without-replacement designs have other variance formulas: the column is left empty for them.
 * The expectation needs P (N_Q × N_KV); it is computed as a reference, outside the method's
 * timed run and cost, and left empty when N_Q·N_KV > 2²⁴.
 */
import { Matrix, attentionWeights, concatCols, matmul } from "@randattn/core";
import { Scratch, squaredDistanceBlocks } from "@randattn/core/internal";
import {
  SAMPLING_DESIGNS,
  VALUE_SAMPLING_SCHEMES,
  defensiveMixture,
  dkmExpectedSquaredError,
  resolveDefensiveWeight,
  sampledAttention,
  topKAttention,
  valueSamplingProbabilities,
} from "@randattn/sketch";
import type { ParamsOf } from "../define.js";
import type { HeadShape } from "../shape.js";
import type { Cost, ProblemInstance } from "../types.js";
import {
  boolParam,
  coreKernel,
  defineMethod,
  enumParam,
  frobenius2,
  headSeed,
  intParam,
  paramsSchema,
  rejectMask,
  requireHeads,
  sumCosts,
} from "./common.js";

/** Params of `row-sampling` (typed from this schema: see registry/define.ts). */
const ROW_SAMPLING_PARAMS = paramsSchema({
  samples: intParam(1, 1 << 20, 32, "s, keys sampled per head"),
  scheme: enumParam(VALUE_SAMPLING_SCHEMES, "uniform", "sampling distribution over keys"),
  design: enumParam(SAMPLING_DESIGNS, "with-replacement", "with replacement, or without (Horvitz–Thompson πps, Des Raj)"),
  normalizer: enumParam(["estimated", "exact"], "estimated", "ratio estimator from the same keys, or the exact Z (streamed)"),
  blockSize: intParam(1, 1 << 20, 256, "keys per block when streaming the exact normalizer"),
});
/** The params `row-sampling` runs with (defaults filled). */
export type RowSamplingParams = ParamsOf<typeof ROW_SAMPLING_PARAMS>;

/** Largest N_Q·N_KV for which reference values that need P are computed. */
export const MAX_REFERENCE_SCORES = 1 << 24;

/**
 * The DKM expectation √(Σ_h E‖Ŷ_h − Y_h‖²_F) / ‖Y‖_F of `row-sampling` with these params (module
 * comment), or null when it is not defined (without-replacement designs) or too large to form P.
 * @param weights P_h per head when the caller already formed them (the runner's exact reference:
 *   `ReferenceContext.weights`); the same bits as forming them here (core's `attentionWeights` with
 *   the problem's kernel; row sampling takes no mask), so only the time differs — on the quickstart
 *   about half of this function's ≈ 140 ms per trial. Ignored unless one unmasked P per head of the right shape.
 */
export function dkmExpectedRelativeError(problem: ProblemInstance, params: RowSamplingParams, weights?: readonly Matrix[]): number | null {
  if (params.design !== "with-replacement") return null;
  if (problem.heads.some((h) => h.queries.rows * h.keys.rows > MAX_REFERENCE_SCORES)) return null;
  const { scheme, normalizer } = params;
  // Both expectations are (something independent of s)/s: computed once per instance, scheme and
  // normalizer (a sweep over s reuses it; the runner keeps recent instances alive).
  let perInstance = dkmCache.get(problem);
  if (!perInstance) dkmCache.set(problem, (perInstance = new Map()));
  const key = `${scheme}/${normalizer}`;
  let unit = perInstance.get(key);
  if (!unit) {
    const kernel = coreKernel(problem);
    const given =
      problem.mask === null &&
      weights?.length === problem.heads.length &&
      weights.every((p, i) => p.rows === problem.heads[i].queries.rows && p.cols === problem.heads[i].keys.rows)
        ? weights
        : null;
    let expected = 0;
    let norm2 = 0;
    for (const [i, h] of problem.heads.entries()) {
      const head = (p: Matrix) => {
        const y = matmul(p, h.values);
        norm2 += frobenius2(y);
        // The distribution sampledAttention draws from: with the defensive uniform share where the
        // ratio estimator needs it (sketch sampling/defensive.ts; ε = 0, i.e. unchanged, elsewhere).
        const eps = resolveDefensiveWeight(undefined, scheme, normalizer === "estimated");
        const probs = scheme === "attention" ? p : defensiveMixture(valueSamplingProbabilities(scheme, h.values, p), eps);
        if (normalizer === "exact") expected += dkmExpectedSquaredError(p, h.values, 1, probs);
        else expected += ratioFirstOrderSquaredError(p, h.values, y, 1, probs);
      };
      // P formed here goes into one buffer kept by this thread rather than a fresh N_Q × N_KV array
      // per head and trial: on the benchmark VM the fresh array's page faults cost more than forming
      // P (core's scratch.ts; the scaling sweep formed 128 MiB of them per trial). P is dropped after use.
      const formed = given?.[i];
      if (formed) head(formed);
      else {
        const n = h.queries.rows * h.keys.rows;
        weightsScratch.lend(n, (buf) => head(attentionWeights(h.queries, h.keys, { kernel }, buf)));
      }
    }
    unit = { expected, norm2 };
    perInstance.set(key, unit);
  }
  if (unit.norm2 === 0) return null;
  return Math.sqrt(Math.max(0, unit.expected / params.samples) / unit.norm2);
}

/**
 * P of one head while its reference value is computed: up to MAX_REFERENCE_SCORES floats (128 MiB
 * at N = 4096) kept per thread once a task needed them. With a cap of 2²² the scaling sweep formed
 * its N = 4096 P's (128 MiB each) in fresh arrays, whose first touch cost ≈ 0.5 s a trial (stop 34).
 */
const weightsScratch = new Scratch(MAX_REFERENCE_SCORES);

const dkmCache = new WeakMap<ProblemInstance, Map<string, { expected: number; norm2: number }>>();

/**
 * The distance blocks of every head, trial and task of this thread (≤ 2¹⁸ floats, 2 MiB; used when
 * N_KV is not a multiple of 8, else the kernel's own rows are read): a fresh block each time cost its
 * first touch — 12k page faults, ≈ 45 ms, of a quickstart run (stop 30: `perf record -e page-faults`).
 */
const distanceScratch = new Scratch(1 << 18);

/**
 * (1/s) Σ_i Σ_k P_ik² ‖V_k − Y_i‖² / p_ik (p shared over rows, or per row when a Matrix), summed in
 * (i, k) order, a zero weight's term taken as 0 (whatever its distance and p). ‖V_k − Y_i‖² comes
 * from core's `squaredDistances` (the written-out Σ_c (V_kc − Y_ic)² in c order: the same bits, 5–7×
 * faster), a block of query rows at a time so the distances never take more than 2¹⁸ floats beside P.
 */
function ratioFirstOrderSquaredError(p: Matrix, v: Matrix, y: Matrix, s: number, probs: Float64Array | Matrix): number {
  const nQ = p.rows;
  const n = p.cols;
  const perRow = probs instanceof Matrix;
  const pr = perRow ? probs.data : probs;
  const block = Math.max(1, Math.floor((1 << 18) / Math.max(1, n)));
  let total = 0;
  const pd = p.data;
  const visit = (i0: number, d: Matrix) => {
    const dist = d.data;
    // The sum in a local, not the closure's `total`: the same additions in the same order, ≈ 1.4×
    // faster (a captured variable is written back to its context on every iteration).
    let t = total;
    for (let i = 0; i < d.rows; i++) {
      const row = (i0 + i) * n;
      const q = perRow ? row : 0;
      // Per-row views, and a zero weight adding +0 instead of a skipped iteration: the same bits —
      // t starts at +0 and its terms are ≥ +0 (or NaN), so t is never −0, the one value t + (+0)
      // would change — and faster: 4.3 → 2.05 ns a term on this loop alone with its data in cache
      // (stop 41, N = 4096); in the scaling sweep, where P streams from memory, `visit` took 648 →
      // 492 ms of the profile (the sweep's wall time moved within its noise).
      const w = pd.subarray(row, row + n);
      const dr = dist.subarray(i * n, (i + 1) * n);
      const pq = pr.subarray(q, q + n);
      for (let k = 0; k < n; k++) {
        const wk = w[k];
        t += wk === 0 ? 0 : (wk * wk * dr[k]) / pq[k];
      }
    }
    total = t;
  };
  // V is packed for the distance kernel once, not once per block (core's squaredDistanceBlocks).
  distanceScratch.lend(Math.min(block, nQ) * n, (buffer) => squaredDistanceBlocks(y, v, block, visit, buffer));
  return total / s;
}

/**
 * The cost sketch's `sampledAttention` reports for one head (sampling/attention.ts, values.ts):
 * query-free schemes evaluate only the s sampled columns (plus the streamed exact normalizer when
 * asked); "optimal" and "attention" form P (2·N_Q·N_KV·d + 3·N_Q·N_KV) and sample from it.
 */
export function sampledAttentionCost(h: HeadShape, params: RowSamplingParams): Cost {
  const nQ = h.queries.rows;
  const n = h.keys.rows;
  const d = h.queries.cols;
  const dV = h.values.cols;
  const s = params.samples;
  const { scheme, normalizer } = params;
  const eps = resolveDefensiveWeight(undefined, scheme, normalizer === "estimated");
  if (scheme === "optimal" || scheme === "attention") {
    const ratio = normalizer !== "exact";
    let flops: number;
    let floatsStored: number;
    if (scheme === "attention") {
      flops = 2 * nQ * n + nQ * s * (2 + 2 * dV) + (eps > 0 ? 2 * nQ * n : 0);
      floatsStored = nQ * n + 2 * nQ * s;
    } else {
      flops = 2 * n * dV + 2 * nQ * n + 2 * n + (eps > 0 ? 2 * n : 0) + nQ * s * (2 + 2 * dV);
      floatsStored = nQ * s + s * dV + 2 * s;
    }
    if (ratio) {
      flops += nQ * dV;
      floatsStored += nQ;
    }
    return { flops: flops + 2 * nQ * n * d + 3 * nQ * n, floatsStored: floatsStored + nQ * n };
  }
  const probFlops = (scheme === "value-norm" ? 2 * n * dV : 0) + (eps > 0 ? 2 * n : 0);
  let flops = probFlops + 2 * nQ * s * d + nQ * s + nQ * s * (2 + 2 * dV) + nQ * dV;
  let floatsStored = nQ * s + s * (d + dV) + 2 * s;
  if (normalizer === "exact") {
    flops += 2 * nQ * n * d + 2 * nQ * n;
    floatsStored += nQ * Math.min(params.blockSize, n) + nQ;
  }
  return { flops, floatsStored };
}

/** The cost sketch's `topKAttention` reports for one head (P formed, the full-sort count kept for committed costs). */
export function topKAttentionCost(h: HeadShape, k: number, renormalize: boolean): Cost {
  const nQ = h.queries.rows;
  const n = h.keys.rows;
  const dV = h.values.cols;
  const sortFlops = nQ * n * Math.ceil(Math.log2(n + 1));
  return {
    flops: sortFlops + 2 * nQ * k * dV + nQ * k + (renormalize ? nQ * dV : 0) + 2 * nQ * n * h.queries.cols + 3 * nQ * n,
    floatsStored: 2 * nQ * k + nQ * n,
  };
}

/** `row-sampling`: sketch's `sampledAttention` on every head (seed `derive(seed, "head", h)`). */
export const rowSampling = defineMethod({
  name: "row-sampling",
  description:
    "Y ≈ Z⁻¹ A S Sᵀ V from s sampled keys (rows of K and V) per head: sketch `sampledAttention` (schemes uniform / value-norm ∝‖V_j‖² / optimal ∝‖P[:,j]‖‖V_j‖ / attention ∝P[i,j] per query; designs; ratio-estimated or exact normalizer).",
  family: "sampling",
  paramsSchema: ROW_SAMPLING_PARAMS,
  exposesWeights: false,
  extraMetrics: [
    {
      name: "dkm_expected_rel_error",
      description:
        "√(E‖Ŷ−Y‖²_F)/‖Y‖_F by DKM: exact for normalizer exact, first order (delta method) for the ratio estimator; with replacement only",
    },
  ],
  estimateCost(problem, params) {
    requireHeads(problem, "row-sampling");
    rejectMask(problem, "row-sampling");
    return sumCosts(problem.heads.map((h) => sampledAttentionCost(h, params)));
  },
  run(problem, params, _context, seed) {
    requireHeads(problem, "row-sampling");
    rejectMask(problem, "row-sampling");
    const kernel = coreKernel(problem);
    const results = problem.heads.map((h, i) =>
      sampledAttention(
        h.queries,
        h.keys,
        h.values,
        {
          samples: params.samples,
          scheme: params.scheme,
          design: params.design,
          normalizer: params.normalizer,
          blockSize: params.blockSize,
          kernel,
        },
        headSeed(seed, i),
      ),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
  references(problem, params, context) {
    return { dkm_expected_rel_error: problem.heads.length === 0 ? null : dkmExpectedRelativeError(problem, params, context?.weights) };
  },
});

/** `top-k`: sketch's `topKAttention` on every head (deterministic). */
export const topK = defineMethod({
  name: "top-k",
  description: "Deterministic baseline: each query keeps its k largest attention weights (sketch `topKAttention`; P is formed).",
  family: "sampling",
  paramsSchema: paramsSchema({
    k: intParam(1, 1 << 20, 32, "keys kept per query"),
    renormalize: boolParam(true, "divide by the kept weights' sum (exact attention over the top-k keys)"),
  }),
  exposesWeights: false,
  estimateCost(problem, params) {
    requireHeads(problem, "top-k");
    rejectMask(problem, "top-k");
    return sumCosts(problem.heads.map((h) => topKAttentionCost(h, params.k, params.renormalize)));
  },
  run(problem, params) {
    requireHeads(problem, "top-k");
    rejectMask(problem, "top-k");
    const kernel = coreKernel(problem);
    const results = problem.heads.map((h) =>
      topKAttention(h.queries, h.keys, h.values, params.k, { renormalize: params.renormalize, kernel }),
    );
    return { output: concatCols(results.map((r) => r.output)), cost: sumCosts(results.map((r) => r.cost)) };
  },
});
