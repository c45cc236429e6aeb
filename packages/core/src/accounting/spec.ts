/**
 * Attention shapes for memory and cost accounting (Tables 1–3 of Serret (2026) and the study
 * notes). An `AttentionSpec` describes one attention layer by its dimensions only — no weights —
 * so the accounting can be run for 70B-parameter models without allocating anything.
 *
 * Names follow the paper: d_in, d_out, N_heads (numHeads), G (numKvHeads), d_QK (headDim),
 * d_head = d_V (valueDim), d_L (latentDim), d_LQ (queryLatentDim), d_R (ropeDim).
 */
import { ValueError } from "../errors.js";
import { assertInteger, assertOneOf, describe } from "../validate.js";

/** The attention forms accounted for: §2.2 MHA, §4.1 GQA / MQA, §4.2 MLA. */
export type AttentionForm = "mha" | "gqa" | "mqa" | "mla";

/** Multi-head attention with full, grouped (G KV heads) or single (MQA) key/value heads. */
export interface MultiHeadSpec {
  form: "mha" | "gqa" | "mqa";
  /** Input dimension d_in. */
  dIn: number;
  /** Output dimension d_out. @default dIn */
  dOut?: number;
  /** Number of query heads N_heads. */
  numHeads: number;
  /**
   * Number of key/value heads G. Required for "gqa" (a divisor of numHeads); must equal numHeads
   * for "mha" and 1 for "mqa" when given. @default numHeads for "mha", 1 for "mqa"
   */
  numKvHeads?: number;
  /** Query/key dimension per head d_QK. */
  headDim: number;
  /** Value dimension per head d_head = d_V. @default headDim */
  valueDim?: number;
}

/** Multi-head latent attention (DeepSeek-V2, §4.2): K and V share the cached latent L = X W_L. */
export interface LatentSpec {
  form: "mla";
  /** Input dimension d_in. */
  dIn: number;
  /** Output dimension d_out. @default dIn */
  dOut?: number;
  /** Number of query heads N_heads (every head reads the one shared latent). */
  numHeads: number;
  /** Query/key dimension per head d_QK (the non-rotary part in DeepSeek-V2). */
  headDim: number;
  /** Value dimension per head d_V. @default headDim */
  valueDim?: number;
  /** Latent dimension d_L of the cached L = X W_L. */
  latentDim: number;
  /** Query latent dimension d_LQ (W_Q = W_LQ W_LQQ); 0 = queries not factorized. @default 0 */
  queryLatentDim?: number;
  /**
   * Decoupled-RoPE dimension d_R: a rotary query part per head and one shared rotary key per
   * token, cached next to the latent (ERRATA: DeepSeek-V2 caches 512 + 64 = 576). 0 = none. @default 0
   */
  ropeDim?: number;
}

/** One attention layer's dimensions. */
export type AttentionSpec = MultiHeadSpec | LatentSpec;

/** A spec with every default filled in and every value checked. */
export interface ResolvedAttentionSpec {
  readonly form: AttentionForm;
  readonly dIn: number;
  readonly dOut: number;
  /** N_heads. */
  readonly numHeads: number;
  /** G (numHeads for MHA, 1 for MQA, 0 for MLA which has no per-head K/V cache). */
  readonly numKvHeads: number;
  /** d_QK. */
  readonly headDim: number;
  /** d_V = d_head. */
  readonly valueDim: number;
  /** d_L (0 unless MLA). */
  readonly latentDim: number;
  /** d_LQ (0 = queries not factorized). */
  readonly queryLatentDim: number;
  /** d_R (0 = no decoupled rotary part). */
  readonly ropeDim: number;
}

const FORMS: readonly AttentionForm[] = ["mha", "gqa", "mqa", "mla"];

/**
 * Checks an `AttentionSpec` and fills its defaults.
 * @throws ValueError naming the field (e.g. `spec.numKvHeads`) on a non-integer, non-positive or
 *   inconsistent value (GQA numKvHeads not dividing numHeads, MHA numKvHeads ≠ numHeads…).
 */
export function resolveAttentionSpec(spec: AttentionSpec, argument = "spec"): ResolvedAttentionSpec {
  if (spec === null || typeof spec !== "object") throw new ValueError(argument, "an AttentionSpec object", describe(spec));
  assertOneOf(spec.form, `${argument}.form`, FORMS);
  assertInteger(spec.dIn, `${argument}.dIn`);
  const dOut = spec.dOut ?? spec.dIn;
  assertInteger(dOut, `${argument}.dOut`);
  assertInteger(spec.numHeads, `${argument}.numHeads`);
  assertInteger(spec.headDim, `${argument}.headDim`);
  const valueDim = spec.valueDim ?? spec.headDim;
  assertInteger(valueDim, `${argument}.valueDim`);
  const H = spec.numHeads;
  if (spec.form === "mla") {
    assertInteger(spec.latentDim, `${argument}.latentDim`);
    const queryLatentDim = spec.queryLatentDim ?? 0;
    assertInteger(queryLatentDim, `${argument}.queryLatentDim`, 0);
    const ropeDim = spec.ropeDim ?? 0;
    assertInteger(ropeDim, `${argument}.ropeDim`, 0);
    return {
      form: "mla",
      dIn: spec.dIn,
      dOut,
      numHeads: H,
      numKvHeads: 0,
      headDim: spec.headDim,
      valueDim,
      latentDim: spec.latentDim,
      queryLatentDim,
      ropeDim,
    };
  }
  let G: number;
  if (spec.form === "mha") {
    G = spec.numKvHeads ?? H;
    if (G !== H)
      throw new ValueError(`${argument}.numKvHeads`, `numHeads = ${H} for form "mha" (use form "gqa" to share KV heads)`, describe(G));
  } else if (spec.form === "mqa") {
    G = spec.numKvHeads ?? 1;
    if (G !== 1) throw new ValueError(`${argument}.numKvHeads`, `1 for form "mqa"`, describe(G));
  } else {
    if (spec.numKvHeads === undefined)
      throw new ValueError(`${argument}.numKvHeads`, `an integer G dividing numHeads = ${H} for form "gqa"`, "undefined");
    G = spec.numKvHeads;
    assertInteger(G, `${argument}.numKvHeads`, 1, H);
    // §4.1 / notes: group size s = H/G must be an integer (g(h) = ⌊h/s⌋).
    if (H % G !== 0) throw new ValueError(`${argument}.numKvHeads`, `a divisor of numHeads = ${H}`, String(G));
  }
  return {
    form: spec.form,
    dIn: spec.dIn,
    dOut,
    numHeads: H,
    numKvHeads: G,
    headDim: spec.headDim,
    valueDim,
    latentDim: 0,
    queryLatentDim: 0,
    ropeDim: 0,
  };
}
