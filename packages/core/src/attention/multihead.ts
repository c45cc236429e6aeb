/**
 * Multi-head attention (Serret 2026, §2.2) and its grouped-query variants (§4.1, study notes):
 *   Q_h = X_Q W_Q^h (h = 0…H−1),  K_g = X_KV W_K^g,  V_g = X_KV W_V^g (g = 0…G−1),
 *   Y_h = Z_h⁻¹ A_h V_{g(h)} with A_h = κ(Q_h K_{g(h)}ᵀ),   Y = concat_col(Y_0, …, Y_{H−1}) W_O.
 * Every head projects the same full X — heads differ by their weights only; X is never split
 * (study notes, after Vaswani et al. §3.2.2). G = H is MHA, G = 1 is MQA, and in between GQA with the
 * 0-based contiguous group map g(h) = ⌊h / (H/G)⌋ (ERRATA; PyTorch's `enable_gqa`), not h mod G.
 * An optional positional rotation (RoPE, position/) is applied to each Q_h and K_g after projection.
 */
import { ShapeError, ValueError } from "../errors.js";
import { Matrix } from "../matrix.js";
import { matmulInto } from "../linalg/matmul.js";
import { concatCols } from "../linalg/ops.js";
import { initWeight } from "../random/init.js";
import { type SeedKey, derive } from "../random/stream.js";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertShape, describe } from "../validate.js";
import { type ProjectedAttentionOptions, project, runAttention } from "./projection.js";

/**
 * A position-dependent rotation of the rows of a matrix (RoPE: row t of x multiplied by R_{p_t}).
 * Implemented by position/rope.ts; `apply` must return a new matrix of the same shape.
 */
export interface PositionalRotation {
  apply(x: Matrix, positions: ArrayLike<number>): Matrix;
}

/**
 * Weights of multi-head / grouped-query attention.
 * `queries[h]`: d_in×d_QK (H of them); `keys[g]`, `values[g]`: d_in^KV×d_QK and d_in^KV×d_V
 * (G = numKvHeads of them, G divides H); `output`: H·d_V×d_out (W_O).
 */
export interface MultiHeadWeights {
  queries: Matrix[];
  keys: Matrix[];
  values: Matrix[];
  output: Matrix;
}

/** Options of `multiHeadAttention`: per-head attention options plus positions and rotation. */
export interface MultiHeadOptions extends ProjectedAttentionOptions {
  /** Rotation applied to every Q_h and K_g after projection (RoPE). @default undefined (none) */
  rope?: PositionalRotation;
  /** Absolute positions of the query rows. @default offset + i with offset = N_KV − N_Q (ERRATA) */
  queryPositions?: ArrayLike<number>;
  /** Absolute positions of the key rows. @default j */
  keyPositions?: ArrayLike<number>;
}

/** The dimensions read off a weight set. */
export interface MultiHeadShape {
  numHeads: number;
  numKvHeads: number;
  /** Input width of the queries' source (rows of W_Q^h). */
  dIn: number;
  /** Input width of the keys/values' source (rows of W_K^g, W_V^g); = dIn for self-attention. */
  dInKV: number;
  headDim: number;
  valueDim: number;
  dOut: number;
}

/**
 * The KV head serving query head h: g(h) = ⌊h / (H/G)⌋, 0-based (contiguous groups of H/G heads).
 * @param head h ∈ [0, H). @param numHeads H ≥ 1. @param numKvHeads G ∈ [1, H], a divisor of H.
 * @throws ValueError when an argument is not an integer in range or G does not divide H.
 */
export function kvHeadFor(head: number, numHeads: number, numKvHeads: number): number {
  checkHeadCounts(numHeads, numKvHeads);
  assertInteger(head, "head", 0, numHeads - 1);
  return Math.floor(head / (numHeads / numKvHeads));
}

function checkHeadCounts(numHeads: unknown, numKvHeads: unknown, prefix = ""): asserts numHeads is number {
  assertInteger(numHeads, `${prefix}numHeads`);
  assertInteger(numKvHeads, `${prefix}numKvHeads`, 1, numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new ValueError(`${prefix}numKvHeads`, `a divisor of numHeads = ${numHeads} (GQA groups of equal size H/G)`, String(numKvHeads));
  }
}

/**
 * Checks a weight set and returns its dimensions.
 * @throws ShapeError on inconsistent shapes or counts; ValueError when G does not divide H.
 */
export function multiHeadShape(weights: MultiHeadWeights): MultiHeadShape {
  if (weights === null || typeof weights !== "object")
    throw new ValueError("weights", "{ queries, keys, values, output }", describe(weights));
  const { queries, keys, values, output } = weights;
  for (const [name, list] of [
    ["weights.queries", queries],
    ["weights.keys", keys],
    ["weights.values", values],
  ] as const) {
    if (!Array.isArray(list) || list.length === 0)
      throw new ShapeError(name, "a non-empty array of matrices (one per head)", describe(list));
  }
  const numHeads = queries.length;
  const numKvHeads = keys.length;
  if (values.length !== numKvHeads) {
    throw new ShapeError("weights.values", `${numKvHeads} matrices (= weights.keys.length)`, `${values.length} matrices`);
  }
  if (numKvHeads > numHeads) {
    throw new ValueError("weights.keys", `at most numHeads = ${numHeads} KV heads`, `${numKvHeads} KV heads`);
  }
  checkHeadCounts(numHeads, numKvHeads, "weights.");
  assertMatrix(queries[0], "weights.queries[0]");
  assertNonEmpty(queries[0], "weights.queries[0]");
  const dIn = queries[0].rows;
  const headDim = queries[0].cols;
  for (let h = 1; h < numHeads; h++) assertShape(queries[h], `weights.queries[${h}]`, dIn, headDim, "same shape as weights.queries[0]");
  assertMatrix(keys[0], "weights.keys[0]");
  const dInKV = keys[0].rows;
  for (let g = 0; g < numKvHeads; g++) assertShape(keys[g], `weights.keys[${g}]`, dInKV, headDim, `${dInKV}×d_QK, d_QK = ${headDim}`);
  assertMatrix(values[0], "weights.values[0]");
  const valueDim = values[0].cols;
  if (valueDim === 0) throw new ShapeError("weights.values[0]", `${dInKV}×d_V with d_V ≥ 1`, values[0].shape);
  for (let g = 0; g < numKvHeads; g++)
    assertShape(values[g], `weights.values[${g}]`, dInKV, valueDim, `rows = weights.keys rows = ${dInKV}`);
  assertShape(output, "weights.output", numHeads * valueDim, undefined, `rows = numHeads·d_V = ${numHeads}·${valueDim}`);
  if (output.cols === 0) throw new ShapeError("weights.output", `${numHeads * valueDim}×d_out with d_out ≥ 1`, output.shape);
  return { numHeads, numKvHeads, dIn, dInKV, headDim, valueDim, dOut: output.cols };
}

/** Default query positions: offset + i with offset = N_KV − N_Q (the queries are the newest tokens). */
export function defaultQueryPositions(nQ: number, nKV: number): Float64Array {
  assertInteger(nQ, "nQ", 0);
  assertInteger(nKV, "nKV", 0);
  const out = new Float64Array(nQ);
  for (let i = 0; i < nQ; i++) out[i] = nKV - nQ + i;
  return out;
}

function checkPositions(p: unknown, n: number, argument: string): ArrayLike<number> {
  if (p === null || typeof p !== "object" || typeof (p as ArrayLike<number>).length !== "number") {
    throw new ValueError(argument, `an array of ${n} positions`, describe(p));
  }
  const a = p as ArrayLike<number>;
  if (a.length !== n) throw new ShapeError(argument, `length ${n}`, `length ${a.length}`);
  assertFinite(a, argument);
  return a;
}

function rotate(rope: PositionalRotation, x: Matrix, positions: ArrayLike<number>, what: string): Matrix {
  const y = rope.apply(x, positions);
  assertShape(y, `options.rope.apply(${what})`, x.rows, x.cols, "same shape as its input");
  return y;
}

/**
 * Multi-head / grouped-query / multi-query attention (§2.2, §4.1):
 * Y = concat_col(Z_h⁻¹ A_h V_{g(h)})_h W_O with per-head projections of the full inputs.
 * GQA when weights.keys.length = G < H (G | H), MQA when G = 1.
 * @param xQ X_Q, N_Q×d_in (queries' source). @param xKV X_KV, N_KV×d_in^KV (keys' and values' source;
 *   pass xQ again for self-attention).
 * @returns Y, N_Q×d_out.
 * @throws ShapeError / ValueError on inconsistent weights, inputs or positions (G ∤ H is a
 *   ValueError), NonFiniteError on NaN/±Inf, and the errors of `attention`.
 * @example
 * ```ts
 * import { multiHeadAttention, randomMatrix } from "@randattn/core";
 *
 * // GQA: 4 query heads share 2 key/value heads (d_in = 16, d_head = 4, d_out = 16).
 * const w = (rows: number, cols: number, tag: string) => randomMatrix(rows, cols, { scale: 1 / Math.sqrt(rows) }, [3, tag]);
 * const weights = {
 *   queries: [0, 1, 2, 3].map((h) => w(16, 4, `q${h}`)),
 *   keys: [0, 1].map((g) => w(16, 4, `k${g}`)),
 *   values: [0, 1].map((g) => w(16, 4, `v${g}`)),
 *   output: w(4 * 4, 16, "o"),
 * };
 * const x = randomMatrix(10, 16, {}, [3, "x"]); // 10 tokens
 * const y = multiHeadAttention(x, x, weights, { mask: { kind: "causal" } });
 * console.log(y.shape); // "10×16"
 * ```
 */
export function multiHeadAttention(xQ: Matrix, xKV: Matrix, weights: MultiHeadWeights, options: MultiHeadOptions = {}): Matrix {
  const shape = multiHeadShape(weights);
  assertMatrix(xQ, "xQ");
  assertNonEmpty(xQ, "xQ");
  assertShape(xQ, "xQ", undefined, shape.dIn, `cols = d_in = weights.queries[0].rows = ${shape.dIn}`);
  assertMatrix(xKV, "xKV");
  assertNonEmpty(xKV, "xKV");
  assertShape(xKV, "xKV", undefined, shape.dInKV, `cols = weights.keys[0].rows = ${shape.dInKV}`);
  if (options === null || typeof options !== "object") throw new ValueError("options", "an options object", describe(options));
  const nQ = xQ.rows;
  const nKV = xKV.rows;
  const rope = options.rope;
  if (rope !== undefined && (rope === null || typeof rope.apply !== "function")) {
    throw new ValueError("options.rope", "a PositionalRotation { apply(x, positions) }", describe(rope));
  }
  const qPos = rope ? checkPositions(options.queryPositions ?? defaultQueryPositions(nQ, nKV), nQ, "options.queryPositions") : undefined;
  const kPos = rope
    ? checkPositions(options.keyPositions ?? Float64Array.from({ length: nKV }, (_, j) => j), nKV, "options.keyPositions")
    : undefined;

  // One K_g, V_g per KV head, shared by the H/G query heads of its group (the GQA saving).
  const keys: Matrix[] = [];
  const values: Matrix[] = [];
  for (let g = 0; g < shape.numKvHeads; g++) {
    const k = project(xKV, weights.keys[g], "xKV", `weights.keys[${g}]`);
    keys.push(rope ? rotate(rope, k, kPos!, `K_${g}`) : k);
    values.push(project(xKV, weights.values[g], "xKV", `weights.values[${g}]`));
  }
  const heads: Matrix[] = [];
  const groupSize = shape.numHeads / shape.numKvHeads;
  for (let h = 0; h < shape.numHeads; h++) {
    const q0 = project(xQ, weights.queries[h], "xQ", `weights.queries[${h}]`);
    const q = rope ? rotate(rope, q0, qPos!, `Q_${h}`) : q0;
    const g = Math.floor(h / groupSize); // kvHeadFor(h, H, G)
    heads.push(runAttention(q, keys[g], values[g], options));
  }
  assertFinite(weights.output, "weights.output");
  const concat = concatCols(heads);
  const out = new Matrix(nQ, shape.dOut);
  matmulInto(concat.data, weights.output.data, out.data, nQ, concat.cols, shape.dOut, false);
  return out;
}

/** Dimensions for `initMultiHeadWeights`. */
export interface MultiHeadInit {
  /** Input width d_in (rows of every W_Q^h, W_K^g, W_V^g). */
  dIn: number;
  /** H, the number of query heads. */
  numHeads: number;
  /** G, the number of KV heads (divides H). @default numHeads (MHA) */
  numKvHeads?: number;
  /** d_QK = d_head. */
  headDim: number;
  /** d_V. @default headDim */
  valueDim?: number;
  /** d_out (columns of W_O). @default dIn */
  dOut?: number;
}

/**
 * Seeded weights N(0, 1/fan_in) (core's `initWeight`), each matrix from its own stream:
 * W_Q^h ← (seed, "query", h), W_K^g ← (seed, "key", g), W_V^g ← (seed, "value", g), W_O ← (seed, "output").
 * @throws ValueError on non-integer or non-positive sizes, or G not dividing H.
 */
export function initMultiHeadWeights(init: MultiHeadInit, seed: SeedKey): MultiHeadWeights {
  if (init === null || typeof init !== "object") throw new ValueError("init", "{ dIn, numHeads, headDim, … }", describe(init));
  const { dIn, numHeads, headDim } = init;
  assertInteger(dIn, "init.dIn");
  assertInteger(numHeads, "init.numHeads");
  assertInteger(headDim, "init.headDim");
  const numKvHeads = init.numKvHeads ?? numHeads;
  checkHeadCounts(numHeads, numKvHeads, "init.");
  const valueDim = init.valueDim ?? headDim;
  assertInteger(valueDim, "init.valueDim");
  const dOut = init.dOut ?? dIn;
  assertInteger(dOut, "init.dOut");
  return {
    queries: Array.from({ length: numHeads }, (_, h) => initWeight(dIn, headDim, {}, derive(seed, "query", h))),
    keys: Array.from({ length: numKvHeads }, (_, g) => initWeight(dIn, headDim, {}, derive(seed, "key", g))),
    values: Array.from({ length: numKvHeads }, (_, g) => initWeight(dIn, valueDim, {}, derive(seed, "value", g))),
    output: initWeight(numHeads * valueDim, dOut, {}, derive(seed, "output")),
  };
}

/**
 * The MHA weight set equivalent to a GQA one: H KV heads where head h carries copies of
 * W_K^{g(h)}, W_V^{g(h)} ("tied" KV heads). Multi-head attention with the result equals GQA with the
 * input — the identity GQA = MHA with tied KV heads (study notes, §4.1). All matrices are copies.
 */
export function tieKvHeads(weights: MultiHeadWeights): MultiHeadWeights {
  const s = multiHeadShape(weights);
  const group = s.numHeads / s.numKvHeads;
  return {
    queries: weights.queries.map((q) => q.clone()),
    keys: Array.from({ length: s.numHeads }, (_, h) => weights.keys[Math.floor(h / group)].clone()),
    values: Array.from({ length: s.numHeads }, (_, h) => weights.values[Math.floor(h / group)].clone()),
    output: weights.output.clone(),
  };
}
