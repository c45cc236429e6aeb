/**
 * WildCat (Schröder & Mackey, "WildCat: near-linear attention in theory and practice",
 * arXiv 2602.10056): softmax attention over a small weighted coreset of the keys.
 *
 *   Â = exp(β Q K_Sᵀ) W,   Ŷ = exp(β Q K_Sᵀ)(W V) / exp(β Q K_Sᵀ)(W 1),
 *
 * with S (|S| = r) chosen by randomly pivoted Cholesky (lowrank/rpcholesky.ts) on the key kernel
 * matrix K_τ[a, b] = exp((β/τ²)⟨k_a, k_b⟩), and the Nyström weights
 * W = K_τ[S, S]⁻¹ K_τ[S, :] (r × N_KV): the least-squares weights that reproduce every key's
 * feature exp((β/τ²)⟨k_l, ·⟩) from the coreset's. τ is the paper's free parameter; τ = 1 (the
 * default) makes the regression kernel the attention kernel itself.
 *
 * Computed without forming K_τ: RPCholesky evaluates (r + 1)N entries and returns F with
 * K_τ ≈ F Fᵀ and F[S, :] = L lower triangular, L Lᵀ = K_τ[S, S]; then W = L⁻ᵀ Fᵀ, so
 * W [V 1] = L⁻ᵀ (Fᵀ [V 1]) is one N × r product and one triangular solve. The kernel is multiplied
 * by the constant e^{−(β/τ²)·max‖k‖²} (entries ≤ 1, no overflow); W is invariant to that factor,
 * and the attention logits are row-shifted, which cancels in the ratio.
 * Exact limit: r = N gives W = the pivot permutation, so Ŷ = softmax attention.
 * The paper gives no causal form: `options.mask` is refused with a ValueError (so is a masked problem in the registry).
 */
import { Matrix, NumericalError, type SeedKey, derive, selectRows } from "@randattn/core";
import { assertInteger, assertNumber, assertOneOf, assertRequiredOptions } from "@randattn/core/internal";
import { type PsdColumns, type RpCholeskyVariant, rpCholesky } from "../lowrank/rpcholesky.js";
import type { Cost } from "../operators/types.js";
import { checkAttentionInputs, refuseMask, resolveScale, rowNorms2 } from "../nystrom/shared.js";

/** Options of {@link wildcatAttention}. */
export interface WildCatOptions {
  /** r, the coreset size (1 ≤ r ≤ N_KV). */
  coresetSize: number;
  /** β of the softmax kernel exp(β⟨q, k⟩). @default 1/√d_QK */
  scale?: number;
  /** τ: the Nyström weights use the kernel exp((β/τ²)⟨k, k'⟩). @default 1 */
  temperature?: number;
  /** RPCholesky variant (one pivot at a time, or blocks with rejection). @default "plain" */
  pivoting?: RpCholeskyVariant;
  /** Candidates per block of the accelerated variant. @default 16 */
  blockSize?: number;
}

/** What {@link wildcatAttention} returns. */
export interface WildCatResult {
  readonly output: Matrix;
  /** Flops, floats stored, kernel evaluations (RPCholesky entries + N_Q·r logits), random bits. */
  readonly cost: Cost & { kernelEvaluations: number; randomBits: number };
  /** Indices of the coreset keys S (pivot order). */
  readonly coreset: Int32Array;
  /** W V (r × d_V): the coreset's weighted values. */
  readonly coresetValues: Matrix;
  /** W 1 (r): the coreset's normalizer weights. */
  readonly coresetWeights: Float64Array;
}

/** The key kernel exp(γ(⟨k_a, k_b⟩ − max‖k‖²)) as an RPCholesky column oracle. */
function keyKernel(keys: Matrix, gamma: number): PsdColumns {
  const n = keys.rows;
  const d = keys.cols;
  const norms = rowNorms2(keys);
  let mx = 0;
  for (const v of norms) mx = Math.max(mx, v);
  return {
    size: n,
    entryFlops: 2 * d + 1,
    diagonal: () => norms.map((v) => Math.exp(gamma * (v - mx))),
    columns: (indices) => {
      const out = new Matrix(n, indices.length);
      for (let i = 0; i < n; i++) {
        for (let t = 0; t < indices.length; t++) {
          let s = 0;
          const j = indices[t];
          for (let c = 0; c < d; c++) s += keys.data[i * d + c] * keys.data[j * d + c];
          out.data[i * indices.length + t] = Math.exp(gamma * (s - mx));
        }
      }
      return out;
    },
  };
}

/**
 * WildCat attention (module comment).
 * @param queries Q, N_Q × d_QK. @param keys K, N_KV × d_QK. @param values V, N_KV × d_V.
 * @param options coreset size r, scale β, temperature τ, pivoting.
 * @param seed RPCholesky's pivots come from `derive(seed, "wildcat")`.
 * @throws ShapeError / NonFiniteError on inputs; ValueError on options; NumericalError when a
 *   query's approximate normalizer exp(β q K_Sᵀ) W 1 is not positive.
 */
export function wildcatAttention(queries: Matrix, keys: Matrix, values: Matrix, options: WildCatOptions, seed: SeedKey): WildCatResult {
  assertRequiredOptions(options, "options");
  checkAttentionInputs(queries, keys, values);
  const opts = options ?? ({} as WildCatOptions);
  refuseMask(opts, "WildCat");
  const n = keys.rows;
  const nQ = queries.rows;
  const d = keys.cols;
  const dV = values.cols;
  assertInteger(opts.coresetSize, "options.coresetSize", 1, n);
  const beta = resolveScale(opts.scale, d);
  const tau = opts.temperature ?? 1;
  assertNumber(tau, "options.temperature", { positive: true });
  const pivoting = opts.pivoting ?? "plain";
  assertOneOf(pivoting, "options.pivoting", ["plain", "accelerated"] as const);
  const rp = rpCholesky(
    keyKernel(keys, beta / (tau * tau)),
    { rank: opts.coresetSize, variant: pivoting, blockSize: opts.blockSize },
    derive(seed, "wildcat"),
  );
  const f = rp.factor;
  const r = f.cols;
  const s = rp.pivots;
  // Fᵀ [V 1] (r × (d_V + 1)).
  const w1 = dV + 1;
  const ftv = new Float64Array(r * w1);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < r; j++) {
      const fij = f.data[i * r + j];
      if (fij === 0) continue;
      for (let c = 0; c < dV; c++) ftv[j * w1 + c] += fij * values.data[i * dV + c];
      ftv[j * w1 + dV] += fij;
    }
  }
  // Solve Lᵀ X = Fᵀ[V 1] with L = F[S, :] lower triangular (back substitution, last row first).
  for (let j = r - 1; j >= 0; j--) {
    const ljj = f.data[s[j] * r + j];
    for (let c = 0; c < w1; c++) {
      let v = ftv[j * w1 + c];
      for (let t = j + 1; t < r; t++) v -= f.data[s[t] * r + j] * ftv[t * w1 + c];
      ftv[j * w1 + c] = v / ljj;
    }
  }
  const coresetValues = new Matrix(r, dV);
  const coresetWeights = new Float64Array(r);
  for (let j = 0; j < r; j++) {
    for (let c = 0; c < dV; c++) coresetValues.data[j * dV + c] = ftv[j * w1 + c];
    coresetWeights[j] = ftv[j * w1 + dV];
  }
  // Attention over the coreset: E = exp(β Q K_Sᵀ − rowmax), Ŷ = E (WV) / E (W1).
  const ks = selectRows(keys, s);
  const output = new Matrix(nQ, dV);
  const logits = new Float64Array(r);
  for (let i = 0; i < nQ; i++) {
    let mx = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < r; j++) {
      let v = 0;
      for (let c = 0; c < d; c++) v += queries.data[i * d + c] * ks.data[j * d + c];
      logits[j] = beta * v;
      mx = Math.max(mx, logits[j]);
    }
    let z = 0;
    for (let j = 0; j < r; j++) {
      const e = Math.exp(logits[j] - mx);
      z += e * coresetWeights[j];
      for (let c = 0; c < dV; c++) output.data[i * dV + c] += e * coresetValues.data[j * dV + c];
    }
    if (!(z > 0)) {
      throw new NumericalError("options.coresetSize", `a positive approximate normalizer for query ${i}`, `exp(βqK_Sᵀ)W1 = ${z}`);
    }
    for (let c = 0; c < dV; c++) output.data[i * dV + c] /= z;
  }
  const flops = rp.cost.flops + 2 * n * r * w1 + r * r * w1 + nQ * r * (2 * d + 1) + 2 * nQ * r * w1 + nQ * dV;
  const floatsStored = rp.cost.floatsStored + r * (d + w1) + r; // + one row of r logits at a time
  return {
    output,
    cost: { flops, floatsStored, kernelEvaluations: rp.cost.kernelEvaluations + nQ * r, randomBits: rp.cost.randomBits },
    coreset: s,
    coresetValues,
    coresetWeights,
  };
}
