/**
 * MLA in its unmerged (factorized) form, and its equivalent low-rank multi-head attention (§4.2).
 */
import { type MultiHeadWeights, type PositionalRotation, runAttention } from "../attention/index.js";
import { rmsNorm } from "../norm.js";
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
  if (rope)
    checkRope(
      rope,
      dims.ropeDim > 0 ? dims.ropeDim : dims.headDim,
      dims.ropeDim > 0 ? "the decoupled rotary width d_R = weights.keyRope.cols" : "naive RoPE rotates the full d_head-wide Q_h and K_h",
    );
  const rotaryKey = weights.keyRope ? mlaRotaryKey(xKV, weights, rope, kPos).rotated : undefined;
  const queries = mlaQueries(mlaQueryLatent(xQ, weights), weights, rope, qPos).rotated;
  const { keys, values } = mlaKeysValues(mlaKeyLatent(xKV, weights), rotaryKey, weights);
  const heads: Matrix[] = [];
  for (let h = 0; h < dims.numHeads; h++) {
    // No rotary part but a rope: the naive form of §4.2 rotates the full Q_h and K_h.
    const q = !weights.keyRope && rope && qPos ? rope.apply(queries[h], qPos) : queries[h];
    const k = !weights.keyRope && rope && kPos ? rope.apply(keys[h], kPos) : keys[h];
    heads.push(runAttention(q, k, values[h], base));
  }
  return matmul(concatCols(heads), weights.output);
}

/** L_Q = X_Q W_LQ, RMS-normalized when the weights carry `queryNorm` (DeepSeek-V2's q_a_layernorm). */
export function mlaQueryLatent(xQ: Matrix, weights: MlaWeights): Matrix {
  const l = matmul(xQ, weights.queryDown);
  return weights.queryNorm ? rmsNorm(l, weights.queryNorm) : l;
}

/** The cached latent L = X W_L, RMS-normalized when the weights carry `latentNorm` (kv_a_layernorm). */
export function mlaKeyLatent(xKV: Matrix, weights: MlaWeights): Matrix {
  const l = matmul(xKV, weights.latentDown);
  return weights.latentNorm ? rmsNorm(l, weights.latentNorm) : l;
}

/** The shared rotary key k_R = X W_KR before and after rotation by `rope` at `positions` (DeepSeek-V2 §2.1.3). */
export function mlaRotaryKey(
  xKV: Matrix,
  weights: MlaWeights,
  rope?: PositionalRotation,
  positions?: ArrayLike<number>,
): { pre: Matrix; rotated: Matrix } {
  if (!weights.keyRope) throw new ValueError("weights.keyRope", "a decoupled rotary part", "undefined");
  const pre = matmul(xKV, weights.keyRope);
  return { pre, rotated: rope && positions ? rope.apply(pre, positions) : pre };
}

/**
 * Per-head queries from the query latent: Q_h = L_Q W_LQQ^h, with a decoupled rotary part
 * [Q_h | q_R,h R] where q_R,h = L_Q W_QR^h is rotated by `rope` (`pre` holds the unrotated rows).
 * Without a rotary part both lists hold Q_h.
 */
export function mlaQueries(
  latentQ: Matrix,
  weights: MlaWeights,
  rope?: PositionalRotation,
  positions?: ArrayLike<number>,
): { pre: Matrix[]; rotated: Matrix[] } {
  const pre: Matrix[] = [];
  const rotated: Matrix[] = [];
  for (let h = 0; h < weights.queryUp.length; h++) {
    const q = matmul(latentQ, weights.queryUp[h]);
    if (weights.queryRope) {
      const qR = matmul(latentQ, weights.queryRope[h]);
      pre.push(concatCols([q, qR]));
      rotated.push(concatCols([q, rope && positions ? rope.apply(qR, positions) : qR]));
    } else {
      pre.push(q);
      rotated.push(q);
    }
  }
  return { pre, rotated };
}

/** Per-head keys K_h = L W_LK^h (with the shared rotated rotary key appended: [K_h | k_R R]) and values V_h = L W_LV^h. */
export function mlaKeysValues(latent: Matrix, rotaryKey: Matrix | undefined, weights: MlaWeights): { keys: Matrix[]; values: Matrix[] } {
  const keys = weights.keyUp.map((w) => {
    const k = matmul(latent, w);
    return rotaryKey ? concatCols([k, rotaryKey]) : k;
  });
  return { keys, values: weights.valueUp.map((w) => matmul(latent, w)) };
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
  if (weights.queryNorm || weights.latentNorm) {
    throw new ValueError(
      weights.latentNorm ? "weights.latentNorm" : "weights.queryNorm",
      "no latent RMSNorm (W_L W_LK^h cannot absorb a row-wise norm of X W_L)",
      "present",
    );
  }
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
