/**
 * Floats stored by an attention layer: weights (Table 1 of Serret (2026), GQA substitution from
 * §4.1, MLA factorization from §4.2) and the KV cache (study notes, "Memory comparison":
 * MHA 2·N_heads·d_head, GQA 2·G·d_head, MLA d_L per token and layer; ERRATA: + d_R for the
 * decoupled rotary key).
 *
 * Everything counts scalars ("floats"); bytes come from `bytesPerElement` of a storage dtype.
 * Counts are exact integers up to 2^53 (9·10^15), far beyond any real model.
 */
import { ValueError } from "../errors.js";
import { assertInteger, assertOneOf, assertOptions } from "../validate.js";
import { type AttentionSpec, resolveAttentionSpec } from "./spec.js";

/** Which MLA weights are stored: the factors (W_LQQ, W_LK, W_LV, W_O) or the merged ones (W_LQK, W_LO). */
export type MlaWeightForm = "unmerged" | "merged";

/** One stored weight matrix (or stack of per-head matrices). */
export interface WeightTerm {
  /** The paper's name, e.g. `"W_Q"`, `"W_LQK"`. */
  readonly name: string;
  /** Dimensions, e.g. `[d_in, d_QK, N_heads]` as in Table 1. */
  readonly dims: readonly number[];
  /** Product of `dims`. */
  readonly floats: number;
}

/** Weight floats of one attention layer, term by term. */
export interface WeightBreakdown {
  readonly terms: readonly WeightTerm[];
  readonly total: number;
}

export interface WeightAccountingOptions {
  /** MLA only: store the factors or the merged weights (§4.2). Ignored for MHA/GQA/MQA. @default "unmerged" */
  mlaForm?: MlaWeightForm;
}

function term(name: string, ...dims: number[]): WeightTerm {
  return { name, dims, floats: dims.reduce((a, b) => a * b, 1) };
}

/**
 * The projection weights of one attention layer (no biases, no norms), term by term.
 *
 * MHA/GQA/MQA (Table 1, with N_heads → G for W_K, W_V): W_Q d_in×d_QK×H, W_K d_in×d_QK×G,
 * W_V d_in×d_V×G, W_O H·d_V×d_out.
 * MLA unmerged (§4.2): W_LQ d_in×d_LQ and W_LQQ d_LQ×d_QK×H (or W_Q when d_LQ = 0), W_L d_in×d_L,
 * W_LK d_L×d_QK×H, W_LV d_L×d_V×H, W_O. MLA merged: W_LQ, W_LQK^h = W_LQQ^h (W_LK^h)ᵀ d_LQ×d_L×H,
 * W_L, W_LO = blockdiag(W_LV^h) W_O of H·d_L×d_out. Decoupled RoPE adds W_QR (d_LQ or d_in)×d_R×H
 * and the shared rotary-key projection W_KR d_in×d_R.
 */
export function attentionWeightBreakdown(spec: AttentionSpec, options: WeightAccountingOptions = {}): WeightBreakdown {
  assertOptions(options, "options");
  const s = resolveAttentionSpec(spec);
  const mlaForm = options.mlaForm ?? "unmerged";
  assertOneOf(mlaForm, "options.mlaForm", ["unmerged", "merged"] as const);
  const { dIn, dOut, numHeads: H, numKvHeads: G, headDim: dQK, valueDim: dV } = s;
  const terms: WeightTerm[] = [];
  if (s.form !== "mla") {
    terms.push(term("W_Q", dIn, dQK, H), term("W_K", dIn, dQK, G), term("W_V", dIn, dV, G), term("W_O", H * dV, dOut));
  } else {
    const { latentDim: dL, queryLatentDim: dLQ, ropeDim: dR } = s;
    // Queries enter through L_Q = X W_LQ when factorized, else straight from X.
    const qIn = dLQ > 0 ? dLQ : dIn;
    if (dLQ > 0) terms.push(term("W_LQ", dIn, dLQ));
    if (mlaForm === "unmerged") {
      terms.push(term(dLQ > 0 ? "W_LQQ" : "W_Q", qIn, dQK, H));
      terms.push(term("W_L", dIn, dL), term("W_LK", dL, dQK, H), term("W_LV", dL, dV, H), term("W_O", H * dV, dOut));
    } else {
      terms.push(term("W_LQK", qIn, dL, H), term("W_L", dIn, dL), term("W_LO", H * dL, dOut));
    }
    if (dR > 0) terms.push(term("W_QR", qIn, dR, H), term("W_KR", dIn, dR));
  }
  return { terms, total: terms.reduce((a, t) => a + t.floats, 0) };
}

/** Total projection-weight floats of one attention layer (see `attentionWeightBreakdown`). */
export function attentionWeightFloats(spec: AttentionSpec, options: WeightAccountingOptions = {}): number {
  return attentionWeightBreakdown(spec, options).total;
}

/** KV-cache floats per token and layer, by part. */
export interface CacheBreakdown {
  /** Cached keys: G·d_QK (0 for MLA). */
  readonly keys: number;
  /** Cached values: G·d_V (0 for MLA). */
  readonly values: number;
  /** Cached latent: d_L (0 unless MLA). */
  readonly latent: number;
  /** Cached shared rotary key: d_R (0 unless decoupled-RoPE MLA). */
  readonly rotaryKey: number;
  /** keys + values + latent + rotaryKey. */
  readonly total: number;
}

/** Floats cached per token per layer, by part (notes: MHA 2·H·d_head, GQA 2·G·d_head, MLA d_L [+ d_R]). */
export function kvCacheBreakdown(spec: AttentionSpec): CacheBreakdown {
  const s = resolveAttentionSpec(spec);
  const keys = s.numKvHeads * s.headDim;
  const values = s.numKvHeads * s.valueDim;
  const latent = s.latentDim;
  const rotaryKey = s.ropeDim;
  return { keys, values, latent, rotaryKey, total: keys + values + latent + rotaryKey };
}

export interface CacheAccountingOptions {
  /**
   * MLA with decoupled RoPE: count the cached rotary key (d_R) next to the latent. Table 3's 512
   * for DeepSeek-V2 is the latent only; with the rotary key it is 576 (ERRATA). @default true
   */
  includeRotaryKey?: boolean;
}

/** KV-cache floats per token per layer: MHA H·(d_QK + d_V), GQA G·(d_QK + d_V), MQA d_QK + d_V, MLA d_L (+ d_R).
 * @example
 * ```ts
 * import { DEEPSEEK_V2, LLAMA3_70B, kvCacheFloatsPerToken } from "@randattn/core";
 *
 * console.log(kvCacheFloatsPerToken(LLAMA3_70B.attention)); // 2048 = 2·8·128 (GQA)
 * console.log(kvCacheFloatsPerToken(DEEPSEEK_V2.attention, { includeRotaryKey: false })); // 512 (the latent)
 * ```
 */
export function kvCacheFloatsPerToken(spec: AttentionSpec, options: CacheAccountingOptions = {}): number {
  assertOptions(options, "options");
  const b = kvCacheBreakdown(spec);
  const includeRotaryKey = options.includeRotaryKey ?? true;
  if (typeof includeRotaryKey !== "boolean") throw new ValueError("options.includeRotaryKey", "a boolean", String(includeRotaryKey));
  return includeRotaryKey ? b.total : b.total - b.rotaryKey;
}

/**
 * The per-token-per-layer cache the same layer would need as plain MHA: H·(d_QK + d_V)
 * (2·H·d_head when d_QK = d_V). For DeepSeek-V2: 2·128·128 = 32,768 versus its 512-float latent.
 */
export function mhaEquivalentCacheFloatsPerToken(spec: AttentionSpec): number {
  const s = resolveAttentionSpec(spec);
  return s.numHeads * (s.headDim + s.valueDim);
}

/**
 * Table 1's total for one layer holding `numTokens` (N_KV) cached tokens: cache + weights.
 * For MHA: N_heads·N_KV·(d_QK + d_head) + 2·N_heads·d_in·d_QK + N_heads·d_head·(d_in + d_out).
 */
export function attentionLayerFloats(
  spec: AttentionSpec,
  numTokens: number,
  options: WeightAccountingOptions & CacheAccountingOptions = {},
): number {
  assertInteger(numTokens, "numTokens", 0);
  return numTokens * kvCacheFloatsPerToken(spec, options) + attentionWeightFloats(spec, options);
}

export interface ModelCacheOptions extends CacheAccountingOptions {
  /** Independent sequences cached side by side. @default 1 */
  batchSize?: number;
}

/** Whole-model KV-cache floats: batchSize · numTokens · numLayers · (floats per token per layer). */
export function modelKvCacheFloats(spec: AttentionSpec, numTokens: number, numLayers: number, options: ModelCacheOptions = {}): number {
  assertOptions(options, "options");
  assertInteger(numTokens, "numTokens", 0);
  assertInteger(numLayers, "numLayers");
  const batchSize = options.batchSize ?? 1;
  assertInteger(batchSize, "options.batchSize");
  return batchSize * numTokens * numLayers * kvCacheFloatsPerToken(spec, options);
}

/** Storage dtypes for byte counts. */
export type StorageDtype = "float64" | "float32" | "float16" | "bfloat16" | "float8" | "int8" | "int4";

const DTYPE_BYTES: Readonly<Record<StorageDtype, number>> = {
  float64: 8,
  float32: 4,
  float16: 2,
  bfloat16: 2,
  float8: 1,
  int8: 1,
  int4: 0.5,
};

/** Bytes per stored scalar of a dtype (int4: 0.5). */
export function bytesPerElement(dtype: StorageDtype): number {
  assertOneOf(dtype, "dtype", Object.keys(DTYPE_BYTES) as StorageDtype[]);
  return DTYPE_BYTES[dtype];
}

/** Whole-model KV-cache bytes in `dtype`. @default dtype "bfloat16" (the serving precision of all three presets). */
export function modelKvCacheBytes(
  spec: AttentionSpec,
  numTokens: number,
  numLayers: number,
  dtype: StorageDtype = "bfloat16",
  options: ModelCacheOptions = {},
): number {
  const perElement = bytesPerElement(dtype);
  return modelKvCacheFloats(spec, numTokens, numLayers, options) * perElement;
}
