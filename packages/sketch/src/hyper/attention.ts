/**
 * HyperAttention (Han, Jayaram, Karbasi, Mirrokni, Woodruff & Zandieh, ICLR 2024, arXiv 2310.05869).
 *
 * Y = D⁻¹AV with A = exp(scale·QKᵀ), D = diag(A1) is split by the sortLSH mask M^H (lsh/simhash.ts,
 * Algorithm 1) into the large entries M^H ⊙ A, evaluated exactly block by block, and the residual
 * (1 − M^H) ⊙ A, estimated by sampling (Algorithm 3):
 *
 *   Ŷᵢ = D̃ᵢ⁻¹ [ Σ_{j: M^H_ij = 1} A_ij V_j + Σ_{t=1}^{m} (1 − M^H_{i,j_t}) A_{i,j_t} V_{j_t} / (m p_{j_t}) ],
 *
 * with j_t i.i.d. from p_j ∝ ‖V_j‖² (the approximate-matrix-multiplication sampling of V the paper
 * analyses; `valueSampling: "uniform"` is its reference code's choice). Keys with V_j = 0 are never
 * drawn but contribute nothing to the numerator, so the numerator is unbiased for AV.
 *
 * The normalizer D̃ (Algorithm 2, ApproxD): the exact block sum plus the residual row sum estimated
 * from m_D uniformly sampled keys, (N_KV/m_D)·Σ_t (1 − M^H_{i,ℓ_t}) A_{i,ℓ_t}; with `rowRatio` κ the
 * estimate is floored at τ/κ, τ the largest exact residual row sum over m_D uniformly sampled
 * queries (the paper's guard against residual sums underestimated by a bad sample; it presumes
 * κ ≥ max_i rᵢ / min_i rᵢ, which `hyperAttentionParameters` computes). `normalizer: "exact"`
 * uses the exact D instead (so Ŷ is unbiased for Y — the setting of the error law in
 * `hyperAttentionParameters`). `normalizer: "shared"` estimates the residual row sum from the SAME
 * samples as the numerator (what the paper's reference code does), drawn from the defensive mixture
 * (1 − ε)p + ε/N_KV with ε = 0.1 (sampling/defensive.ts: p ∝ ‖V_j‖² would never draw keys with
 * V_j = 0, whose A_ij the normalizer needs): Ŷᵢ is then a convex combination of rows of V — bounded
 * however badly the sample misses, consistent as m grows, biased at O(1/m).
 *
 * Causal masking (§3.3, Algorithm 4): the square causal block is split into two causal halves (done
 * recursively) and the off-diagonal block, which is unmasked and gets the algorithm above; halves of
 * at most `minCausalLength` queries are exact. Partial sums are added in a per-row log scale
 * (hyper/parts.ts). With N_KV > N_Q (offset N_KV − N_Q) the first N_KV − N_Q keys, seen by every
 * query, form one more unmasked block.
 *
 * Exact limits: one block (blockSize ≥ N_Q) leaves no residual, so Ŷ = Y exactly; in the causal form
 * minCausalLength ≥ N_Q does too.
 */
import { Matrix, NumericalError, type SeedKey, ValueError, derive } from "@randattn/core";
import { assertInteger, assertMatrix, assertOneOf } from "@randattn/core/internal";
import type { Cost } from "../operators/types.js";
import { AliasTable } from "../random/categorical.js";
import { DEFAULT_DEFENSIVE_WEIGHT, defensiveMixture } from "../sampling/defensive.js";
import { uniformIntegers, uniformSubset } from "../random/samplers.js";
import {
  type CausalMask,
  type SoftmaxKernel,
  causalOffsetOf,
  checkAttentionInputs,
  drawHyperplanes,
  softmaxScaleOf,
  sortLsh,
} from "../lsh/index.js";
import { type AttentionPart, type CostTally, addPart, emptyPart, exactCausalPart, finishPart, logit, newTally } from "./parts.js";

/** Options of {@link hyperAttention}. */
export interface HyperAttentionOptions {
  /** r, SimHash bits of sortLSH (2^r buckets). @default 7 */
  numBits?: number;
  /** b, queries per block of the sortLSH mask. @default 64 */
  blockSize?: number;
  /** m, sampled keys for the residual product with V. @default 64 */
  sampleSize?: number;
  /** m_D, uniformly sampled keys for the residual normalizer (ApproxD). @default sampleSize */
  normalizerSamples?: number;
  /**
   * `"approximate"`: ApproxD (Algorithm 2); `"exact"`: the exact D (N_Q·N_KV kernel entries);
   * `"shared"`: from the numerator's own samples (self-normalized, see the module comment).
   * @default "approximate"
   */
  normalizer?: "approximate" | "exact" | "shared";
  /** Distribution of the residual keys: ∝ ‖V_j‖² (the paper's analysis) or uniform (its code). @default "value-norm" */
  valueSampling?: "value-norm" | "uniform";
  /** κ of ApproxD's floor τ/κ; omitted: no floor (the plain uniform estimate, unbiased for D). @default none */
  rowRatio?: number;
  /** Kernel: softmax only. @default { kind: "softmax", scale: 1/√d } */
  kernel?: SoftmaxKernel;
  /** Causal mask (offset N_KV − N_Q only). @default none */
  mask?: CausalMask;
  /** Causal recursion: blocks of at most this many queries are attended exactly. @default 2·blockSize */
  minCausalLength?: number;
  /** Precomputed SimHash hyperplanes (numBits × d); fixes the mask across seeds. @default drawn from the seed */
  planes?: Matrix;
}

/** Result of {@link hyperAttention}. */
export interface HyperAttentionResult {
  /** Ŷ (N_Q × d_V). */
  output: Matrix;
  /** flops, floats stored, kernel entries evaluated, random bits (64 per double), SimHash bucket ids. */
  cost: Cost & { kernelEvaluations: number; randomBits: number; hashes: number };
  /** The hyperplanes used. */
  planes: Matrix;
  /** log D̃ᵢ, the normalizer used (ApproxD's estimate, or the exact log Zᵢ). */
  logNormalizer: Float64Array;
}

interface Resolved {
  scale: number;
  blockSize: number;
  m: number;
  mD: number;
  exactD: boolean;
  sharedD: boolean;
  uniformValues: boolean;
  rowRatio: number | null;
  planes: Matrix;
}

/**
 * The unmasked HyperAttention sums of queries q (nQ rows) against keys k, values v (nK rows).
 * Returned in a per-row log scale; the exact normalizer, when asked for, is exact over these keys.
 */
export function hyperPart(q: Matrix, k: Matrix, v: Matrix, o: Resolved, seed: SeedKey, tally: CostTally): AttentionPart {
  const nQ = q.rows;
  const nK = k.rows;
  const d = q.cols;
  const dV = v.cols;
  const Q = q.data;
  const K = k.data;
  const V = v.data;
  const lsh = sortLsh(q, k, { blockSize: o.blockSize, planes: o.planes }, seed);
  tally.flops += lsh.cost.flops;
  tally.hashes += lsh.cost.hashes;
  const part = emptyPart(nQ, dV);
  const { queryBlock, keyBlock, keyOrder, keyStart } = lsh;
  const residualPossible = lsh.numBlocks > 1;

  // Residual samples of V: p ∝ ‖V_j‖² (uniform when V = 0 or asked for), weights 1/(m p_j).
  let vIdx: Int32Array = new Int32Array(0);
  let vW = new Float64Array(0);
  if (residualPossible) {
    let p: Float64Array = new Float64Array(nK).fill(1 / nK);
    if (!o.uniformValues) {
      const w = new Float64Array(nK);
      let total = 0;
      for (let j = 0; j < nK; j++) {
        let s = 0;
        for (let c = 0; c < dV; c++) s += V[j * dV + c] ** 2;
        w[j] = s;
        total += s;
      }
      tally.flops += 2 * nK * dV + nK;
      if (total > 0 && Number.isFinite(total)) p = Float64Array.from(w, (x) => x / total);
      if (o.sharedD) p = defensiveMixture(p, DEFAULT_DEFENSIVE_WEIGHT);
    }
    vIdx = AliasTable.fromProbabilities(p).sample({ count: o.m }, derive(seed, "values"));
    vW = Float64Array.from(vIdx, (j) => 1 / (o.m * p[j]));
    tally.randomBits += 64 * 2 * o.m;
  }
  // ApproxD samples: m_D uniform keys.
  const dIdx =
    residualPossible && !o.exactD && !o.sharedD ? uniformIntegers(o.mD, { upper: nK }, derive(seed, "normalizer")) : new Int32Array(0);
  tally.randomBits += 64 * dIdx.length;
  // ApproxD floor τ/κ: τ = max exact residual row sum over m_D sampled queries (log scale).
  let logFloor = Number.NEGATIVE_INFINITY;
  if (residualPossible && !o.exactD && !o.sharedD && o.rowRatio !== null) {
    const rows = uniformSubset(nQ, { count: Math.min(o.mD, nQ) }, derive(seed, "tau"));
    tally.randomBits += 64 * rows.length;
    let logTau = Number.NEGATIVE_INFINITY;
    for (const i of rows) {
      let mx = Number.NEGATIVE_INFINITY;
      const ls: number[] = [];
      for (let j = 0; j < nK; j++) {
        if (keyBlock[j] === queryBlock[i]) continue;
        const l = logit(Q, i, K, j, d, o.scale);
        ls.push(l);
        if (l > mx) mx = l;
      }
      if (ls.length === 0) continue;
      let s = 0;
      for (const l of ls) s += Math.exp(l - mx);
      logTau = Math.max(logTau, mx + Math.log(s));
    }
    tally.flops += rows.length * nK * (2 * d + 2);
    tally.kernelEvaluations += rows.length * nK;
    logFloor = logTau - Math.log(o.rowRatio);
  }

  const blockL = new Float64Array(nK);
  const dL = new Float64Array(dIdx.length);
  const vL = new Float64Array(vIdx.length);
  const allL = new Float64Array(nK);
  let blockPairs = 0;
  for (let i = 0; i < nQ; i++) {
    const c = queryBlock[i];
    const k0 = keyStart[c];
    const k1 = keyStart[c + 1];
    let mx = Number.NEGATIVE_INFINITY;
    for (let t = k0; t < k1; t++) {
      blockL[t - k0] = logit(Q, i, K, keyOrder[t], d, o.scale);
      if (blockL[t - k0] > mx) mx = blockL[t - k0];
    }
    blockPairs += k1 - k0;
    for (let t = 0; t < dIdx.length; t++) {
      dL[t] = keyBlock[dIdx[t]] === c ? Number.NEGATIVE_INFINITY : logit(Q, i, K, dIdx[t], d, o.scale);
      if (dL[t] > mx) mx = dL[t];
    }
    for (let t = 0; t < vIdx.length; t++) {
      vL[t] = keyBlock[vIdx[t]] === c ? Number.NEGATIVE_INFINITY : logit(Q, i, K, vIdx[t], d, o.scale);
      if (vL[t] > mx) mx = vL[t];
    }
    if (o.exactD) {
      for (let j = 0; j < nK; j++) {
        allL[j] = logit(Q, i, K, j, d, o.scale);
        if (allL[j] > mx) mx = allL[j];
      }
    }
    if (mx === Number.NEGATIVE_INFINITY) continue; // no key of this row was evaluated
    let den = 0;
    const no = i * dV;
    for (let t = k0; t < k1; t++) {
      const w = Math.exp(blockL[t - k0] - mx);
      den += w;
      const vo = keyOrder[t] * dV;
      for (let col = 0; col < dV; col++) part.num[no + col] += w * V[vo + col];
    }
    let shared = 0;
    for (let t = 0; t < vIdx.length; t++) {
      if (vL[t] === Number.NEGATIVE_INFINITY) continue;
      const w = Math.exp(vL[t] - mx) * vW[t];
      shared += w;
      const vo = vIdx[t] * dV;
      for (let col = 0; col < dV; col++) part.num[no + col] += w * V[vo + col];
    }
    if (o.sharedD) den += shared;
    if (o.exactD) {
      den = 0;
      for (let j = 0; j < nK; j++) den += Math.exp(allL[j] - mx);
    } else if (dIdx.length > 0) {
      let res = 0;
      for (let t = 0; t < dIdx.length; t++) if (dL[t] !== Number.NEGATIVE_INFINITY) res += Math.exp(dL[t] - mx);
      res *= nK / dIdx.length;
      if (logFloor !== Number.NEGATIVE_INFINITY) res = Math.max(res, Math.exp(logFloor - mx));
      den += res;
    }
    part.den[i] = den;
    part.shift[i] = mx;
  }
  const m = vIdx.length;
  const mD = dIdx.length;
  tally.flops +=
    blockPairs * (2 * d + 2 + 2 * dV) + nQ * (mD * (2 * d + 2) + m * (2 * d + 3 + 2 * dV)) + (o.exactD ? nQ * nK * (2 * d + 2) : 0);
  tally.kernelEvaluations += blockPairs + nQ * (mD + m) + (o.exactD ? nQ * nK : 0);
  // Held at once: the sampled V rows and weights, p, the block and sample logits of one row, the LSH orders.
  tally.floatsStored = Math.max(tally.floatsStored, m * (dV + 2) + nK + (keyStart[1] - keyStart[0]) + mD + lsh.cost.floatsStored);
  return part;
}

/** Rows [a, b) as a view. */
function rowsOf(x: Matrix, a: number, b: number): Matrix {
  return new Matrix(b - a, x.cols, x.data.subarray(a * x.cols, b * x.cols));
}

/** Causal recursion (Algorithm 4) on the square block of n queries/keys starting at row `start`. */
function causalPart(q: Matrix, k: Matrix, v: Matrix, o: Resolved, minLength: number, seed: SeedKey, tally: CostTally): AttentionPart {
  const n = q.rows;
  if (n <= minLength) return exactCausalPart(q.data, k.data, v.data, n, q.cols, v.cols, o.scale, tally);
  const h = Math.floor(n / 2);
  const dV = v.cols;
  const top = causalPart(rowsOf(q, 0, h), rowsOf(k, 0, h), rowsOf(v, 0, h), o, minLength, derive(seed, "top"), tally);
  const bottom = causalPart(rowsOf(q, h, n), rowsOf(k, h, n), rowsOf(v, h, n), o, minLength, derive(seed, "bottom"), tally);
  const off = hyperPart(rowsOf(q, h, n), rowsOf(k, 0, h), rowsOf(v, 0, h), o, derive(seed, "off"), tally);
  const out = emptyPart(n, dV);
  addPart(out, top, 0, dV);
  addPart(out, bottom, h, dV);
  addPart(out, off, h, dV);
  return out;
}

/** Validates the options shared by HyperAttention and its parameter function. */
export function resolveHyperOptions(options: HyperAttentionOptions, d: number, seed: SeedKey, tally: CostTally): Resolved {
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", String(options));
  const numBits = options.numBits ?? options.planes?.rows ?? 7;
  const blockSize = options.blockSize ?? 64;
  const m = options.sampleSize ?? 64;
  const mD = options.normalizerSamples ?? m;
  const normalizer = options.normalizer ?? "approximate";
  const valueSampling = options.valueSampling ?? "value-norm";
  assertInteger(numBits, "options.numBits", 0, 24);
  assertInteger(blockSize, "options.blockSize", 1);
  assertInteger(m, "options.sampleSize", 1);
  assertInteger(mD, "options.normalizerSamples", 1);
  assertOneOf(normalizer, "options.normalizer", ["approximate", "exact", "shared"] as const);
  assertOneOf(valueSampling, "options.valueSampling", ["value-norm", "uniform"] as const);
  let rowRatio: number | null = null;
  if (options.rowRatio !== undefined) {
    if (typeof options.rowRatio !== "number" || !(options.rowRatio >= 1) || !Number.isFinite(options.rowRatio))
      throw new ValueError("options.rowRatio", "a finite κ ≥ 1 (max/min residual row sum)", String(options.rowRatio));
    rowRatio = options.rowRatio;
  }
  let planes: Matrix;
  if (options.planes !== undefined) {
    assertMatrix(options.planes, "options.planes");
    if (options.planes.rows !== numBits || options.planes.cols !== d)
      throw new ValueError("options.planes", `${numBits}×${d} (numBits × d)`, options.planes.shape);
    planes = options.planes;
  } else {
    planes = drawHyperplanes(numBits, d, derive(seed, "lsh"));
    tally.randomBits += 64 * numBits * d;
  }
  tally.floatsStored = Math.max(tally.floatsStored, numBits * d);
  return {
    scale: softmaxScaleOf(options.kernel, d),
    blockSize,
    m,
    mD,
    exactD: normalizer === "exact",
    sharedD: normalizer === "shared",
    uniformValues: valueSampling === "uniform",
    rowRatio,
    planes,
  };
}

/**
 * HyperAttention Ŷ ≈ D⁻¹AV (module comment), seed last.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options (including a mask other
 *   than causal with offset N_KV − N_Q); NumericalError when a row's estimated normalizer is 0
 *   (its block holds no key and no residual sample hit: raise sampleSize or blockSize).
 */
export function hyperAttention(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: HyperAttentionOptions,
  seed: SeedKey,
): HyperAttentionResult {
  checkAttentionInputs(queries, keys, values);
  const tally = newTally();
  const o = resolveHyperOptions(options, queries.cols, seed, tally);
  const nQ = queries.rows;
  const nK = keys.rows;
  const dV = values.cols;
  const offset = causalOffsetOf(options.mask, nQ, nK, "HyperAttention");
  let part: AttentionPart;
  if (offset === null) part = hyperPart(queries, keys, values, o, derive(seed, "sample"), tally);
  else {
    const minLength = options.minCausalLength ?? 2 * o.blockSize;
    assertInteger(minLength, "options.minCausalLength", 1);
    part = causalPart(
      rowsOf(queries, 0, nQ),
      rowsOf(keys, offset, nK),
      rowsOf(values, offset, nK),
      o,
      minLength,
      derive(seed, "causal"),
      tally,
    );
    if (offset > 0)
      addPart(part, hyperPart(queries, rowsOf(keys, 0, offset), rowsOf(values, 0, offset), o, derive(seed, "prefix"), tally), 0, dV);
  }
  const { output, zeroRow } = finishPart(part, dV);
  if (zeroRow >= 0)
    throw new NumericalError("options.sampleSize", `an estimated normalizer > 0 for query ${zeroRow} (raise sampleSize or blockSize)`, "0");
  tally.flops += nQ * dV;
  tally.floatsStored += nQ * (dV + 2);
  const logNormalizer = Float64Array.from(part.den, (v, i) => Math.log(v) + part.shift[i]);
  return { output: new Matrix(nQ, dV, output), cost: { ...tally }, planes: o.planes, logNormalizer };
}
