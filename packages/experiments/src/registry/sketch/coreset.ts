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
import type { HeadShape, ProblemShape } from "../shape.js";
import type { Cost } from "../types.js";
import {
  boolParam,
  coreKernel,
  enumParam,
  frobenius2,
  headSeed,
  intParam,
  nonPositiveRowFraction,
  paramsSchema,
  rejectMask,
  requireHeads,
  softmaxScale,
  sumCosts,
} from "./common.js";

function prepare(problem: Pick<ProblemShape, "heads" | "mask" | "kernel">, method: string): number | undefined {
  requireHeads(problem, method);
  rejectMask(problem, method);
  return softmaxScale(problem, method);
}

/** Sizes of one head. */
function dims(h: HeadShape) {
  return { nQ: h.queries.rows, n: h.keys.rows, d: h.keys.cols, dV: h.values.cols };
}

/**
 * `wildcatAttention`'s cost for one head with plain pivoting (sketch coreset/wildcat.ts and
 * lowrank/rpcholesky.ts): the diagonal (n kernel entries of 2d + 1 flops), then per pivot j the
 * trace (n), a column (n entries), its update by the j earlier columns (2nj) and the rescale (3n);
 * then Fᵀ[V 1], the triangular solve and attention over the r coreset keys. Exact unless RPCholesky
 * stops early (a numerically exhausted residual) or redraws a zero-residual pivot.
 */
function wildcatCost(h: HeadShape, r: number): Cost {
  const { nQ, n, d, dV } = dims(h);
  const e = 2 * d + 1;
  const w1 = dV + 1;
  const rp = n * e + r * (4 * n + n * e) + n * r * (r - 1);
  return {
    flops: rp + 2 * n * r * w1 + r * r * w1 + nQ * r * (2 * d + 1) + 2 * nQ * r * w1 + nQ * dV,
    floatsStored: n * r + 2 * n + r * (d + w1) + r,
  };
}

/** Kept points and kernel evaluations of one kernel halving of `len` points (sketch coreset/halving.ts). */
function halvingSizes(len: number): { kept: number; evaluations: number } {
  const pairs = len >> 1;
  return { kept: pairs, evaluations: 3 * pairs + 2 * pairs * (pairs - 1) };
}

/** Kept points and kernel evaluations of KH-Compress with oversampling g on `len` points (the same recursion on sizes). */
function compressSizes(len: number, g: number): { kept: number; evaluations: number } {
  if (len <= 4 ** g) return { kept: len, evaluations: 0 };
  let evaluations = 0;
  let total = 0;
  for (let t = 0; t < 4; t++) {
    const part = Math.floor(((t + 1) * len) / 4) - Math.floor((t * len) / 4);
    if (part === 0) continue;
    const r = compressSizes(part, g);
    evaluations += r.evaluations;
    total += r.kept;
  }
  const h = halvingSizes(total - (total % 2));
  return { kept: h.kept, evaluations: evaluations + h.evaluations };
}

/** `thinformerAttention`'s cost for one head: its sizes are fixed by n, h and g, whatever the data. */
function thinformerCost(h: HeadShape, params: { algorithm: string; halvings: number; oversampling: number }): Cost {
  const { nQ, n, d, dV } = dims(h);
  const halvings = params.algorithm === "kh" ? params.halvings : 0;
  const points = n - (n % 2 ** halvings);
  let thinned: { kept: number; evaluations: number };
  if (params.algorithm === "kh") {
    thinned = { kept: points, evaluations: 0 };
    for (let r = 0; r < halvings; r++) {
      const x = halvingSizes(thinned.kept);
      thinned = { kept: x.kept, evaluations: thinned.evaluations + x.evaluations };
    }
  } else thinned = compressSizes(points, params.oversampling);
  const s = thinned.kept;
  const entryFlops = 2 * d + 2 * dV + 3;
  return {
    flops: thinned.evaluations * entryFlops + 4 * thinned.evaluations + nQ * s * (2 * d + 1) + 2 * nQ * s * (dV + 1) + nQ * dV,
    floatsStored: s * (d + dV) + 3 * (n >> 1) + s,
  };
}

/** The m × m pseudo-inverse of the Nyström methods: exact (23m³, sketch nystrom/shared.ts) or the iterative one. */
function pinvFlops(m: number, pinv: string, iterations: number): number {
  return pinv === "exact" ? 23 * m * m * m : 8 * m * m * m * iterations + 2 * m * m;
}

/** `nystromformerAttention`'s cost for one head (sketch nystrom/nystromformer.ts). */
function nystromformerCost(h: HeadShape, m: number, pinv: string, iterations: number): Cost {
  const { nQ, n, d, dV } = dims(h);
  const sm = (r: number, c: number) => 2 * r * c * d + 3 * r * c;
  return {
    flops:
      (nQ + n) * d + sm(nQ, m) + sm(m, m) + sm(m, n) + 2 * m * n * dV + pinvFlops(m, pinv, iterations) + 2 * m * m * dV + 2 * nQ * m * dV,
    floatsStored: 2 * m * d + nQ * m + m * n + m * dV + (pinv === "exact" ? 4 * m * m : 5 * m * m) + m * dV,
  };
}

/** `skyformerAttention`'s cost for one head (sketch nystrom/skyformer.ts; 6 iterations when iterative, its default). */
function skyformerCost(h: HeadShape, m: number, pinv: string): Cost {
  const { nQ, n, d, dV } = dims(h);
  const w1 = dV + 1;
  const g = (r: number, c: number) => 2 * r * c * d + 4 * r * c;
  return {
    flops:
      2 * (nQ + n + m) * d +
      g(nQ, m) +
      g(m, m) +
      g(m, n) +
      n * (w1 + 1) +
      2 * m * n * w1 +
      pinvFlops(m, pinv, 6) +
      2 * m * m * w1 +
      2 * nQ * m * w1 +
      nQ * dV,
    floatsStored: m * d + nQ * m + m * n + n * w1 + (pinv === "exact" ? 4 * m * m : 5 * m * m) + 2 * m * w1 + nQ * w1,
  };
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
  costEstimate: {
    kind: "approximate",
    note: "exact for plain pivoting on generic keys; accelerated pivoting's rejections depend on the keys (the estimate is plain pivoting's cost)",
  },
  estimateCost(problem, params) {
    prepare(problem, "wildcat");
    return sumCosts(problem.heads.map((h) => wildcatCost(h, Math.min(params.coresetSize, h.keys.rows))));
  },
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
  estimateCost(problem, params) {
    prepare(problem, "thinformer");
    return sumCosts(problem.heads.map((h) => thinformerCost(h, params)));
  },
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
  estimateCost(problem, params) {
    prepare(problem, "nystromformer");
    return sumCosts(
      problem.heads.map((h) =>
        nystromformerCost(h, Math.min(params.landmarks, h.queries.rows, h.keys.rows), params.pinv, params.pinvIterations),
      ),
    );
  },
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
    onNonPositiveNormalizer: enumParam(
      ["error", "zero"],
      "error",
      "queries whose Nyström normalizer Â1 ≤ 0: fail the task, or a zero output row",
    ),
  }),
  exposesWeights: false,
  extraMetrics: [{ name: "non_positive_row_fraction", description: "fraction of query rows (all heads) whose Nyström normalizer Â1 ≤ 0" }],
  estimateCost(problem, params) {
    prepare(problem, "skyformer");
    return sumCosts(problem.heads.map((h) => skyformerCost(h, Math.min(params.landmarks, h.queries.rows + h.keys.rows), params.pinv)));
  },
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
          onNonPositiveNormalizer: params.onNonPositiveNormalizer,
          scale,
        },
        headSeed(seed, i),
      ),
    );
    return {
      output: concatCols(results.map((r) => r.output)),
      cost: sumCosts(results.map((r) => r.cost)),
      extras: { non_positive_row_fraction: nonPositiveRowFraction(results) },
    };
  },
});
