/**
 * Floating-point operation counts of one attention layer and of token-by-token decoding.
 *
 * Conventions (stated because implementations differ):
 * - a matrix product of m×k by k×n costs 2·m·k·n FLOPs (one multiply + one add per term);
 * - attention is materialized: the full N_Q×N_KV score matrix QKᵀ is computed per head, then the
 *   kernel/softmax (`softmaxFlopsPerScore` per score: scale, row max, subtract, exp, row sum),
 *   then A·V, then Y = Z⁻¹(AV) (one division per output entry). A causal mask does not reduce
 *   the count (masked scores are computed and discarded), as in the paper's O(N²) statements;
 * - RoPE rotation costs 3 FLOPs per rotated element (4 multiplications + 2 additions per pair);
 * - the streaming (online-softmax) form does the same arithmetic up to the rescaling, so it is
 *   not counted separately; it differs in memory, not FLOPs.
 */
import { ValueError } from "../errors.js";
import { assertInteger, assertNumber, assertOneOf, assertOptions } from "../validate.js";
import type { MlaWeightForm } from "./memory.js";
import { type AttentionSpec, resolveAttentionSpec } from "./spec.js";

/** FLOPs of one attention layer, term by term. */
export interface FlopBreakdown {
  /** Q (and, for MLA, L_Q and the absorbed Q̃_h = L_Q W_LQK^h, plus the rotary query part). */
  readonly queryProjection: number;
  /** K and V of the new tokens (MHA/GQA/MQA) or their latent L (+ rotary key) (MLA). */
  readonly keyValueProjection: number;
  /** Unmerged MLA only: K_h = L W_LK^h, V_h = L W_LV^h re-formed for every cached token. */
  readonly keyValueUpProjection: number;
  /** QKᵀ over all heads. */
  readonly scores: number;
  /** Kernel / softmax on every score. */
  readonly softmax: number;
  /** A·V (A·L for merged MLA). */
  readonly weightedValues: number;
  /** Z⁻¹ applied to the output rows. */
  readonly normalization: number;
  /** concat(Y_h)·W_O (Y'·W_LO for merged MLA). */
  readonly outputProjection: number;
  /** RoPE rotations (decoupled-RoPE MLA only). */
  readonly rope: number;
  readonly total: number;
}

export interface AttentionFlopOptions {
  /** N_Q: query rows computed. */
  numQueries: number;
  /** N_KV: key/value rows attended to. */
  numKeys: number;
  /**
   * Tokens whose keys/values (or latent) must be projected now; the others come from the cache.
   * numKeys = no cache (full attention); 1 = one decode step with a cache. @default numKeys
   */
  numNewKeys?: number;
  /** MLA only: compute with the factors (re-forming K_h, V_h from the cached latent) or merged (§4.2). @default "unmerged" */
  mlaForm?: MlaWeightForm;
  /** FLOPs charged per score for the kernel and row statistics. @default 5 */
  softmaxFlopsPerScore?: number;
}

/**
 * FLOPs of one attention layer (all heads) computing `numQueries` output rows against `numKeys`
 * keys, of which `numNewKeys` must be projected (the rest are cached).
 */
export function attentionFlops(spec: AttentionSpec, options: AttentionFlopOptions): FlopBreakdown {
  const s = resolveAttentionSpec(spec);
  if (options === null || typeof options !== "object") throw new ValueError("options", "{ numQueries, numKeys }", String(options));
  const nQ = options.numQueries;
  const nK = options.numKeys;
  assertInteger(nQ, "options.numQueries");
  assertInteger(nK, "options.numKeys");
  const nNew = options.numNewKeys ?? nK;
  assertInteger(nNew, "options.numNewKeys", 0, nK);
  const mlaForm = options.mlaForm ?? "unmerged";
  assertOneOf(mlaForm, "options.mlaForm", ["unmerged", "merged"] as const);
  const c = options.softmaxFlopsPerScore ?? 5;
  assertNumber(c, "options.softmaxFlopsPerScore", { min: 0 });

  const { dIn, dOut, numHeads: H, numKvHeads: G, headDim: dQK, valueDim: dV } = s;
  const softmax = c * H * nQ * nK;
  let queryProjection: number;
  let keyValueProjection: number;
  let keyValueUpProjection = 0;
  let scores: number;
  let weightedValues: number;
  let normalization: number;
  let outputProjection: number;
  let rope = 0;
  if (s.form !== "mla") {
    queryProjection = 2 * nQ * dIn * H * dQK;
    keyValueProjection = 2 * nNew * dIn * G * (dQK + dV);
    scores = 2 * H * nQ * nK * dQK;
    weightedValues = 2 * H * nQ * nK * dV;
    normalization = H * nQ * dV;
    outputProjection = 2 * nQ * H * dV * dOut;
  } else {
    const { latentDim: dL, queryLatentDim: dLQ, ropeDim: dR } = s;
    const qIn = dLQ > 0 ? dLQ : dIn;
    const queryLatent = dLQ > 0 ? 2 * nQ * dIn * dLQ : 0;
    const rotaryQuery = 2 * nQ * qIn * H * dR;
    keyValueProjection = 2 * nNew * dIn * (dL + dR); // L = X W_L and the shared rotary key X W_KR
    rope = 3 * (nQ * H * dR + nNew * dR);
    if (mlaForm === "unmerged") {
      queryProjection = queryLatent + 2 * nQ * qIn * H * dQK + rotaryQuery;
      // Only L is cached, so every step rebuilds K_h, V_h for all N_KV tokens: the cost merging removes.
      keyValueUpProjection = 2 * nK * dL * H * (dQK + dV);
      scores = 2 * H * nQ * nK * (dQK + dR);
      weightedValues = 2 * H * nQ * nK * dV;
      normalization = H * nQ * dV;
      outputProjection = 2 * nQ * H * dV * dOut;
    } else {
      // Merged (§4.2): Q̃_h = L_Q W_LQK^h, A_h from Q̃_h Lᵀ, Y' = concat(Z_h⁻¹ A_h L), Y = Y' W_LO.
      queryProjection = queryLatent + 2 * nQ * qIn * H * dL + rotaryQuery;
      scores = 2 * H * nQ * nK * (dL + dR);
      weightedValues = 2 * H * nQ * nK * dL;
      normalization = H * nQ * dL;
      outputProjection = 2 * nQ * H * dL * dOut;
    }
  }
  const total =
    queryProjection +
    keyValueProjection +
    keyValueUpProjection +
    scores +
    softmax +
    weightedValues +
    normalization +
    outputProjection +
    rope;
  return {
    queryProjection,
    keyValueProjection,
    keyValueUpProjection,
    scores,
    softmax,
    weightedValues,
    normalization,
    outputProjection,
    rope,
    total,
  };
}

/** How each new token is produced during autoregressive decoding. */
export type DecodeMode = "cached" | "recompute";

export interface DecodeFlopOptions {
  /** "cached": project one token and attend 1 query to t cached keys; "recompute": rerun all t tokens. @default "cached" */
  mode?: DecodeMode;
  /** Layers of the model (FLOPs scale linearly). @default 1 */
  numLayers?: number;
  /** MLA computation form. @default "unmerged" */
  mlaForm?: MlaWeightForm;
  /** See `AttentionFlopOptions.softmaxFlopsPerScore`. @default 5 */
  softmaxFlopsPerScore?: number;
}

/**
 * Total attention FLOPs to produce `numTokens` tokens one at a time (notes §4 "Why KV caching"):
 * step t ∈ 1…N_tokens attends to t keys. "recompute" reruns all t tokens through every layer
 * (t queries, t new keys): Σ O(t² d) = O(N_tokens³ d). "cached" projects the one new token and
 * attends with a single query: Σ O(t d) = O(N_tokens² d).
 */
export function decodeFlops(spec: AttentionSpec, numTokens: number, options: DecodeFlopOptions = {}): number {
  assertOptions(options, "options");
  resolveAttentionSpec(spec);
  assertInteger(numTokens, "numTokens");
  const mode = options.mode ?? "cached";
  assertOneOf(mode, "options.mode", ["cached", "recompute"] as const);
  const numLayers = options.numLayers ?? 1;
  assertInteger(numLayers, "options.numLayers");
  const step = (t: number): number =>
    attentionFlops(spec, {
      numQueries: mode === "cached" ? 1 : t,
      numKeys: t,
      numNewKeys: mode === "cached" ? 1 : t,
      mlaForm: options.mlaForm,
      softmaxFlopsPerScore: options.softmaxFlopsPerScore,
    }).total;
  // Step t's FLOPs p(t) are bilinear in (N_Q, N_KV, N_new) ∈ {1, t}: a polynomial of degree ≤ 2 in t.
  // So Σ_{t=1}^{N} p(t) = N·p(1) + Δ·N(N−1)/2 + Δ²·N(N−1)(N−2)/6 from p(1), p(2), p(3) (Newton's
  // forward differences) — exact in integers, and O(1) instead of a loop of N steps, which for a
  // long context (numTokens ≈ 1e9) used to run for minutes (issue #6: no hang).
  const n = numTokens;
  const p1 = step(1);
  if (n === 1) return p1 * numLayers;
  const p2 = step(2);
  if (n === 2) return (p1 + p2) * numLayers;
  const p3 = step(3);
  const d1 = p2 - p1;
  const d2 = p3 - 2 * p2 + p1;
  const total = n * p1 + (d1 * n * (n - 1)) / 2 + (d2 * n * (n - 1) * (n - 2)) / 6;
  return total * numLayers;
}
