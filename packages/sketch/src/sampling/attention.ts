/**
 * Sampling-based attention: Y = Z⁻¹ A V estimated from s sampled keys (rows of K and V).
 *
 * For the `"uniform"` and `"value-norm"` schemes the probabilities do not involve the queries, so
 * one sample J of keys serves every query and only the N_Q × s columns A[:, J] are evaluated, by
 * core's kernel (`attentionScores` on the sampled keys): O(N_Q·s·(d_QK + d_V)) work, no
 * N_Q × N_KV matrix.
 *  - normalizer `"estimated"` (the ratio estimator): Ŷ_i = Σ_t c_t A[i,j_t] V_{j_t} / Σ_t c_t A[i,j_t].
 *    Numerator and denominator come from the same keys; the kernel's row shift cancels.
 *  - normalizer `"exact"`: Ŷ_i = Σ_t c_t A[i,j_t] V_{j_t} / Z_i with the exact Z_i = Σ_j A[i,j],
 *    computed by streaming over blocks of keys (O(N_Q·N_KV·d_QK) flops but O(N_Q·blockSize) memory).
 *    Unbiased for Y, since the numerator is.
 * The `"optimal"` (∝ ‖P[:,j]‖·‖V_j‖) and per-query `"attention"` (∝ P[i,j]) schemes need P itself:
 * it is formed (N_Q × N_KV, counted in the cost) and the work is done by `sampledValueProduct`.
 * Masks are not supported here (a sampled key set changes which keys a mask refers to).
 */
import { checkAttentionInputs } from "../inputs.js";
import { type Kernel, Matrix, NumericalError, type SeedKey, attentionScores, attentionWeights, selectRows } from "@randattn/core";
import { Scratch, assertInteger, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import { sampledProduct } from "./accumulate.js";
import type { Cost } from "../operators/types.js";
import { defensiveMixture, resolveDefensiveWeight } from "./defensive.js";
import { SAMPLING_DESIGNS, type SamplingDesign, drawWeightedSample } from "./design.js";
import {
  type SampledValueResult,
  VALUE_SAMPLING_SCHEMES,
  type ValueSamplingScheme,
  sampledValueProduct,
  valueSamplingProbabilities,
} from "./values.js";

/** Options of {@link sampledAttention}. */
export interface SampledAttentionOptions {
  /** s, the number of sampled keys (per query for the `"attention"` scheme), ≥ 1. */
  samples: number;
  /** Sampling distribution over keys. @default "uniform" */
  scheme?: ValueSamplingScheme;
  /** How indices are drawn and weighted (sampling/design.ts). @default "with-replacement" */
  design?: SamplingDesign;
  /** `"estimated"`: ratio estimator from the same keys; `"exact"`: exact Z (streamed). @default "estimated" */
  normalizer?: "estimated" | "exact";
  /** Kernel κ (core's contract). @default softmax with scale 1/√d_QK */
  kernel?: Kernel;
  /** Keys per block when streaming the exact normalizer. @default 256 */
  blockSize?: number;
  /**
   * ε of the defensive mixture (1 − ε)p + ε·uniform (sampling/defensive.ts): the ratio estimator
   * needs p_j > 0 wherever A_ij > 0, which "value-norm" and "optimal" violate for zero value rows.
   * ε = 0 is refused there.
   * @default 0.1 for normalizer "estimated" with scheme "value-norm" / "optimal", 0 otherwise
   */
  defensiveWeight?: number;
}

/** log Z_i for every query, streamed over key blocks (log-sum-exp of each block's shifted normalizer). */
function logNormalizer(queries: Matrix, keys: Matrix, kernel: Kernel | undefined, blockSize: number): Float64Array {
  const nQ = queries.rows;
  const logZ = new Float64Array(nQ).fill(Number.NEGATIVE_INFINITY);
  for (let b0 = 0; b0 < keys.rows; b0 += blockSize) {
    const block = new Matrix(
      Math.min(blockSize, keys.rows - b0),
      keys.cols,
      keys.data.subarray(b0 * keys.cols, Math.min(keys.rows, b0 + blockSize) * keys.cols),
    );
    const { normalizer, rowShift } = attentionScores(queries, block, { kernel, onEmptyRow: "zero" });
    for (let i = 0; i < nQ; i++) {
      if (normalizer[i] === 0) continue;
      const term = Math.log(normalizer[i]) + rowShift[i];
      const hi = Math.max(logZ[i], term);
      logZ[i] = hi + Math.log(Math.exp(logZ[i] - hi) + Math.exp(term - hi));
    }
  }
  return logZ;
}

/** The scores and coefficients of the shared-scheme path (≤ 2²⁰ floats = 8 MiB kept per thread). */
const scoresScratch = new Scratch(1 << 20);
/** P of the "attention" and "optimal" schemes (≤ 2²² floats = 32 MiB kept per thread). */
const weightsScratch = new Scratch(1 << 22);

/**
 * Approximate attention Y ≈ Z⁻¹ A V from s sampled keys (module comment).
 * @param queries Q, N_Q × d_QK. @param keys K, N_KV × d_QK. @param values V, N_KV × d_V.
 * @param options `samples` = s, the number of sampled keys (≥ 1; ≤ N_KV's support for
 *   without-replacement designs), and the scheme, design and normalizer.
 * @param seed SeedKey of the draw.
 * @returns `{ output, cost, indices, weights, probabilities, perQuery }`.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on s or options; NumericalError when a
 *   query's (estimated or exact) normalizer is 0.
 * @example
 * ```ts
 * import { randomMatrix } from "@randattn/core";
 * import { sampledAttention } from "@randattn/sketch";
 *
 * const q = randomMatrix(16, 8, {}, [9, "q"]);
 * const k = randomMatrix(256, 8, {}, [9, "k"]);
 * const v = randomMatrix(256, 4, {}, [9, "v"]);
 * // Y ≈ Z⁻¹ A S Sᵀ V from s = 32 keys sampled per query in proportion to their attention weights.
 * const { output, cost } = sampledAttention(q, k, v, { samples: 32, scheme: "attention" }, [9, "sample"]);
 * console.log(output.shape, cost.floatsStored > 0); // "16×4" true
 * ```
 */
export function sampledAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: SampledAttentionOptions,
  seed: SeedKey,
): SampledValueResult {
  assertRequiredOptions(options, "options");
  checkAttentionInputs(queries, keys, values);
  const s = options.samples;
  assertInteger(s, "options.samples", 1);
  const scheme = options.scheme ?? "uniform";
  const design = options.design ?? "with-replacement";
  const normalizer = options.normalizer ?? "estimated";
  const blockSize = options.blockSize ?? 256;
  assertOneOf(scheme, "options.scheme", VALUE_SAMPLING_SCHEMES);
  assertOneOf(design, "options.design", SAMPLING_DESIGNS);
  assertOneOf(normalizer, "options.normalizer", ["estimated", "exact"] as const);
  assertInteger(blockSize, "options.blockSize", 1);
  const eps = resolveDefensiveWeight(options.defensiveWeight, scheme, normalizer === "estimated");
  const nQ = queries.rows;
  const n = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  if (scheme === "optimal" || scheme === "attention") {
    // These schemes are defined through P, so P is formed: 2·N_Q·N_KV·d + 3·N_Q·N_KV flops.
    // P in a buffer this thread keeps (it does not escape: the result holds the probabilities, a copy).
    const r = weightsScratch.lend(nQ * n, (buf) =>
      sampledValueProduct(
        attentionWeights(queries, keys, { kernel: options.kernel }, buf),
        values,
        { samples: s, scheme, design, normalize: normalizer === "exact" ? "none" : "ratio", defensiveWeight: eps },
        seed,
      ),
    );
    const pCost: Cost = { flops: 2 * nQ * n * d + 3 * nQ * n, floatsStored: nQ * n };
    return { ...r, cost: { flops: r.cost.flops + pCost.flops, floatsStored: r.cost.floatsStored + pCost.floatsStored } };
  }
  const probabilities = defensiveMixture(valueSamplingProbabilities(scheme, values), eps);
  const { indices, weights } = drawWeightedSample(probabilities, { samples: s, design }, seed);
  const sv = selectRows(values, indices);
  const output = new Matrix(nQ, dV);
  const out = output.data;
  const logZ = normalizer === "exact" ? logNormalizer(queries, keys, options.kernel, blockSize) : null;
  const zhats = new Float64Array(nQ);
  // The N_Q × s scores, then coef in their place, in a buffer this thread keeps (core's scratch.ts:
  // a fresh array per call cost its page faults — a fifth of a quickstart's fault time); neither escapes.
  const rowShift = scoresScratch.lend(nQ * s, (buf) => {
    // Only the sampled columns of A: scores[i,t]·exp(rowShift[i]) = κ(Q_i, K_{j_t}).
    const r = attentionScores(queries, selectRows(keys, indices), { kernel: options.kernel, onEmptyRow: "zero" }, buf);
    // coef[i, t] = c_t·κ(Q_i, K_{j_t})·e^{−rowShift[i]}, overwriting the score it is formed from;
    // the estimate's numerator as one product (accumulate.ts: the sequential loop's bits; V is
    // finite, checked above) and its Z row by row.
    const coef = r.scores.data;
    weightScores(coef, weights, zhats, nQ, s);
    sampledProduct(coef, sv.data, out, nQ, s, dV);
    return r.rowShift;
  });
  for (let i = 0; i < nQ; i++) {
    const zhat = zhats[i];
    let factor: number;
    if (logZ === null) {
      if (!(zhat > 0)) throw new NumericalError("s", `sampled keys with κ > 0 for query ${i} (estimated Z > 0)`, "estimated Z = 0");
      factor = 1 / zhat;
    } else {
      if (logZ[i] === Number.NEGATIVE_INFINITY) throw new NumericalError("keys", `a key with κ > 0 for query ${i}`, "Z = 0");
      factor = Math.exp(rowShift[i] - logZ[i]); // A = scores·e^{rowShift}; divide by Z = e^{logZ}
    }
    for (let col = 0; col < dV; col++) out[i * dV + col] *= factor;
  }
  const probFlops = (scheme === "value-norm" ? 2 * n * dV : 0) + (eps > 0 ? 2 * n : 0);
  let flops = probFlops + 2 * nQ * s * d + nQ * s + nQ * s * (2 + 2 * dV) + nQ * dV;
  let floatsStored = nQ * s + s * (d + dV) + 2 * s;
  if (logZ !== null) {
    flops += 2 * nQ * n * d + 2 * nQ * n;
    floatsStored += nQ * Math.min(blockSize, n) + nQ;
  }
  return { output, cost: { flops, floatsStored }, indices, weights, probabilities, perQuery: false };
}

/**
 * coef[i, t] ← weights[t]·coef[i, t] in place, adding each row's into zhats[i] (t in order). A
 * function of its own rather than a loop inside the lending callback: V8 compiled that callback
 * on-stack for the loop and then threw the code away at its first property read after it (a new
 * callback per call, no feedback yet): 32 deoptimizations and recompiles per quickstart (issue 14,
 * `--trace-deopt`).
 */
function weightScores(coef: Float64Array, weights: Float64Array, zhats: Float64Array, nQ: number, s: number): void {
  for (let i = 0; i < nQ; i++) {
    for (let t = 0; t < s; t++) {
      const x = weights[t] * coef[i * s + t];
      coef[i * s + t] = x;
      zhats[i] += x;
    }
  }
}
