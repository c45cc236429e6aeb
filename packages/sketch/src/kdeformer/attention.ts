/**
 * KDEformer (Zandieh, Han, Daliri & Karbasi, ICML 2023, arXiv 2302.02451): Y = D⁻¹AV with
 * A = exp(scale·QKᵀ), approximated as Ŷ = D̃⁻¹(M^H ⊙ A + ((1 − M^H) ⊙ A)ΠᵀΠ)V, where
 *
 * 1. M^H is the sortLSH block mask (lsh/simhash.ts; the paper's Hamming-sorted angular LSH that
 *    finds the heavy entries, §4 "exploiting sparsity"); those entries are evaluated exactly;
 * 2. D̃ᵢ estimates Dᵢ = Σ_j exp(scale⟨qᵢ, k_j⟩), which is a kernel density of the keys at qᵢ (the
 *    paper's key observation, §3): D̃ᵢ = Σ_{M^H_ij = 1} A_ij + the LSH-based KDE (kde.ts: multiple
 *    SimHash tables on the sphere-transformed keys, draws within the query's bucket, the
 *    hashing-based estimator) of the residual Σ_{M^H_ij = 0} A_ij. Unbiased for Dᵢ;
 * 3. Π samples m keys i.i.d. with p_j = (1 − ε)·c̃_j/Σc̃ + ε/N_KV, where
 *    c̃_j estimates the squared column norm c_j = ‖(D̃⁻¹(1 − M^H) ⊙ A)_{:,j}‖² = Σᵢ exp(2·scale⟨qᵢ, k_j⟩)/D̃ᵢ²
 *    (restricted to the residual) — again a weighted exponential KDE, now over the queries with
 *    weights 1/D̃ᵢ², solved by the same LSH KDE with the keys as targets. Sampling ∝ column norms is
 *    the paper's approximate-matrix-multiplication step (its spectral bound needs p_j ≥ β c_j/Σc,
 *    which the mixture keeps with β = 1 − ε); the ε-uniform share (`uniformShare`, default 0.1) is
 *    the defensive mixture that keeps p_j > 0 where an estimate c̃_j is 0 but c_j is not — the
 *    authors' reference code likewise adds 1/n to its sampling weights. Π is scaled by 1/√(m p_j),
 *    so the residual numerator is unbiased given D̃; with m ≥ N_KV the residual is computed exactly.
 *
 * Ŷᵢ = D̃ᵢ⁻¹ [Σ_{M^H_ij = 1} A_ij V_j + Σ_t (1 − M^H_{i,j_t}) A_{i,j_t} V_{j_t}/(m p_{j_t})]. With the
 * exact normalizer Ŷ is unbiased for Y. Exact limits: one block (blockSize ≥ N_Q); or one KDE
 * bucket enumerated in full (kdeBits = 0, bucketSamples ≥ N) with m ≥ N_KV.
 *
 * `normalizer: "shared"` replaces D̃ in the output by the numerator's own sampled row sums, as the
 * authors' reference code does (a ones column appended to V): Ŷ is then a convex combination of rows
 * of V, which bounds the damage where D̃ underestimates D (peaked attention).
 *
 * `estimator: "block-uniform"` keeps the earlier simplified variant (the residual normalizer from
 * m_D uniform keys, the column norms from t uniform queries), drawing exactly what it drew before.
 *
 * Causal form: the paper gives none (its KDE and column sampling are over the whole key set), so
 * masks are refused (ValueError naming options.mask).
 */
import { Matrix, NumericalError, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf } from "@randattn/core/internal";
import { logit } from "../hyper/parts.js";
import { type SoftmaxKernel, checkAttentionInputs, drawHyperplanes, refuseMask, softmaxScaleOf, sortLsh } from "../lsh/index.js";
import type { Cost } from "../operators/types.js";
import { AliasTable } from "../random/categorical.js";
import { uniformIntegers, uniformSubset } from "../random/samplers.js";
import { exponentialKde } from "./kde.js";

/** How the residual normalizer and the column norms are estimated. */
export type KdeformerEstimator = "kde" | "block-uniform";

/** Options of {@link kdeformerAttention}. */
export interface KdeformerOptions {
  /** r, SimHash bits of the heavy-entry search (sortLSH). @default 7 */
  numBits?: number;
  /** b, queries per sortLSH block. @default 64 */
  blockSize?: number;
  /** m, keys sampled for the residual product with V (m ≥ N_KV: the residual is exact). @default 64 */
  sampleSize?: number;
  /**
   * `"kde"`: the paper's LSH-based KDE for the residual normalizer and the column norms (kde.ts);
   * `"block-uniform"`: the earlier simplified estimates from `normalizerSamples` uniform keys and
   * `columnSamples` uniform queries. @default "kde"
   */
  estimator?: KdeformerEstimator;
  /** L, hash tables of each KDE (estimator "kde"). @default 8 */
  kdeTables?: number;
  /** SimHash bits per KDE table (estimator "kde"); 0 = one bucket; `"auto"` as in kde.ts (r = π·s·R·‖y‖/4 at the median target). @default "auto" */
  kdeBits?: number | "auto";
  /** s, draws per (target, table) within a bucket; smaller buckets are summed exactly (estimator "kde"). @default 4 */
  bucketSamples?: number;
  /** m_D, uniform keys of the normalizer estimate (estimator "block-uniform"). @default sampleSize */
  normalizerSamples?: number;
  /** t, uniform queries of the column-norm estimate (estimator "block-uniform"). @default sampleSize */
  columnSamples?: number;
  /** ε, the uniform share of the sampling distribution, in (0, 1]. @default 0.1 */
  uniformShare?: number;
  /**
   * `"approximate"`: the estimator's D̃ (the paper); `"exact"`: the exact D; `"shared"`: the output's
   * normalizer from the numerator's own samples, D̂ᵢ = Σ_{M^H_ij = 1} A_ij + Σ_t (1 − M^H) A_{i,j_t}/(m p_{j_t})
   * (the authors' reference code appends a ones column to V for this), so Ŷᵢ is a convex combination
   * of rows of V; the estimator's D̃ still weights the column norms. @default "approximate"
   */
  normalizer?: "approximate" | "exact" | "shared";
  /** Kernel: softmax only. @default { kind: "softmax", scale: 1/√d } */
  kernel?: SoftmaxKernel;
  /** Refused: KDEformer has no masked or causal form in its paper. */
  mask?: never;
  /** Precomputed sortLSH hyperplanes (numBits × d). @default drawn */
  planes?: Matrix;
}

/** Result of {@link kdeformerAttention}. */
export interface KdeformerResult {
  output: Matrix;
  cost: Cost & { kernelEvaluations: number; randomBits: number; hashes: number };
  /** The sampling distribution over keys (length N_KV; uniform when there is no residual). */
  probabilities: Float64Array;
  /** log D̃ᵢ (the estimated, or exact, normalizer). */
  logNormalizer: Float64Array;
  /** log c̃_j, the estimated squared column norms of the residual of D̃⁻¹A (empty without a residual). */
  logColumnNorms: Float64Array;
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
  const estimator = options.estimator ?? "kde";
  const kdeTables = options.kdeTables ?? 8;
  const kdeBits = options.kdeBits ?? "auto";
  const bucketSamples = options.bucketSamples ?? 4;
  const mD = options.normalizerSamples ?? m;
  const t = options.columnSamples ?? m;
  const eps = options.uniformShare ?? 0.1;
  const normalizer = options.normalizer ?? "approximate";
  assertInteger(numBits, "options.numBits", 0, 24);
  assertInteger(blockSize, "options.blockSize", 1);
  assertInteger(m, "options.sampleSize", 1);
  assertOneOf(estimator, "options.estimator", ["kde", "block-uniform"] as const);
  assertInteger(kdeTables, "options.kdeTables", 1);
  if (kdeBits !== "auto") assertInteger(kdeBits, "options.kdeBits", 0, 24);
  assertInteger(bucketSamples, "options.bucketSamples", 1);
  assertInteger(mD, "options.normalizerSamples", 1);
  assertInteger(t, "options.columnSamples", 1);
  assertNumber(eps, "options.uniformShare", { positive: true });
  if (eps > 1) throw new ValueError("options.uniformShare", "ε in (0, 1]", String(eps));
  assertOneOf(normalizer, "options.normalizer", ["approximate", "exact", "shared"] as const);
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
  const useKde = estimator === "kde";
  let flops = lsh.cost.flops;
  let floatsStored = 0;
  let hashes = lsh.cost.hashes;
  let kernelEvaluations = 0;
  const kdeOptions = { numTables: kdeTables, numBits: kdeBits, bucketSamples };

  // 1–2. log d̃ᵢ: exact block sum (+ the residual's KDE estimate, or + its uniform-sample estimate).
  const dIdx = residual && !exactD && !useKde ? uniformIntegers(mD, { upper: nK }, derive(seed, "normalizer")) : new Int32Array(0);
  randomBits += 64 * dIdx.length;
  let residualLogD: Float64Array | null = null;
  if (residual && !exactD && useKde) {
    const kde = exponentialKde(
      keys,
      queries,
      { ...kdeOptions, scale, exclude: { pointGroups: keyBlock, targetGroups: queryBlock } },
      derive(seed, "kde", "normalizer"),
    );
    residualLogD = kde.logDensity;
    flops += kde.cost.flops;
    floatsStored = Math.max(floatsStored, kde.cost.floatsStored); // the two KDEs run one after the other
    kernelEvaluations += kde.cost.kernelEvaluations;
    randomBits += kde.cost.randomBits;
    hashes += kde.cost.hashes;
  }
  const logD = new Float64Array(nQ);
  let normalizerEvaluations = 0;
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
    normalizerEvaluations += ls.length;
    if (residualLogD !== null && residualLogD[i] > Number.NEGATIVE_INFINITY) {
      ls.push(residualLogD[i]);
      weights.push(1);
    }
    let mx = Number.NEGATIVE_INFINITY;
    for (const l of ls) mx = Math.max(mx, l);
    let s = 0;
    for (let u = 0; u < ls.length; u++) s += weights[u] * Math.exp(ls[u] - mx);
    if (!(s > 0))
      throw new NumericalError(
        useKde ? "options.kdeTables" : "options.normalizerSamples",
        `an estimated normalizer > 0 for query ${i} (raise ${useKde ? "kdeTables or bucketSamples" : "normalizerSamples"} or blockSize)`,
        "0",
      );
    logD[i] = mx + Math.log(s);
  }
  kernelEvaluations += normalizerEvaluations;
  flops += normalizerEvaluations * (2 * d + 3);

  // 3. Column norms c̃_j of the residual of D̃⁻¹A, then p = (1 − ε)c̃/Σc̃ + ε/N_KV.
  const probabilities = new Float64Array(nK).fill(1 / nK);
  let logColumnNorms: Float64Array = new Float64Array(0);
  let indices: Int32Array = new Int32Array(0);
  let sampleW = new Float64Array(0);
  const exactResidual = residual && m >= nK;
  if (residual && !exactResidual) {
    // col: the column norms up to a common factor (the block-uniform branch keeps its raw sums, so
    // its probabilities, and hence its draws, are bit-identical to the earlier simplified version).
    let col: Float64Array;
    if (useKde) {
      // c_j = Σᵢ wᵢ exp(2·scale⟨qᵢ, k_j⟩) with wᵢ = 1/d̃ᵢ²: a KDE over the queries at each key.
      const kde = exponentialKde(
        queries,
        keys,
        {
          ...kdeOptions,
          scale: 2 * scale,
          logWeights: Float64Array.from(logD, (l) => -2 * l),
          exclude: { pointGroups: queryBlock, targetGroups: keyBlock },
        },
        derive(seed, "kde", "columns"),
      );
      logColumnNorms = kde.logDensity;
      let mx = Number.NEGATIVE_INFINITY;
      for (const l of logColumnNorms) mx = Math.max(mx, l);
      col = Float64Array.from(logColumnNorms, (l) => (mx > Number.NEGATIVE_INFINITY ? Math.exp(l - mx) : 0));
      flops += kde.cost.flops;
      floatsStored = Math.max(floatsStored, kde.cost.floatsStored); // the two KDEs run one after the other
      kernelEvaluations += kde.cost.kernelEvaluations;
      randomBits += kde.cost.randomBits;
      hashes += kde.cost.hashes;
    } else {
      const rows = uniformSubset(nQ, { count: Math.min(t, nQ) }, derive(seed, "columns"));
      randomBits += 64 * rows.length;
      col = new Float64Array(nK);
      for (const i of rows) {
        for (let j = 0; j < nK; j++) {
          if (keyBlock[j] === queryBlock[i]) continue;
          col[j] += Math.exp(2 * (logit(Q, i, K, j, d, scale) - logD[i]));
        }
      }
      kernelEvaluations += rows.length * nK;
      flops += rows.length * nK * (2 * d + 4);
      logColumnNorms = Float64Array.from(col, (c) => Math.log((nQ / rows.length) * c));
    }
    let total = 0;
    for (let j = 0; j < nK; j++) total += col[j];
    flops += 3 * nK;
    if (total > 0 && Number.isFinite(total)) for (let j = 0; j < nK; j++) probabilities[j] = ((1 - eps) * col[j]) / total + eps / nK;
    indices = AliasTable.fromProbabilities(probabilities).sample({ count: m }, derive(seed, "values"));
    randomBits += 64 * 2 * m;
    sampleW = Float64Array.from(indices, (j) => 1 / (m * probabilities[j]));
  } else if (exactResidual) {
    // m ≥ N_KV: every residual key with weight 1 (sampling N_KV keys could only add variance).
    indices = Int32Array.from({ length: nK }, (_, j) => j);
    sampleW = new Float64Array(nK).fill(1);
  }

  // Ŷᵢ = d̃ᵢ⁻¹ [block sum + residual samples], all in units of d̃ᵢ (exp(l − log d̃ᵢ) = A_ij/d̃ᵢ).
  const output = new Matrix(nQ, dV);
  const Y = output.data;
  let pairs = 0;
  const shared = normalizer === "shared";
  for (let i = 0; i < nQ; i++) {
    const c = queryBlock[i];
    let den = 0;
    for (let u = keyStart[c]; u < keyStart[c + 1]; u++) {
      const j = keyOrder[u];
      const w = Math.exp(logit(Q, i, K, j, d, scale) - logD[i]);
      den += w;
      for (let col = 0; col < dV; col++) Y[i * dV + col] += w * V[j * dV + col];
    }
    pairs += keyStart[c + 1] - keyStart[c];
    for (let s = 0; s < indices.length; s++) {
      const j = indices[s];
      if (keyBlock[j] === c) continue;
      const w = Math.exp(logit(Q, i, K, j, d, scale) - logD[i]) * sampleW[s];
      den += w;
      for (let col = 0; col < dV; col++) Y[i * dV + col] += w * V[j * dV + col];
    }
    if (shared) {
      if (!(den > 0))
        throw new NumericalError("options.sampleSize", `a shared normalizer > 0 for query ${i} (raise sampleSize or blockSize)`, "0");
      for (let col = 0; col < dV; col++) Y[i * dV + col] /= den;
      logD[i] += Math.log(den);
    }
  }
  if (shared) flops += nQ * (dV + 2);
  pairs += nQ * indices.length;
  kernelEvaluations += pairs;
  flops += pairs * (2 * d + 3 + 2 * dV);
  floatsStored += numBits * d + lsh.cost.floatsStored + 2 * nK + nQ + indices.length * (dV + 2) + nQ * dV;
  return {
    output,
    cost: { flops, floatsStored, kernelEvaluations, randomBits, hashes },
    probabilities,
    logNormalizer: logD,
    logColumnNorms,
  };
}
