/**
 * The fine-grained parameters of HyperAttention's guarantee (Han et al. 2024, §1.1 and Theorem 1),
 * computed exactly for a given problem and sortLSH mask M^H (so O(N_Q·N_KV) — a diagnostic, not a
 * fast path):
 *
 * - α (column norm): N_KV · max_j ‖R_{:,j}‖²₂ with R = D⁻¹((1 − M^H) ⊙ A), the residual of the
 *   normalized attention matrix the sampling step has to cover. (`alphaFull` is the same for D⁻¹A,
 *   i.e. without removing the large entries.) Since ‖R‖²_F ≤ α, α bounds the sampling error below.
 * - κ (row ratio): max_i rᵢ / min_i rᵢ over the residual row sums rᵢ = Σ_j (1 − M^H_ij) A_ij of the
 *   unnormalized matrix (rows with rᵢ = 0, wholly covered by their block, are left out: nothing of
 *   theirs is estimated). ApproxD's floor τ/κ presumes κ at least this.
 *
 * Error law for the fixed mask with the exact normalizer (normalizer "exact"): the residual product
 * is the approximate-matrix-multiplication estimator of R V (Drineas–Kannan–Mahoney 2006), so
 *   E‖Ŷ − Y‖²_F = (1/m) (Σ_j ‖R_{:,j}‖² ‖V_j‖² / p_j − ‖R V‖²_F),
 * which for p_j = ‖V_j‖²/‖V‖²_F is (‖V‖²_F ‖R‖²_F − ‖RV‖²_F)/m ≤ α‖V‖²_F/m (`errorBound`). The spectral
 * guarantee of Theorem 1 (‖Ŷ − Y‖₂ ≤ ε‖D⁻¹A‖₂‖V‖₂ for m = Ω(ε⁻²α·log n)-type sample sizes) rests on
 * the same two quantities.
 */
import { type Matrix, type SeedKey, ShapeError, derive } from "@randattn/core";
import { assertInteger, assertMatrix, sequentialMatmulInto, transposeInto } from "@randattn/core/internal";
import { checkAttentionInputs, refuseMask, sortLsh } from "../lsh/index.js";
import { type HyperAttentionOptions, resolveHyperOptions } from "./attention.js";
import { newTally } from "./parts.js";

/** Logits held at once by {@link hyperAttentionParameters} (a block of query rows × N_KV). */
const LOGIT_BLOCK_FLOATS = 1 << 16;

/** Result of {@link hyperAttentionParameters}. */
export interface HyperAttentionParameters {
  /** α = N_KV · max_j ‖R_{:,j}‖² (residual, see module comment). */
  alpha: number;
  /** N_KV · max_j ‖(D⁻¹A)_{:,j}‖² (no entries removed). */
  alphaFull: number;
  /** κ = max rᵢ / min rᵢ over rows with a residual (1 when no row has one). */
  kappa: number;
  /** ‖R‖²_F. */
  residualFrobenius2: number;
  /** Fraction of the attention mass Σ_i Σ_j P_ij / N_Q caught by the mask. */
  maskedMass: number;
  /** E‖Ŷ − Y‖²_F of HyperAttention with the exact normalizer and this mask (module comment). */
  expectedSquaredError: number;
  /** α ‖V‖²_F / m, the bound on expectedSquaredError for value-norm sampling. */
  errorBound: number;
  /** sortLSH blocks. */
  numBlocks: number;
}

/**
 * α, κ and the exact-normalizer error law of HyperAttention with these options (the mask is the
 * one `hyperAttention(…, options, seed)` uses: same hyperplanes from the same seed, or
 * `options.planes`). Unmasked problems only (the causal form is a sum of such problems).
 * @throws ShapeError / NonFiniteError on inputs, ValueError on options or a mask.
 */
export function hyperAttentionParameters(
  queries: Matrix,
  keys: Matrix,
  values: Matrix,
  options: HyperAttentionOptions,
  seed: SeedKey,
): HyperAttentionParameters {
  checkAttentionInputs(queries, keys, values);
  const o = resolveHyperOptions(options, queries.cols, seed, newTally());
  refuseMask(options.mask, "hyperAttentionParameters (pass one unmasked block)");
  assertMatrix(values, "values");
  assertInteger(o.m, "options.sampleSize", 1);
  const nQ = queries.rows;
  const nK = keys.rows;
  const d = queries.cols;
  const dV = values.cols;
  if (values.rows !== nK) throw new ShapeError("values", `${nK}×*`, values.shape);
  const lsh = sortLsh(queries, keys, { blockSize: o.blockSize, planes: o.planes }, derive(seed, "sample"));
  const V = values.data;
  const colR = new Float64Array(nK);
  const colP = new Float64Array(nK);
  const row = new Float64Array(nK);
  let rvNorm2 = 0;
  let maskedMass = 0;
  let logRmax = Number.NEGATIVE_INFINITY;
  let logRmin = Number.POSITIVE_INFINITY;
  // The logits ⟨q_i, k_j⟩·scale a block of query rows at a time: each dot product one sequential sum
  // from 0 (sequentialMatmulInto), as `logit` forms it, so the same bits (issue 14: this N_Q × N_KV
  // diagnostic was 9 % of the frontier sweep in logit calls).
  const kt = new Float64Array(d * nK);
  transposeInto(keys.data, kt, nK, d);
  const blockRows = Math.max(1, Math.min(nQ, Math.floor(LOGIT_BLOCK_FLOATS / Math.max(1, nK))));
  const dots = new Float64Array(blockRows * nK);
  // R·V the same way, a block of rows at a time: row i of `resid` holds p_ij for the keys outside
  // query i's LSH block and 0 inside it, so each entry of (RV)_i is the loop's sum over the unmasked
  // j in order from +0 — the zero terms add ±0, which leaves a sum that started at +0 unchanged
  // (V is finite: checkAttentionInputs). It was the frontier sweep's largest loop here.
  const resid = new Float64Array(blockRows * nK);
  const rv = new Float64Array(blockRows * dV);
  let rows = 0;
  for (let i = 0; i < nQ; i++) {
    const r = i % blockRows;
    if (r === 0) {
      rows = Math.min(blockRows, nQ - i);
      sequentialMatmulInto(queries.data.subarray(i * d, (i + rows) * d), kt, dots, rows, d, nK);
    }
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < nK; j++) {
      row[j] = dots[r * nK + j] * o.scale;
      if (row[j] > mx) mx = row[j];
    }
    let z = 0;
    for (let j = 0; j < nK; j++) z += Math.exp(row[j] - mx);
    const logZ = mx + Math.log(z);
    let res = 0;
    const pr = r * nK;
    for (let j = 0; j < nK; j++) {
      const p = Math.exp(row[j] - logZ);
      colP[j] += p * p;
      if (lsh.keyBlock[j] === lsh.queryBlock[i]) {
        maskedMass += p;
        resid[pr + j] = 0;
        continue;
      }
      res += p;
      colR[j] += p * p;
      resid[pr + j] = p;
    }
    if (r === rows - 1) {
      sequentialMatmulInto(resid, V, rv, rows, nK, dV);
      for (let c = 0; c < rows * dV; c++) rvNorm2 += rv[c] * rv[c];
    }
    if (res > 0) {
      const logR = Math.log(res) + logZ; // rᵢ = Zᵢ·(residual share of row i)
      logRmax = Math.max(logRmax, logR);
      logRmin = Math.min(logRmin, logR);
    }
  }
  const vRow2 = new Float64Array(nK);
  let vFro2 = 0;
  for (let j = 0; j < nK; j++) {
    let s = 0;
    for (let c = 0; c < dV; c++) s += V[j * dV + c] ** 2;
    vRow2[j] = s;
    vFro2 += s;
  }
  let rFro2 = 0;
  let maxR = 0;
  let maxP = 0;
  let amm = 0;
  for (let j = 0; j < nK; j++) {
    rFro2 += colR[j];
    maxR = Math.max(maxR, colR[j]);
    maxP = Math.max(maxP, colP[j]);
    if (colR[j] === 0 || vRow2[j] === 0) continue;
    // Σ_j ‖R_{:,j}‖²‖V_j‖²/p_j with the sampling distribution HyperAttention uses.
    const p = o.uniformValues || !(vFro2 > 0) ? 1 / nK : vRow2[j] / vFro2;
    amm += (colR[j] * vRow2[j]) / p;
  }
  const alpha = nK * maxR;
  return {
    alpha,
    alphaFull: nK * maxP,
    kappa: logRmax === Number.NEGATIVE_INFINITY ? 1 : Math.exp(logRmax - logRmin),
    residualFrobenius2: rFro2,
    maskedMass: maskedMass / nQ,
    expectedSquaredError: lsh.numBlocks > 1 ? Math.max(0, amm - rvNorm2) / o.m : 0,
    errorBound: (alpha * vFro2) / o.m,
    numBlocks: lsh.numBlocks,
  };
}
