/**
 * MLA in its unmerged (factorized) form, and its equivalent low-rank multi-head attention (§4.2).
 */
import { type MultiHeadWeights, runAttention } from "../attention/index.js";
import { ValueError } from "../errors.js";
import { matmul } from "../linalg/matmul.js";
import type { Matrix } from "../matrix.js";
import { concatCols } from "../linalg/ops.js";
import { assertFinite, assertNonEmpty, assertShape, assertOptions } from "../validate.js";
import { type MlaOptions, attentionOptionsOf, checkRope, mlaKernel, resolvePositions } from "./options.js";
import { type MlaWeights, mlaDimensions } from "./weights.js";

/** Checks an MLA input sequence: a non-empty, finite N×d_in matrix. */
export function checkSequence(
  x: unknown,
  argument: string,
  dIn: number,
  why = "cols = d_in = weights.queryDown.rows",
): asserts x is Matrix {
  assertShape(x, argument, undefined, dIn, why);
  assertNonEmpty(x, argument);
  assertFinite(x, argument);
}

/**
 * Multi-head latent attention, unmerged: forms L_Q = X_Q W_LQ, L = X_KV W_L, then per head
 * Q_h = L_Q W_LQQ^h, K_h = L W_LK^h, V_h = L W_LV^h and Y = concat_col(Z_h⁻¹ A_h V_h) W_O (§4.2).
 *
 * With a decoupled rotary part (DeepSeek-V2) the head's query and key are [Q_h | q_R,h R] and
 * [K_h | k_R R] with q_R,h = L_Q W_QR^h, k_R = X_KV W_KR rotated by `options.rope`, and the softmax
 * scale is 1/√(d_head + d_R). Without one, `options.rope` rotates Q_h and K_h themselves (the naive
 * form of §4.2, not mergeable).
 * @param xQ N_Q×d_in query-side input.
 * @param xKV N_KV×d_in key/value-side input (= xQ for self-attention).
 * @param weights factorized MLA weights.
 * @param options kernel (softmax or dot; softmax scale default 1/√(d_head + d_R)), mask, rope and positions.
 * @returns N_Q×d_out.
 * @throws ShapeError / NonFiniteError on inconsistent or non-finite inputs; ValueError on a pairwise kernel.
 */
export function mlaAttention(xQ: Matrix, xKV: Matrix, weights: MlaWeights, options: MlaOptions = {}): Matrix {
  assertOptions(options, "options");
  const dims = mlaDimensions(weights);
  checkSequence(xQ, "xQ", dims.dIn);
  checkSequence(xKV, "xKV", dims.dIn);
  const kernel = mlaKernel(options.kernel, 1 / Math.sqrt(dims.headDim + dims.ropeDim));
  const base = { ...attentionOptionsOf(options), kernel };
  const { rope } = options;
  const nQ = xQ.rows;
  const nKV = xKV.rows;
  const qPos = rope ? resolvePositions(options.queryPositions, nQ, nKV - nQ, "options.queryPositions") : undefined;
  const kPos = rope ? resolvePositions(options.keyPositions, nKV, 0, "options.keyPositions") : undefined;
  const latentQ = matmul(xQ, weights.queryDown);
  const latent = matmul(xKV, weights.latentDown);
  let rotaryKey: Matrix | undefined;
  if (weights.keyRope) {
    rotaryKey = matmul(xKV, weights.keyRope);
    if (rope && kPos) {
      checkRope(rope, dims.ropeDim, "the decoupled rotary width d_R = weights.keyRope.cols");
      rotaryKey = rope.apply(rotaryKey, kPos);
    }
  } else if (rope) {
    checkRope(rope, dims.headDim, "naive RoPE rotates the full d_head-wide Q_h and K_h");
  }
  const heads: Matrix[] = [];
  for (let h = 0; h < dims.numHeads; h++) {
    let q = matmul(latentQ, weights.queryUp[h]);
    let k = matmul(latent, weights.keyUp[h]);
    const v = matmul(latent, weights.valueUp[h]);
    if (rotaryKey && weights.queryRope) {
      let qR = matmul(latentQ, weights.queryRope[h]);
      if (rope && qPos) qR = rope.apply(qR, qPos);
      q = concatCols([q, qR]);
      k = concatCols([k, rotaryKey]);
    } else if (rope && qPos && kPos) {
      q = rope.apply(q, qPos);
      k = rope.apply(k, kPos);
    }
    heads.push(runAttention(q, k, v, base));
  }
  return matmul(concatCols(heads), weights.output);
}

/**
 * The low-rank multi-head attention an MLA without positional rotation is exactly equal to (§4.2):
 * W_Q^h = W_LQ W_LQQ^h, W_K^h = W_L W_LK^h, W_V^h = W_L W_LV^h, same W_O (H KV heads, rank ≤ d_L).
 * `multiHeadAttention(xQ, xKV, mlaToMultiHead(w))` then equals `mlaAttention(xQ, xKV, w)`; with a
 * `rope` option it computes the naive (non-mergeable) rotated MLA.
 * @throws ValueError for weights with a decoupled rotary part: that MLA has no MHA equivalent,
 * because only d_R of each head's columns would be rotated, which a per-head RoPE cannot express.
 */
export function mlaToMultiHead(weights: MlaWeights): MultiHeadWeights {
  const dims = mlaDimensions(weights);
  if (dims.ropeDim > 0) {
    throw new ValueError(
      "weights.keyRope",
      "no decoupled rotary part (a decoupled-RoPE MLA rotates only d_R of each head's columns; no multi-head attention with per-head RoPE equals it)",
      `a rotary part of width d_R = ${dims.ropeDim}`,
    );
  }
  return {
    queries: weights.queryUp.map((w) => matmul(weights.queryDown, w)),
    keys: weights.keyUp.map((w) => matmul(weights.latentDown, w)),
    values: weights.valueUp.map((w) => matmul(weights.latentDown, w)),
    output: weights.output.clone(),
  };
}
