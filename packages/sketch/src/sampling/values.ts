/**
 * Row sampling of V: Y = W V (W = P = Z⁻¹A, or the unnormalized A with its normalizer) estimated
 * from s of the N_KV rows of V (Serret 2026 §2.1's Y = Z⁻¹AV read as a matrix product, sampled as
 * in approximate matrix multiplication, sampling/matmul.ts).
 *
 * Probability schemes over the keys j:
 *  - `"uniform"`:    p_j = 1/N_KV;
 *  - `"value-norm"`: p_j ∝ ‖V_j‖²;
 *  - `"optimal"`:    p_j ∝ ‖W[:,j]‖·‖V_j‖ (DKM-optimal for the whole product);
 *  - `"attention"`:  per query i, p_ij ∝ W[i,j] (each query row draws its own sample; with W = P
 *                    and replacement the estimate is the plain mean (1/s)Σ_t V_{j_t}).
 * Normalization (`normalize`):
 *  - `"none"`:  estimate W V itself (unbiased) — use with W = P;
 *  - `"exact"`: W is A; estimate A V (unbiased) and divide by the exact Z = A·1 — unbiased for PV;
 *  - `"ratio"`: W is A (or P); estimate A V and Z = A·1 from the SAME sampled keys and divide: the
 *               ratio estimator of sampling-based attention. Biased at O(1/s), consistent.
 */
import { Matrix, NumericalError, type SeedKey, ShapeError, ValueError, derive, selectRows } from "@randattn/core";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import { sampledProduct } from "./accumulate.js";
import type { Cost } from "../operators/types.js";
import { normalizeWeights } from "../random/probabilities.js";
import { defensiveMixture, resolveDefensiveWeight } from "./defensive.js";
import { SAMPLING_DESIGNS, type SamplingDesign, drawWeightedSample } from "./design.js";
import { optimalMatmulProbabilities, squaredRowNorms } from "./matmul.js";
import { perQueryAttentionDraw } from "./perQuery.js";

/** Which distribution over keys the rows of V are drawn from. */
export type ValueSamplingScheme = "uniform" | "value-norm" | "optimal" | "attention";
/** All schemes. */
export const VALUE_SAMPLING_SCHEMES: readonly ValueSamplingScheme[] = ["uniform", "value-norm", "optimal", "attention"];
/** What the weight matrix is and how the estimate is normalized (module comment). */
export type ValueNormalization = "none" | "exact" | "ratio";

/** Options of {@link sampledValueProduct}. */
export interface SampledValueOptions {
  /** s, samples per estimate (≥ 1; ≤ N_KV's support for without-replacement designs). */
  samples: number;
  /** Sampling distribution over keys. @default "uniform" */
  scheme?: ValueSamplingScheme;
  /** How indices are drawn and weighted (sampling/design.ts). @default "with-replacement" */
  design?: SamplingDesign;
  /** `"none"` (estimate W V), `"exact"` (W = A, divide by exact Z) or `"ratio"` (estimate Z too). @default "none" */
  normalize?: ValueNormalization;
  /**
   * ε of the defensive mixture (1 − ε)p + ε·uniform (sampling/defensive.ts). ε = 0 is refused for
   * `normalize: "ratio"` with scheme "value-norm" or "optimal".
   * @default 0.1 for the ratio estimator with "value-norm" / "optimal", 0 otherwise
   */
  defensiveWeight?: number;
}

/** Result of the row-sampling estimators. */
export interface SampledValueResult {
  /** The estimate of W V (or Z⁻¹AV), N_Q × d_V. */
  output: Matrix;
  cost: Cost;
  /** Sampled keys: length s (shared by all queries) or N_Q·s row-major (`perQuery`). */
  indices: Int32Array;
  /** Weights c of the sampled keys, same layout as `indices`. */
  weights: Float64Array;
  /** Probabilities: length N_KV, or N_Q·N_KV row-major (`perQuery`). */
  probabilities: Float64Array;
  /** True for the per-query `"attention"` scheme. */
  perQuery: boolean;
}

/**
 * Validates W (N_Q × N_KV) and V (N_KV × d_V); with `weightEntries` false, all but W's entries
 * (a caller that checks them on its own pass, then calls {@link checkWeightEntries} for the error).
 */
export function checkWeightsValues(weights: Matrix, values: Matrix, wName = "weights", vName = "values", weightEntries = true): void {
  assertMatrix(weights, wName);
  assertMatrix(values, vName);
  assertNonEmpty(weights, wName);
  assertNonEmpty(values, vName);
  if (values.rows !== weights.cols) throw new ShapeError(vName, `${weights.cols}×* (rows = ${wName}.cols = N_KV)`, values.shape);
  if (weightEntries) assertFinite(weights, wName);
  assertFinite(values, vName);
}

/**
 * W's entries as sampledValueProduct checks them, in its order: finite (NonFiniteError naming the
 * first non-finite entry), then ≥ 0 where `nonNegative` (ValueError naming the first negative one).
 */
function checkWeightEntries(weights: Matrix, nonNegative: boolean, scheme: ValueSamplingScheme, normalize: ValueNormalization): void {
  assertFinite(weights, "weights");
  const w = weights.data;
  const n = weights.cols;
  if (nonNegative && hasNegative(w)) {
    for (let q = 0; q < w.length; q++) {
      if (w[q] < 0) {
        throw new ValueError(
          "weights",
          `non-negative entries (scheme "${scheme}", normalize "${normalize}")`,
          `${w[q]} at [${Math.floor(q / n)}, ${q % n}]`,
        );
      }
    }
  }
}

/** Whether any entry is < 0: four running minima without a branch per entry (the scan that names it runs only then). */
function hasNegative(w: Float64Array): boolean {
  let m0 = 0;
  let m1 = 0;
  let m2 = 0;
  let m3 = 0;
  let i = 0;
  for (; i + 3 < w.length; i += 4) {
    m0 = Math.min(m0, w[i]);
    m1 = Math.min(m1, w[i + 1]);
    m2 = Math.min(m2, w[i + 2]);
    m3 = Math.min(m3, w[i + 3]);
  }
  for (; i < w.length; i++) m0 = Math.min(m0, w[i]);
  return Math.min(m0, m1, m2, m3) < 0;
}

/**
 * Shared-scheme probabilities over the N_KV keys ("uniform", "value-norm", "optimal").
 * `weights` is only read for "optimal".
 */
export function valueSamplingProbabilities(
  scheme: Exclude<ValueSamplingScheme, "attention">,
  values: Matrix,
  weights?: Matrix,
): Float64Array {
  assertOneOf(scheme, "scheme", ["uniform", "value-norm", "optimal"] as const);
  if (scheme === "optimal" && weights !== undefined) checkWeightsValues(weights, values);
  assertMatrix(values, "values");
  assertNonEmpty(values, "values");
  assertFinite(values, "values");
  const n = values.rows;
  if (scheme === "uniform") return new Float64Array(n).fill(1 / n);
  const vn = squaredRowNorms(values);
  if (scheme === "value-norm") return normalizeWeights(vn, "values (squared row norms)");
  if (weights === undefined) throw new ValueError("weights", "a weight matrix for the optimal scheme", "undefined");
  // DKM-optimal p_j ∝ ‖W[:,j]‖·‖V_j‖: the same distribution as for approximate matrix products.
  return optimalMatmulProbabilities(weights, values, ["weights", "values"]);
}

/**
 * Estimates W V (or Z⁻¹AV) from s sampled rows of V; see the module comment for schemes and
 * normalizations.
 * @param weights W, N_Q × N_KV, finite (non-negative for "attention" and the normalizing modes).
 * @param values V, N_KV × d_V, finite.
 * @param options `samples` (s ≥ 1), scheme, design and normalization.
 * @param seed SeedKey of the draw. Per-query draws with replacement read the stream
 *   derive(seed, "queries", ⌊i/64⌋) by inverse CDF (sampling/perQuery.ts; changed in issue 14), the
 *   other per-query designs derive(seed, "query", i).
 * @throws ShapeError / NonFiniteError on inputs, ValueError on s, options or negative weights where
 *   they must be ≥ 0, NumericalError when an estimated normalizer is 0.
 */
export function sampledValueProduct(weights: Matrix, values: Matrix, options: SampledValueOptions, seed: SeedKey): SampledValueResult {
  assertRequiredOptions(options, "options");
  const scheme = options.scheme ?? "uniform";
  const design = options.design ?? "with-replacement";
  // The per-query draw with replacement checks W's entries row by row in its own first pass
  // (perQuery.ts); every other path checks them here, before anything else.
  const rowChecked = scheme === "attention" && design === "with-replacement";
  checkWeightsValues(weights, values, "weights", "values", !rowChecked);
  const s = options.samples;
  assertInteger(s, "options.samples", 1);
  const normalize = options.normalize ?? "none";
  assertOneOf(scheme, "options.scheme", VALUE_SAMPLING_SCHEMES);
  assertOneOf(design, "options.design", SAMPLING_DESIGNS);
  assertOneOf(normalize, "options.normalize", ["none", "exact", "ratio"] as const);
  const eps = resolveDefensiveWeight(options.defensiveWeight, scheme, normalize === "ratio");
  const { rows: nQ, cols: n } = weights;
  const dV = values.cols;
  const w = weights.data;
  const nonNegative = scheme === "attention" || normalize !== "none";
  if (!rowChecked) checkWeightEntries(weights, nonNegative, scheme, normalize);
  const output = new Matrix(nQ, dV);
  const out = output.data;
  const vd = values.data;
  const zhat = new Float64Array(nQ);
  let indices: Int32Array;
  let c: Float64Array;
  let probabilities: Float64Array;
  let flops: number;
  let floatsStored: number;
  if (scheme === "attention" && design === "with-replacement") {
    // One pass per row for the probabilities and their running sum, inverse-CDF draws, one stream
    // per 64 queries, and each row's estimate right after its draw (sampling/perQuery.ts) — the
    // per-row composition below costs 10× more.
    // Whatever stops the draw — a row with a non-finite or negative entry (null), or a row's own
    // error (all zero) raised before a later row's bad entry was reached — the whole-matrix checks
    // run first, so the error is the one they name, as on every other path.
    let draw: ReturnType<typeof perQueryAttentionDraw>;
    try {
      draw = perQueryAttentionDraw(w, nQ, n, s, eps, seed, { values: vd, dV, out, zhat });
    } catch (e) {
      checkWeightEntries(weights, nonNegative, scheme, normalize);
      throw e;
    }
    if (draw === null) {
      checkWeightEntries(weights, nonNegative, scheme, normalize);
      throw new Error("unreachable: perQueryAttentionDraw refused a row that the weight checks accept");
    }
    ({ indices, weights: c, probabilities } = draw);
    flops = 2 * nQ * n + nQ * s * (2 + 2 * dV) + (eps > 0 ? 2 * nQ * n : 0);
    floatsStored = nQ * n + 2 * nQ * s;
  } else if (scheme === "attention") {
    indices = new Int32Array(nQ * s);
    c = new Float64Array(nQ * s);
    probabilities = new Float64Array(nQ * n);
    for (let i = 0; i < nQ; i++) {
      const p = defensiveMixture(normalizeWeights(w.subarray(i * n, (i + 1) * n), `weights[${i}]`), eps);
      probabilities.set(p, i * n);
      const draw = drawWeightedSample(p, { samples: s, design }, derive(seed, "query", i));
      indices.set(draw.indices, i * s);
      c.set(draw.weights, i * s);
      for (let t = 0; t < s; t++) {
        const j = draw.indices[t];
        const coef = draw.weights[t] * w[i * n + j];
        zhat[i] += coef;
        for (let col = 0; col < dV; col++) out[i * dV + col] += coef * vd[j * dV + col];
      }
    }
    flops = 2 * nQ * n + nQ * s * (2 + 2 * dV) + (eps > 0 ? 2 * nQ * n : 0);
    floatsStored = nQ * n + 2 * nQ * s;
  } else {
    probabilities = defensiveMixture(valueSamplingProbabilities(scheme, values, weights), eps);
    const draw = drawWeightedSample(probabilities, { samples: s, design }, seed);
    indices = draw.indices;
    c = draw.weights;
    // C = W[:, J]·diag(c) (N_Q × s) times R = V[J, :] (s × d_V), as one product where that keeps
    // the sequential loop's bits (accumulate.ts).
    const coef = new Float64Array(nQ * s);
    for (let i = 0; i < nQ; i++) {
      for (let t = 0; t < s; t++) {
        const x = c[t] * w[i * n + indices[t]];
        coef[i * s + t] = x;
        zhat[i] += x;
      }
    }
    sampledProduct(coef, selectRows(values, indices).data, out, nQ, s, dV);
    let probFlops = scheme === "uniform" ? 0 : scheme === "value-norm" ? 2 * n * dV : 2 * n * dV + 2 * nQ * n + 2 * n;
    if (eps > 0) probFlops += 2 * n;
    flops = probFlops + nQ * s * (2 + 2 * dV);
    floatsStored = nQ * s + s * dV + 2 * s;
  }
  if (normalize !== "none") {
    for (let i = 0; i < nQ; i++) {
      let z = zhat[i];
      if (normalize === "exact") {
        z = 0;
        for (let j = 0; j < n; j++) z += w[i * n + j];
      }
      if (!(z > 0)) {
        throw new NumericalError(
          normalize === "exact" ? "weights" : "s",
          normalize === "exact"
            ? `row ${i} with a positive sum Z`
            : `a sample hitting a key with positive weight in row ${i} (estimated Z > 0)`,
          "Z = 0",
        );
      }
      const inv = 1 / z;
      for (let col = 0; col < dV; col++) out[i * dV + col] *= inv;
    }
    flops += nQ * dV + (normalize === "exact" ? nQ * n : 0);
    floatsStored += nQ;
  }
  return { output, cost: { flops, floatsStored }, indices, weights: c, probabilities, perQuery: scheme === "attention" };
}
