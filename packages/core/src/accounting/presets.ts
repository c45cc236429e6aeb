/**
 * Model presets of Table 3 of Serret (2026), with the vocabulary sizes of §1 and the corrections
 * of ERRATA.md. Only architecture dimensions are recorded; every figure derived from them
 * (cache sizes, weight counts, FLOPs) is computed by the accounting functions, never stored.
 */
import type { AttentionSpec } from "./spec.js";

/** A model's architecture, as far as attention accounting needs it. */
export interface ModelPreset {
  /** Display name, e.g. `"Llama 3 70B"`. */
  readonly name: string;
  /** Number of layers N_L. */
  readonly numLayers: number;
  /** Vocabulary size N_T (rows of the embedding E ∈ R^{N_T×d}). */
  readonly vocabSize: number;
  /** Hidden (embedding) dimension d = d_in = d_out. */
  readonly dModel: number;
  /** One attention layer (all layers identical for the accounting). */
  readonly attention: AttentionSpec;
  /** Where the figures come from and what is simplified. */
  readonly notes: readonly string[];
}

/** Llama 3 70B [Gra+24]: GQA, 64 query heads sharing 8 KV heads. */
export const LLAMA3_70B: ModelPreset = Object.freeze({
  name: "Llama 3 70B",
  numLayers: 80,
  vocabSize: 128_256,
  dModel: 8192,
  attention: Object.freeze({ form: "gqa", dIn: 8192, dOut: 8192, numHeads: 64, numKvHeads: 8, headDim: 128 }) as AttentionSpec,
  notes: Object.freeze(["Table 3; vocabulary ~128k (§1): 128,256 entries."]),
});

/** Gemma 3 27B [The25]: GQA, 32 query heads sharing 16 KV heads; N_heads·d_head = 4096 < d = 5376. */
export const GEMMA3_27B: ModelPreset = Object.freeze({
  name: "Gemma 3 27B",
  numLayers: 62,
  vocabSize: 262_144,
  dModel: 5376,
  attention: Object.freeze({ form: "gqa", dIn: 5376, dOut: 5376, numHeads: 32, numKvHeads: 16, headDim: 128 }) as AttentionSpec,
  notes: Object.freeze([
    "Table 3; vocabulary ~262k (§1): 262,144 entries.",
    "ERRATA: accounted as global attention on every layer; Gemma 3's sliding-window layers (which cap their cache) are ignored.",
  ]),
});

/**
 * DeepSeek-V2 [Dee+24]: MLA with d_L = 512, d_LQ = 1536 and decoupled RoPE d_R = 64; per-head
 * d_QK = d_V = 128 (the non-rotary part; the softmax scale is 1/√(128 + 64)).
 */
export const DEEPSEEK_V2: ModelPreset = Object.freeze({
  name: "DeepSeek V2",
  numLayers: 60,
  vocabSize: 102_400,
  dModel: 5120,
  attention: Object.freeze({
    form: "mla",
    dIn: 5120,
    dOut: 5120,
    numHeads: 128,
    headDim: 128,
    valueDim: 128,
    latentDim: 512,
    queryLatentDim: 1536,
    ropeDim: 64,
  }) as AttentionSpec,
  notes: Object.freeze([
    "Table 3; a mixture-of-experts model: only attention is accounted.",
    "ERRATA: Table 3's 512 floats/token/layer is the latent only; with the decoupled rotary key (d_R = 64) the cache is 576.",
  ]),
});

/** The three models of Table 3, in the paper's column order. */
export const TABLE3_PRESETS: readonly ModelPreset[] = Object.freeze([LLAMA3_70B, GEMMA3_27B, DEEPSEEK_V2]);
