/**
 * Token-by-token decoding with a cache (§4): each call projects only the t new tokens, appends
 * their keys/values (or latent rows) to the cache, and attends the t new queries to everything
 * cached so far under the causal mask with offset = previous length — query i of the step sits at
 * absolute position prev + i and sees keys j ≤ prev + i (ERRATA's streaming convention: the
 * queries are the newest tokens of a longer key/value sequence). The result equals the last t rows
 * of full causal attention over the whole sequence, at O(t·N·d) per step instead of O(N²d).
 */
import { type MultiHeadOptions, type MultiHeadWeights, multiHeadShape } from "../attention/index.js";
import { NumericalError, ShapeError, ValueError } from "../errors.js";
import { type MergedMla, attendMergedLatent, mergedMlaDimensions, naiveRopeError } from "../latent/merged.js";
import { type MlaOptions, checkRope, resolvePositions } from "../latent/options.js";
import { checkSequence } from "../latent/unmerged.js";
import { matmul } from "../linalg/matmul.js";
import type { Matrix } from "../matrix.js";
import { concatCols } from "../linalg/ops.js";
import { assertFinite, describe } from "../validate.js";
import {
  type DecodeAttentionOptions,
  type DecodeCache,
  type LatentDecodeCache,
  type PositionalFill,
  rotationSignature,
} from "./contract.js";

/**
 * Checks the options a decoder refuses and returns the per-head attention options with the causal
 * mask at offset `prev`. `mask` is refused (decoding is causal by construction) and so is
 * `keyPositions` (cached keys were rotated at their positions when appended).
 */
function decodeAttentionOptions(options: MultiHeadOptions | MlaOptions): DecodeAttentionOptions {
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  if (options.mask !== undefined) {
    throw new ValueError(
      "options.mask",
      "undefined (decoding applies the causal mask with offset = cache length itself)",
      describe(options.mask),
    );
  }
  if (options.keyPositions !== undefined) {
    throw new ValueError("options.keyPositions", "undefined (cached keys were rotated at their positions when appended)", "given");
  }
  const { rope: _r, queryPositions: _q, keyPositions: _k, ...rest } = options;
  return rest;
}

/** Checks `cache` is a DecodeCache (duck-typed: any object with `step`, shape fields and `length`). */
function checkDecodeCache(cache: unknown): asserts cache is DecodeCache {
  const c = cache as DecodeCache | null;
  if (c === null || typeof c !== "object" || typeof c.step !== "function" || typeof c.length !== "number") {
    throw new ValueError("cache", "a DecodeCache (KVCache or a sketch kvcache)", describe(cache));
  }
}

/** Checks `cache` is a LatentDecodeCache. */
function checkLatentCache(cache: unknown): asserts cache is LatentDecodeCache {
  const c = cache as LatentDecodeCache | null;
  if (c === null || typeof c !== "object" || typeof c.append !== "function" || typeof c.latent !== "function") {
    throw new ValueError("cache", "a LatentDecodeCache (LatentCache or a sketch latent cache)", describe(cache));
  }
}

/**
 * xNew·W for a finite xNew, checked through the t×d_out product instead of scanning W on every
 * decoding step: a NaN/±Inf entry W[k, j] makes every entry of column j non-finite (x·NaN, 0·∞ and
 * ∞ − ∞ are all NaN), so a finite product proves W finite at O(t·d_out) instead of O(d_in·d_out).
 * Only on failure is W scanned, to name the bad entry (NonFiniteError); a finite W means overflow.
 */
function projectFinite(xNew: Matrix, w: Matrix, argument: string): Matrix {
  const y = matmul(xNew, w);
  const d = y.data;
  for (let i = 0; i < d.length; i++) {
    if (!Number.isFinite(d[i])) {
      assertFinite(w, argument);
      throw new NumericalError(
        argument,
        `a finite product xNew·${argument}`,
        `${d[i]} at [${Math.floor(i / y.cols)}, ${i % y.cols}] (overflow)`,
      );
    }
  }
  return y;
}

/** Checks a rope option is a PositionalRotation. */
function checkRotation(rope: unknown): void {
  if (rope === null || typeof rope !== "object" || typeof (rope as { apply?: unknown }).apply !== "function") {
    throw new ValueError("options.rope", "a PositionalRotation (an object with apply(x, positions))", describe(rope));
  }
}

/**
 * One decoding step of multi-head (MHA / GQA / MQA) self-attention with a KV cache: projects the
 * t ≥ 1 new tokens, appends their keys (rotated at their absolute positions when `rope` is given)
 * and values for the G KV heads, then for each query head h attends Q_h (t×d_QK, rotated likewise)
 * to the cached K_{g(h)}, V_{g(h)} under the causal mask with offset = previous cache length, and
 * returns concat_col(Y_h) W_O (t×d_out) — the last t rows of full causal `multiHeadAttention`.
 * @param xNew t×d_in, the new tokens.
 * @param weights MHA/GQA weights (G = weights.keys.length KV heads; self-attention, so d_in^KV = d_in).
 * @param cache the layer's {@link DecodeCache} (numKvHeads = G, keyDim = d_QK, valueDim = d_V): the
 *   exact `KVCache` or any compressed cache; its `step` appends and attends.
 * @param options kernel, maskForm, onEmptyRow, algorithm ("materialized" | "streaming"), blockSize,
 *   rope, queryPositions = the new tokens' positions (default prev … prev + t − 1). `mask` and
 *   `keyPositions` are refused.
 * @throws ShapeError when weights, cache and xNew disagree; ValueError on non-divisible head counts
 *   or a refused option; NonFiniteError on NaN/±Inf (weights named by their first bad entry);
 *   NumericalError when a projection overflows. Argument errors leave the cache unchanged.
 */
export function multiHeadDecode(xNew: Matrix, weights: MultiHeadWeights, cache: DecodeCache, options: MultiHeadOptions = {}): Matrix {
  const shape = multiHeadShape(weights);
  if (shape.dInKV !== shape.dIn) {
    throw new ShapeError(
      "weights.keys[0]",
      `${shape.dIn}×d_QK (self-attention decoding: rows = d_in = ${shape.dIn})`,
      weights.keys[0].shape,
    );
  }
  checkDecodeCache(cache);
  if (cache.numKvHeads !== shape.numKvHeads || cache.keyDim !== shape.headDim || cache.valueDim !== shape.valueDim) {
    throw new ShapeError(
      "cache",
      `numKvHeads ${shape.numKvHeads}, keyDim ${shape.headDim}, valueDim ${shape.valueDim} (from weights)`,
      `numKvHeads ${cache.numKvHeads}, keyDim ${cache.keyDim}, valueDim ${cache.valueDim}`,
    );
  }
  checkSequence(xNew, "xNew", shape.dIn, "cols = d_in = weights.queries[0].rows");
  // W_O is used only after the append, so it is scanned here to keep a rejected call from touching
  // the cache; W_Q, W_K, W_V are checked through their products (projectFinite) before the append.
  assertFinite(weights.output, "weights.output");
  const prev = cache.length;
  const base = decodeAttentionOptions(options);
  const { rope } = options;
  let positions: ArrayLike<number> | undefined;
  if (rope) {
    checkRotation(rope);
    checkRope(rope, shape.headDim, "d_QK");
    positions = resolvePositions(options.queryPositions, xNew.rows, prev, "options.queryPositions");
  }
  // The cache refuses a step whose rotation differs from the one it was filled with (issue 9).
  const fill: PositionalFill = {
    rotation: rotationSignature(rope),
    positions:
      positions ??
      resolvePositions(
        options.queryPositions,
        xNew.rows,
        cache.fill ? Math.floor(cache.fill.lastPosition) + 1 : prev,
        "options.queryPositions",
      ),
  };
  const rotate = (m: Matrix) => (rope && positions ? rope.apply(m, positions) : m);
  const queries = weights.queries.map((w, h) => rotate(projectFinite(xNew, w, `weights.queries[${h}]`)));
  const newKeys = weights.keys.map((w, g) => rotate(projectFinite(xNew, w, `weights.keys[${g}]`)));
  const newValues = weights.values.map((w, g) => projectFinite(xNew, w, `weights.values[${g}]`));
  const { outputs } = cache.step({ queries, keys: newKeys, values: newValues, fill, attention: base });
  return matmul(concatCols(outputs), weights.output);
}

/**
 * One decoding step of multi-head latent attention with a latent cache, in merged form (§4.2):
 * appends L_new = xNew W_L (and, with decoupled RoPE, the shared rotary key xNew W_KR rotated at
 * the new tokens' absolute positions) to the cache, then attends L_Q W_LQK^h [| q_R,h R] to the
 * cached [L | k_R R] with values L and returns concat_col(Z_h⁻¹ A_h L) W_LO — K_h and V_h are never
 * formed, and the cache holds d_L (+ d_R) floats per token.
 * @param xNew t×d_in, the new tokens.
 * @param merged merged MLA weights (`mergeMla`).
 * @param cache latent cache with latentDim = d_L and ropeDim = d_R (0 without a rotary part); appended to.
 * @param options kernel (softmax scale default `merged.scale`), maskForm, onEmptyRow, algorithm,
 *   blockSize, rope (decoupled part only), queryPositions (default prev + i). `mask` and
 *   `keyPositions` are refused.
 * @throws ShapeError when weights, cache and xNew disagree; ValueError on naive RoPE or a refused
 *   option; NonFiniteError on NaN/±Inf. Argument errors leave the cache unchanged.
 */
export function mlaDecode(xNew: Matrix, merged: MergedMla, cache: LatentDecodeCache, options: MlaOptions = {}): Matrix {
  const dims = mergedMlaDimensions(merged);
  checkLatentCache(cache);
  if (cache.latentDim !== dims.latentDim || cache.ropeDim !== dims.ropeDim) {
    throw new ShapeError(
      "cache",
      `latentDim ${dims.latentDim}, ropeDim ${dims.ropeDim} (from merged weights)`,
      `latentDim ${cache.latentDim}, ropeDim ${cache.ropeDim}`,
    );
  }
  checkSequence(xNew, "xNew", dims.dIn, "cols = d_in = merged.queryDown.rows");
  const prev = cache.length;
  const base = { ...decodeAttentionOptions(options), mask: { kind: "causal" as const, offset: prev } };
  const { rope } = options;
  if (rope && dims.ropeDim === 0) throw naiveRopeError();
  let positions: ArrayLike<number> | undefined;
  if (rope) {
    checkRope(rope, dims.ropeDim, "the decoupled rotary width d_R = merged.keyRope.cols");
    positions = resolvePositions(options.queryPositions, xNew.rows, prev, "options.queryPositions");
  }
  let rotaryKeys: Matrix | undefined;
  if (merged.keyRope) {
    rotaryKeys = matmul(xNew, merged.keyRope);
    if (rope && positions) rotaryKeys = rope.apply(rotaryKeys, positions);
  }
  const fill: PositionalFill = {
    rotation: rotationSignature(rope),
    positions:
      positions ??
      resolvePositions(
        options.queryPositions,
        xNew.rows,
        cache.fill ? Math.floor(cache.fill.lastPosition) + 1 : prev,
        "options.queryPositions",
      ),
  };
  cache.append(matmul(xNew, merged.latentDown), rotaryKeys, fill);
  return attendMergedLatent(merged, dims, matmul(xNew, merged.queryDown), cache.latent(), cache.rotaryKeys(), positions, {
    ...base,
    rope,
  });
}
