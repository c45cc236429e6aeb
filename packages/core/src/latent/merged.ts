/**
 * MLA in merged form (§4.2): the per-head key and value up-projections are folded into the
 * query side and the output, so attention runs directly on the cached latent L and K_h, V_h are
 * never formed:
 *   Q_h K_hᵀ = L_Q W_LQQ^h (W_LK^h)ᵀ Lᵀ = L_Q W_LQK^h Lᵀ,          W_LQK^h ∈ R^{d_LQ×d_L}
 *   Y = concat_col(Z_h⁻¹ A_h V_h) W_O = concat_col(Z_h⁻¹ A_h L) W_LO, W_LO = blockdiag(W_LV^h) W_O.
 * The kernel scale 1/√(d_head + d_R) of the unmerged form cannot be read off merged weights
 * (ERRATA), so `MergedMla` carries it.
 *
 * Decoupled RoPE (DeepSeek-V2): the logits gain q_R,h R_i R_jᵀ k_Rᵀ, an inner product of the
 * rotated rotary parts, which simply concatenates to the merged vectors:
 *   ⟨[L_Q W_LQK^h | q_R,h R_i], [L | k_R R_j]⟩ = L_Q W_LQK^h Lᵀ + q_R,h R_i R_jᵀ k_Rᵀ,
 * so the latent part still merges exactly. Naive RoPE on K_h = L W_LK^h would put R_i R_jᵀ between
 * W_LQQ^h and (W_LK^h)ᵀ, which no fixed W_LQK^h can absorb; the merged form refuses it.
 */
import { runAttention } from "../attention/index.js";
import { ValueError } from "../errors.js";
import { matmul, matmulInto, matmulTransB } from "../linalg/matmul.js";
import { Matrix } from "../matrix.js";
import { concatCols } from "../linalg/ops.js";
import { assertFinite, assertMatrix, assertNonEmpty, assertNumber, assertShape, describe, assertOptions } from "../validate.js";
import { type MlaOptions, attentionOptionsOf, checkRope, mlaKernel, resolvePositions } from "./options.js";
import { checkSequence } from "./unmerged.js";
import { type MlaWeights, checkHeads, checkRopePart, mlaDimensions } from "./weights.js";

/** MLA weights in merged form: what an inference engine keeps (§4.2). */
export interface MergedMla {
  /** W_LQ ∈ R^{d_in×d_LQ}. */
  queryDown: Matrix;
  /** W_L ∈ R^{d_in×d_L}. */
  latentDown: Matrix;
  /** W_LQK^h = W_LQQ^h (W_LK^h)ᵀ ∈ R^{d_LQ×d_L}, one per head. */
  queryKey: Matrix[];
  /** W_LO = blockdiag(W_LV^1 … W_LV^H) W_O ∈ R^{H·d_L×d_out}. */
  latentOutput: Matrix;
  /** Softmax logit scale of the unmerged form, 1/√(d_head + d_R) (ERRATA: carried, not recoverable). */
  scale: number;
  /** Decoupled RoPE: W_QR^h ∈ R^{d_LQ×d_R} per head (unchanged by merging). */
  queryRope?: Matrix[];
  /** Decoupled RoPE: shared rotary key W_KR ∈ R^{d_in×d_R} (unchanged by merging). */
  keyRope?: Matrix;
}

/** Sizes of a merged MLA, read off its weights. */
export interface MergedMlaDimensions {
  dIn: number;
  numHeads: number;
  queryLatentDim: number;
  latentDim: number;
  dOut: number;
  /** d_R, 0 without a decoupled rotary part. */
  ropeDim: number;
}

/**
 * Merges factorized MLA weights (§4.2): W_LQK^h = W_LQQ^h (W_LK^h)ᵀ and
 * W_LO = blockdiag(W_LV^h) W_O (computed block by block: rows h·d_L … of W_LO are
 * W_LV^h · W_O[h·d_V … (h+1)·d_V − 1, :], never forming the mostly-zero block diagonal).
 * @param weights factorized MLA weights.
 * @returns merged weights carrying the scale 1/√(d_head + d_R).
 */
export function mergeMla(weights: MlaWeights): MergedMla {
  const dims = mlaDimensions(weights);
  if (weights.queryNorm || weights.latentNorm) {
    throw new ValueError(
      weights.latentNorm ? "weights.latentNorm" : "weights.queryNorm",
      "no latent RMSNorm (the merged forms and mlaDecode compute L = X W_L without it; use mlaAttention)",
      "present",
    );
  }
  const { numHeads, latentDim, valueDim, dOut } = dims;
  const queryKey = weights.queryUp.map((wq, h) => matmulTransB(wq, weights.keyUp[h]));
  const latentOutput = new Matrix(numHeads * latentDim, dOut);
  for (let h = 0; h < numHeads; h++) {
    const wOBlock = weights.output.data.subarray(h * valueDim * dOut, (h + 1) * valueDim * dOut);
    const target = latentOutput.data.subarray(h * latentDim * dOut, (h + 1) * latentDim * dOut);
    matmulInto(weights.valueUp[h].data, wOBlock, target, latentDim, valueDim, dOut, false);
  }
  const merged: MergedMla = {
    queryDown: weights.queryDown.clone(),
    latentDown: weights.latentDown.clone(),
    queryKey,
    latentOutput,
    scale: 1 / Math.sqrt(dims.headDim + dims.ropeDim),
  };
  if (weights.queryRope && weights.keyRope) {
    merged.queryRope = weights.queryRope.map((w) => w.clone());
    merged.keyRope = weights.keyRope.clone();
  }
  return merged;
}

/**
 * Reads the sizes of a merged MLA off its weights and checks every shape (and finiteness).
 * @throws ShapeError naming the first inconsistent weight; NonFiniteError on NaN/±Inf; ValueError on a bad scale.
 */
export function mergedMlaDimensions(merged: MergedMla, argument = "merged"): MergedMlaDimensions {
  if (merged === null || typeof merged !== "object") throw new ValueError(argument, "a MergedMla object", describe(merged));
  assertMatrix(merged.queryDown, `${argument}.queryDown`);
  assertNonEmpty(merged.queryDown, `${argument}.queryDown`);
  assertFinite(merged.queryDown, `${argument}.queryDown`);
  const dIn = merged.queryDown.rows;
  const queryLatentDim = merged.queryDown.cols;
  assertShape(merged.latentDown, `${argument}.latentDown`, dIn, undefined, "rows = d_in = queryDown.rows");
  assertNonEmpty(merged.latentDown, `${argument}.latentDown`);
  assertFinite(merged.latentDown, `${argument}.latentDown`);
  const latentDim = merged.latentDown.cols;
  const numHeads = Array.isArray(merged.queryKey) ? merged.queryKey.length : 0;
  if (numHeads === 0) throw new ValueError(`${argument}.queryKey`, "a non-empty array of per-head matrices", describe(merged.queryKey));
  checkHeads(merged.queryKey, `${argument}.queryKey`, numHeads, queryLatentDim, latentDim, "d_LQ×d_L");
  assertShape(merged.latentOutput, `${argument}.latentOutput`, numHeads * latentDim, undefined, "rows = H·d_L");
  assertNonEmpty(merged.latentOutput, `${argument}.latentOutput`);
  assertFinite(merged.latentOutput, `${argument}.latentOutput`);
  assertNumber(merged.scale, `${argument}.scale`, { positive: true });
  const ropeDim = checkRopePart(merged.queryRope, merged.keyRope, argument, numHeads, queryLatentDim, dIn);
  return { dIn, numHeads, queryLatentDim, latentDim, dOut: merged.latentOutput.cols, ropeDim };
}

/**
 * The merged attention step shared by `mergedMlaAttention` and the latent-cache decoder: given
 * L_Q (N_Q×d_LQ), the latent L (N_KV×d_L) and — with a rotary part — the already rotated shared
 * key k_R R (N_KV×d_R), returns Y = concat_col(Z_h⁻¹ A_h L) W_LO. Arguments are assumed checked;
 * `options.algorithm` picks materialized or streaming single-head attention.
 * @internal
 */
export function attendMergedLatent(
  merged: MergedMla,
  dims: MergedMlaDimensions,
  latentQ: Matrix,
  latent: Matrix,
  rotaryKey: Matrix | undefined,
  queryPositions: ArrayLike<number> | undefined,
  options: MlaOptions,
): Matrix {
  const kernel = mlaKernel(options.kernel, merged.scale);
  const base = { ...attentionOptionsOf(options), kernel };
  const { rope } = options;
  // With a rotary part, A_h = κ(⟨[L_Q W_LQK^h | q_R,h R_i], [L | k_R R_j]⟩): one key matrix for all heads.
  const keys = rotaryKey ? concatCols([latent, rotaryKey]) : latent;
  const heads: Matrix[] = [];
  for (let h = 0; h < dims.numHeads; h++) {
    let q = matmul(latentQ, merged.queryKey[h]);
    if (rotaryKey && merged.queryRope) {
      let qR = matmul(latentQ, merged.queryRope[h]);
      if (rope && queryPositions) qR = rope.apply(qR, queryPositions);
      q = concatCols([q, qR]);
    }
    // Z_h⁻¹ A_h L: the latent itself plays the role of V_h (W_LV^h is folded into W_LO).
    heads.push(runAttention(q, keys, latent, base));
  }
  return matmul(concatCols(heads), merged.latentOutput);
}

/**
 * Multi-head latent attention in merged form (§4.2):
 * Y = concat_col(Z_h⁻¹ A_h L) W_LO with A_h = κ(L_Q W_LQK^h Lᵀ [+ q_R,h R_i R_jᵀ k_Rᵀ]) — K_h and
 * V_h are never formed. Equals `mlaAttention` on the weights it was merged from.
 * @param xQ N_Q×d_in query-side input.
 * @param xKV N_KV×d_in key/value-side input.
 * @param merged merged weights (see {@link mergeMla}).
 * @param options kernel (softmax or dot; softmax scale default `merged.scale`), mask, rope (rotates
 *   the decoupled part only) and positions.
 * @throws ValueError when `options.rope` is given but the weights have no decoupled rotary part
 *   (naive RoPE on the latent keys is not mergeable — use `mlaAttention` for that form).
 */
export function mergedMlaAttention(xQ: Matrix, xKV: Matrix, merged: MergedMla, options: MlaOptions = {}): Matrix {
  assertOptions(options, "options");
  const dims = mergedMlaDimensions(merged);
  checkSequence(xQ, "xQ", dims.dIn, "cols = d_in = merged.queryDown.rows");
  checkSequence(xKV, "xKV", dims.dIn, "cols = d_in = merged.queryDown.rows");
  const { rope } = options;
  if (rope && dims.ropeDim === 0) throw naiveRopeError();
  const latentQ = matmul(xQ, merged.queryDown);
  const latent = matmul(xKV, merged.latentDown);
  let rotaryKey: Matrix | undefined;
  let qPos: ArrayLike<number> | undefined;
  if (merged.keyRope) {
    rotaryKey = matmul(xKV, merged.keyRope);
    if (rope) {
      checkRope(rope, dims.ropeDim, "the decoupled rotary width d_R = merged.keyRope.cols");
      qPos = resolvePositions(options.queryPositions, xQ.rows, xKV.rows - xQ.rows, "options.queryPositions");
      rotaryKey = rope.apply(rotaryKey, resolvePositions(options.keyPositions, xKV.rows, 0, "options.keyPositions"));
    }
  }
  return attendMergedLatent(merged, dims, latentQ, latent, rotaryKey, qPos, options);
}

/** The error for RoPE on a merged MLA without a decoupled rotary part. */
export function naiveRopeError(): ValueError {
  return new ValueError(
    "options.rope",
    "merged weights with a decoupled rotary part (queryRope/keyRope): RoPE on the latent keys puts R_i R_jᵀ between W_LQQ^h and (W_LK^h)ᵀ, which no merged W_LQK^h can absorb (§4.2)",
    "merged weights without a rotary part",
  );
}
