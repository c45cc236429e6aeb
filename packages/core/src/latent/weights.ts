/**
 * Multi-head latent attention weights (paper §4.2, DeepSeek-V2 [Dee+24]).
 *
 * The full projections are factorized through low-dimensional latents:
 *   W_Q = W_LQ (W_LQQ^1 … W_LQQ^H),  W_K = W_L (W_LK^1 … W_LK^H),  W_V = W_L (W_LV^1 … W_LV^H),
 * so the only per-token state the keys and values need is the shared latent L = X W_L (N_KV×d_L).
 * Value weights follow the ERRATA: V_h = L W_LV^h with W_LV^h ∈ R^{d_L×d_V} (not the notes' transpose).
 * The optional decoupled RoPE part (DeepSeek-V2 §2.1.3) adds per-head rotary queries
 * q_R,h = L_Q W_QR^h (d_LQ×d_R each) and one rotary key k_R = X W_KR (d_in×d_R) shared by all heads.
 */
import { ShapeError, ValueError } from "../errors.js";
import { type RMSNormParams, assertNormParams } from "../norm.js";
import type { Matrix } from "../matrix.js";
import { initWeight } from "../random/init.js";
import { type SeedKey, derive } from "../random/stream.js";
import { assertFinite, assertInteger, assertMatrix, assertNonEmpty, assertShape } from "../validate.js";

/** MLA weights in factorized (unmerged) form. Names follow §4.2; shapes in the field docs. */
export interface MlaWeights {
  /** W_LQ ∈ R^{d_in×d_LQ}: query down-projection, L_Q = X_Q W_LQ. */
  queryDown: Matrix;
  /** W_LQQ^h ∈ R^{d_LQ×d_head}, one per head: Q_h = L_Q W_LQQ^h. */
  queryUp: Matrix[];
  /** W_L ∈ R^{d_in×d_L}: the shared latent L = X W_L (the only cached key/value state). */
  latentDown: Matrix;
  /** W_LK^h ∈ R^{d_L×d_head}, one per head: K_h = L W_LK^h. */
  keyUp: Matrix[];
  /** W_LV^h ∈ R^{d_L×d_V}, one per head: V_h = L W_LV^h (ERRATA). */
  valueUp: Matrix[];
  /** W_O ∈ R^{H·d_V×d_out}: Y = concat_col(Y_h) W_O. */
  output: Matrix;
  /** Decoupled RoPE: W_QR^h ∈ R^{d_LQ×d_R} per head, q_R,h = L_Q W_QR^h. Present iff `keyRope` is. */
  queryRope?: Matrix[];
  /** Decoupled RoPE: W_KR ∈ R^{d_in×d_R}, the rotary key k_R = X W_KR shared by all heads. */
  keyRope?: Matrix;
  /**
   * RMSNorm on the query latent, L_Q = RMSNorm(X_Q W_LQ) — DeepSeek-V2's `q_a_layernorm`, which
   * §4.2 leaves out (a documented extension; it acts row-wise on L_Q, so merging stays exact).
   * @default undefined (none)
   */
  queryNorm?: RMSNormParams;
  /**
   * RMSNorm on the key/value latent, L = RMSNorm(X W_L) — DeepSeek-V2's `kv_a_layernorm` (a
   * documented extension of §4.2; the cache stores the normalized L). @default undefined (none)
   */
  latentNorm?: RMSNormParams;
}

/** Sizes of an MLA, read off (and checked against) its weights. */
export interface MlaDimensions {
  /** d_in */
  dIn: number;
  /** N_heads = H */
  numHeads: number;
  /** d_LQ, the query latent width. */
  queryLatentDim: number;
  /** d_L, the key/value latent width (floats cached per token without RoPE). */
  latentDim: number;
  /** d_head = d_QK of the latent part. */
  headDim: number;
  /** d_V */
  valueDim: number;
  /** d_out */
  dOut: number;
  /** d_R, width of the decoupled rotary part (0 when absent). */
  ropeDim: number;
}

/** Configuration of {@link initMlaWeights}. */
export interface MlaConfig {
  /** Model width d_in. */
  dIn: number;
  /** Number of heads H. */
  numHeads: number;
  /** Key/value latent width d_L. */
  latentDim: number;
  /** Query latent width d_LQ. */
  queryLatentDim: number;
  /** Per-head query/key width d_head (= d_QK). */
  headDim: number;
  /** Per-head value width d_V. @default headDim */
  valueDim?: number;
  /** Output width d_out. @default dIn */
  dOut?: number;
  /** Width d_R of the decoupled rotary part; 0 means no rotary part. Must be even when > 0. @default 0 */
  ropeDim?: number;
}

/**
 * Seeded MLA weights, every matrix N(0, 1/fan_in) (LeCun normal) from its own stream
 * `(seed, "mla", name[, head])`, so adding the rotary part never changes the other weights.
 * @param config sizes; see {@link MlaConfig}.
 * @param seed seed key.
 * @throws ValueError on non-positive or non-integer sizes, or an odd `ropeDim`.
 */
export function initMlaWeights(config: MlaConfig, seed: SeedKey): MlaWeights {
  if (config === null || typeof config !== "object") throw new ValueError("config", "an MlaConfig object", String(config));
  const { dIn, numHeads, latentDim, queryLatentDim, headDim } = config;
  assertInteger(dIn, "config.dIn");
  assertInteger(numHeads, "config.numHeads");
  assertInteger(latentDim, "config.latentDim");
  assertInteger(queryLatentDim, "config.queryLatentDim");
  assertInteger(headDim, "config.headDim");
  const valueDim = config.valueDim ?? headDim;
  const dOut = config.dOut ?? dIn;
  const ropeDim = config.ropeDim ?? 0;
  assertInteger(valueDim, "config.valueDim");
  assertInteger(dOut, "config.dOut");
  assertInteger(ropeDim, "config.ropeDim", 0);
  if (ropeDim % 2 !== 0) throw new ValueError("config.ropeDim", "an even width (RoPE rotates coordinate pairs)", String(ropeDim));
  const k = derive(seed, "mla");
  const heads = (name: string, rows: number, cols: number) =>
    Array.from({ length: numHeads }, (_, h) => initWeight(rows, cols, {}, derive(k, name, h)));
  const weights: MlaWeights = {
    queryDown: initWeight(dIn, queryLatentDim, {}, derive(k, "queryDown")),
    queryUp: heads("queryUp", queryLatentDim, headDim),
    latentDown: initWeight(dIn, latentDim, {}, derive(k, "latentDown")),
    keyUp: heads("keyUp", latentDim, headDim),
    valueUp: heads("valueUp", latentDim, valueDim),
    output: initWeight(numHeads * valueDim, dOut, {}, derive(k, "output")),
  };
  if (ropeDim > 0) {
    weights.queryRope = heads("queryRope", queryLatentDim, ropeDim);
    weights.keyRope = initWeight(dIn, ropeDim, {}, derive(k, "keyRope"));
  }
  return weights;
}

/** Checks a per-head list: an array of `numHeads` finite matrices of the given shape. */
export function checkHeads(list: unknown, argument: string, numHeads: number, rows: number, cols: number | undefined, why: string): void {
  if (!Array.isArray(list)) throw new ShapeError(argument, `an array of ${numHeads} matrices (one per head)`, typeof list);
  if (list.length !== numHeads) throw new ShapeError(argument, `${numHeads} matrices (one per head)`, `${list.length}`);
  list.forEach((m, h) => {
    assertShape(m, `${argument}[${h}]`, rows, cols, why);
    assertFinite(m, `${argument}[${h}]`);
  });
}

/**
 * Reads the sizes of an MLA off its weights and checks every shape against them (and that all
 * entries are finite).
 * @throws ShapeError naming the first inconsistent weight; NonFiniteError on NaN/±Inf.
 */
export function mlaDimensions(weights: MlaWeights, argument = "weights"): MlaDimensions {
  if (weights === null || typeof weights !== "object") throw new ValueError(argument, "an MlaWeights object", String(weights));
  assertMatrix(weights.queryDown, `${argument}.queryDown`);
  assertNonEmpty(weights.queryDown, `${argument}.queryDown`);
  assertFinite(weights.queryDown, `${argument}.queryDown`);
  const dIn = weights.queryDown.rows;
  const queryLatentDim = weights.queryDown.cols;
  assertShape(weights.latentDown, `${argument}.latentDown`, dIn, undefined, "rows = d_in = queryDown.rows");
  assertNonEmpty(weights.latentDown, `${argument}.latentDown`);
  assertFinite(weights.latentDown, `${argument}.latentDown`);
  const latentDim = weights.latentDown.cols;
  if (!Array.isArray(weights.queryUp) || weights.queryUp.length === 0) {
    throw new ShapeError(`${argument}.queryUp`, "a non-empty array of per-head matrices", describeList(weights.queryUp));
  }
  const numHeads = weights.queryUp.length;
  assertMatrix(weights.queryUp[0], `${argument}.queryUp[0]`);
  const headDim = weights.queryUp[0].cols;
  checkHeads(weights.queryUp, `${argument}.queryUp`, numHeads, queryLatentDim, headDim, "d_LQ×d_head");
  checkHeads(weights.keyUp, `${argument}.keyUp`, numHeads, latentDim, headDim, "d_L×d_head");
  if (!Array.isArray(weights.valueUp) || weights.valueUp.length === 0) {
    throw new ShapeError(`${argument}.valueUp`, `an array of ${numHeads} matrices (one per head)`, describeList(weights.valueUp));
  }
  assertMatrix(weights.valueUp[0], `${argument}.valueUp[0]`);
  const valueDim = weights.valueUp[0].cols;
  checkHeads(weights.valueUp, `${argument}.valueUp`, numHeads, latentDim, valueDim, "d_L×d_V");
  assertShape(weights.output, `${argument}.output`, numHeads * valueDim, undefined, "rows = H·d_V");
  assertNonEmpty(weights.output, `${argument}.output`);
  assertFinite(weights.output, `${argument}.output`);
  const ropeDim = checkRopePart(weights.queryRope, weights.keyRope, argument, numHeads, queryLatentDim, dIn);
  if (weights.queryNorm !== undefined) assertNormParams(weights.queryNorm, `${argument}.queryNorm`, queryLatentDim);
  if (weights.latentNorm !== undefined) assertNormParams(weights.latentNorm, `${argument}.latentNorm`, latentDim);
  if (headDim === 0 || valueDim === 0) {
    throw new ShapeError(`${argument}.queryUp/valueUp`, "d_head ≥ 1 and d_V ≥ 1", `d_head = ${headDim}, d_V = ${valueDim}`);
  }
  return { dIn, numHeads, queryLatentDim, latentDim, headDim, valueDim, dOut: weights.output.cols, ropeDim };
}

/** Validates the optional decoupled rotary part (both or neither) and returns d_R (0 when absent). */
export function checkRopePart(
  queryRope: Matrix[] | undefined,
  keyRope: Matrix | undefined,
  argument: string,
  numHeads: number,
  queryLatentDim: number,
  dIn: number,
): number {
  if (queryRope === undefined && keyRope === undefined) return 0;
  if (queryRope === undefined || keyRope === undefined) {
    const missing = queryRope === undefined ? "queryRope" : "keyRope";
    throw new ShapeError(`${argument}.${missing}`, "present (the decoupled rotary part needs both queryRope and keyRope)", "undefined");
  }
  assertShape(keyRope, `${argument}.keyRope`, dIn, undefined, "rows = d_in");
  assertFinite(keyRope, `${argument}.keyRope`);
  const ropeDim = keyRope.cols;
  if (ropeDim === 0 || ropeDim % 2 !== 0) {
    throw new ShapeError(`${argument}.keyRope`, "an even, non-zero rotary width d_R", keyRope.shape);
  }
  checkHeads(queryRope, `${argument}.queryRope`, numHeads, queryLatentDim, ropeDim, "d_LQ×d_R, d_R = keyRope.cols");
  return ropeDim;
}

function describeList(v: unknown): string {
  return Array.isArray(v) ? `array of length ${v.length}` : typeof v;
}
