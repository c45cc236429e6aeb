/**
 * KDEformer (Zandieh, Han, Daliri & Karbasi, ICML 2023, arXiv 2302.02451): Y = D⁻¹AV with
 *
 * 1. the large entries found by sortLSH (lsh/simhash.ts; the paper's Hamming-sorted LSH heavy
 *    hitters) evaluated exactly, M^H ⊙ A;
 * 2. the normalizer D estimated by kernel density estimation: dᵢ = Σ_j exp(scale⟨qᵢ, k_j⟩) is a
 *    KDE of the keys at qᵢ. SIMPLIFIED here: the paper's multi-table LSH-based KDE estimator
 *    (Charikar et al.) is replaced by the exact block sum plus a uniform key sample of the residual,
 *    (N_KV/m_D)·Σ_t (1 − M^H_{i,ℓ_t}) A_{i,ℓ_t} — unbiased for dᵢ, with variance that the LSH KDE
 *    would reduce; `normalizer: "exact"` uses the exact D;
 * 3. importance sampling of V by the (estimated) squared column norms of the residual of D⁻¹A:
 *    c_j = ‖D̃⁻¹((1 − M^H) ⊙ A)_{:,j}‖² = Σᵢ (1 − M^H_ij) A²_ij / d̃ᵢ² is again a (weighted) KDE, here
 *    over the queries, estimated from t uniformly sampled queries, (N_Q/t)·Σ_{i∈T} …  (SIMPLIFIED
 *    the same way). Keys are drawn from p_j = (1 − ε) c_j / Σ c + ε / N_KV: the ε-uniform share keeps
 *    p_j > 0 where a sampled estimate c_j is 0 but the true column is not (defensive importance
 *    sampling; ε = `uniformShare`, default 0.1), so the residual numerator
 *    Σ_t (1 − M^H) A_{i,j_t} V_{j_t}/(m p_{j_t}) stays unbiased given D̃.
 *
 * Ŷᵢ = D̃ᵢ⁻¹ [Σ_{M^H_ij = 1} A_ij V_j + residual numerator]. With the exact normalizer Ŷ is unbiased
 * for Y. One block (blockSize ≥ N_Q) is exact. The paper gives no causal form: masks are refused.
 */
import { Matrix, NumericalError, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf } from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";
import { AliasTable } from "../random/categorical.js";
import { uniformIntegers, uniformSubset } from "../random/samplers.js";
import { type SoftmaxKernel, checkAttentionInputs, drawHyperplanes, refuseMask, softmaxScaleOf, sortLsh } from "../lsh/index.js";
import { logit } from "../hyper/parts.js";

/** Options of {@link kdeformerAttention}. */
export interface KdeformerOptions {
  /** r, SimHash bits of the heavy-entry search. @default 7 */
  numBits?: number;
  /** b, queries per sortLSH block. @default 64 */
  blockSize?: number;
  /** m, keys sampled for the residual product with V. @default 64 */
  sampleSize?: number;
  /** m_D, uniform keys of the normalizer KDE. @default sampleSize */
  normalizerSamples?: number;
  /** t, uniform queries of the column-norm KDE. @default sampleSize */
  columnSamples?: number;
  /** ε, the uniform share of the sampling distribution, in (0, 1]. @default 0.1 */
  uniformShare?: number;
  /** `"approximate"` (KDE) or `"exact"` D. @default "approximate" */
  normalizer?: "approximate" | "exact";
  /** Kernel: softmax only. @default { kind: "softmax", scale: 1/√d } */
  kernel?: SoftmaxKernel;
  /** Refused: KDEformer has no masked form. */
  mask?: never;
  /** Precomputed hyperplanes (numBits × d). @default drawn */
  planes?: Matrix;
}

/** Result of {@link kdeformerAttention}. */
export interface KdeformerResult {
  output: Matrix;
  cost: Cost & { kernelEvaluations: number; randomBits: number; hashes: number };
  /** The sampling distribution over keys (length N_KV). */
  probabilities: Float64Array;
  /** log d̃ᵢ (the estimated, or exact, normalizer). */
  logNormalizer: Float64Array;
}

/**
 * KDEformer attention (module comment), seed last.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options or any mask; NumericalError
 *   when a row's estimated normalizer is 0.
 */
export function kdeformerAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: KdeformerOptions,
  seed: SeedKey,
): KdeformerResult {
  checkAttentionInputs(queries, keys, values);
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", String(options));
  refuseMask((options as { mask?: unknown }).mask, "KDEformer");
  const d = queries.cols;
  const numBits = options.numBits ?? options.planes?.rows ?? 7;
  const blockSize = options.blockSize ?? 64;
  const m = options.sampleSize ?? 64;
  const mD = options.normalizerSamples ?? m;
  const t = options.columnSamples ?? m;
  const eps = options.uniformShare ?? 0.1;
  const normalizer = options.normalizer ?? "approximate";
  assertInteger(numBits, "options.numBits", 0, 24);
  assertInteger(blockSize, "options.blockSize", 1);
  assertInteger(m, "options.sampleSize", 1);
  assertInteger(mD, "options.normalizerSamples", 1);
  assertInteger(t, "options.columnSamples", 1);
  assertNumber(eps, "options.uniformShare", { positive: true });
  if (eps > 1) throw new ValueError("options.uniformShare", "ε in (0, 1]", String(eps));
  assertOneOf(normalizer, "options.normalizer", ["approximate", "exact"] as const);
  const scale = softmaxScaleOf(options.kernel, d);
  const nQ = queries.rows;
  const nK = keys.rows;
  const dV = values.cols;
  const Q = queries.data;
  const K = keys.data;
  const V = values.data;
  let randomBits = 0;
  let planes = options.planes;
  if (planes === undefined) {
    planes = drawHyperplanes(numBits, d, derive(seed, "lsh"));
    randomBits += 64 * numBits * d;
  }
  const lsh = sortLsh(queries, keys, { blockSize, planes }, seed);
  const { queryBlock, keyBlock, keyOrder, keyStart } = lsh;
  const exactD = normalizer === "exact";
  const residual = lsh.numBlocks > 1;
  let flops = lsh.cost.flops;
  let kernelEvaluations = 0;

  // 1–2. Block logits' maxima (row shifts) and log d̃ᵢ.
  const dIdx = residual && !exactD ? uniformIntegers(mD, { upper: nK }, derive(seed, "normalizer")) : new Int32Array(0);
  randomBits += 64 * dIdx.length;
  const logD = new Float64Array(nQ);
  for (let i = 0; i < nQ; i++) {
    const c = queryBlock[i];
    const ls: number[] = [];
    const weights: number[] = [];
    if (exactD) {
      for (let j = 0; j < nK; j++) {
        ls.push(logit(Q, i, K, j, d, scale));
        weights.push(1);
      }
    } else {
      for (let u = keyStart[c]; u < keyStart[c + 1]; u++) {
        ls.push(logit(Q, i, K, keyOrder[u], d, scale));
        weights.push(1);
      }
      for (const j of dIdx) {
        if (keyBlock[j] === c) continue;
        ls.push(logit(Q, i, K, j, d, scale));
        weights.push(nK / dIdx.length);
      }
    }
    let mx = Number.NEGATIVE_INFINITY;
    for (const l of ls) mx = Math.max(mx, l);
    let s = 0;
    for (let u = 0; u < ls.length; u++) s += weights[u] * Math.exp(ls[u] - mx);
    if (!(s > 0))
      throw new NumericalError(
        "options.normalizerSamples",
        `an estimated normalizer > 0 for query ${i} (raise normalizerSamples or blockSize)`,
        "0",
      );
    logD[i] = mx + Math.log(s);
    kernelEvaluations += ls.length;
  }
  flops += kernelEvaluations * (2 * d + 3);

  // 3. Column-norm KDE over t sampled queries, then p = (1 − ε)c/Σc + ε/N_KV.
  const probabilities = new Float64Array(nK).fill(1 / nK);
  let indices: Int32Array = new Int32Array(0);
  let sampleW = new Float64Array(0);
  if (residual) {
    const rows = uniformSubset(nQ, { count: Math.min(t, nQ) }, derive(seed, "columns"));
    randomBits += 64 * rows.length;
    const col = new Float64Array(nK);
    for (const i of rows) {
      for (let j = 0; j < nK; j++) {
        if (keyBlock[j] === queryBlock[i]) continue;
        col[j] += Math.exp(2 * (logit(Q, i, K, j, d, scale) - logD[i]));
      }
    }
    kernelEvaluations += rows.length * nK;
    flops += rows.length * nK * (2 * d + 4) + 3 * nK;
    let total = 0;
    for (let j = 0; j < nK; j++) total += col[j];
    if (total > 0 && Number.isFinite(total)) for (let j = 0; j < nK; j++) probabilities[j] = ((1 - eps) * col[j]) / total + eps / nK;
    indices = AliasTable.fromProbabilities(probabilities).sample({ count: m }, derive(seed, "values"));
    randomBits += 64 * 2 * m;
    sampleW = Float64Array.from(indices, (j) => 1 / (m * probabilities[j]));
  }

  // Ŷᵢ = d̃ᵢ⁻¹ [block sum + residual samples], all in units of d̃ᵢ (exp(l − log d̃ᵢ) = A_ij/d̃ᵢ).
  const output = new Matrix(nQ, dV);
  const Y = output.data;
  let pairs = 0;
  for (let i = 0; i < nQ; i++) {
    const c = queryBlock[i];
    for (let u = keyStart[c]; u < keyStart[c + 1]; u++) {
      const j = keyOrder[u];
      const w = Math.exp(logit(Q, i, K, j, d, scale) - logD[i]);
      for (let col = 0; col < dV; col++) Y[i * dV + col] += w * V[j * dV + col];
    }
    pairs += keyStart[c + 1] - keyStart[c];
    for (let s = 0; s < indices.length; s++) {
      const j = indices[s];
      if (keyBlock[j] === c) continue;
      const w = Math.exp(logit(Q, i, K, j, d, scale) - logD[i]) * sampleW[s];
      for (let col = 0; col < dV; col++) Y[i * dV + col] += w * V[j * dV + col];
    }
  }
  pairs += nQ * indices.length;
  kernelEvaluations += pairs;
  flops += pairs * (2 * d + 3 + 2 * dV);
  const floatsStored = numBits * d + lsh.cost.floatsStored + 2 * nK + nQ + indices.length * (dV + 2) + nQ * dV;
  return {
    output,
    cost: { flops, floatsStored, kernelEvaluations, randomBits, hashes: lsh.cost.hashes },
    probabilities,
    logNormalizer: logD,
  };
}
