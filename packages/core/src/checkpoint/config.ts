/**
 * `config.json` → one typed config per Hugging Face architecture, with every default and derived
 * value as `transformers` computes it (configuration_llama.py, configuration_qwen2.py,
 * configuration_gpt2.py, DeepSeek-V2's configuration_deepseek.py). A missing required field, a
 * field of the wrong type or an unsupported architecture is a FormatError naming the file and field.
 */
import { FormatError } from "../errors.js";
import { describe } from "../validate.js";

/** The architectures (`config.architectures[0]`) RandAttn runs. */
export type Architecture = "LlamaForCausalLM" | "MistralForCausalLM" | "Qwen2ForCausalLM" | "GPT2LMHeadModel" | "DeepseekV2ForCausalLM";
/** Every supported architecture. */
export const ARCHITECTURES: readonly Architecture[] = [
  "LlamaForCausalLM",
  "MistralForCausalLM",
  "Qwen2ForCausalLM",
  "GPT2LMHeadModel",
  "DeepseekV2ForCausalLM",
];

/** `rope_scaling` / `rope_parameters` kinds supported (HF modeling_rope_utils). */
export type RopeScaling =
  | { readonly kind: "linear"; readonly factor: number }
  | {
      readonly kind: "llama3";
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxPositions: number;
    }
  | {
      readonly kind: "yarn";
      readonly factor: number;
      /** `original_max_position_embeddings` (default: `max_position_embeddings`). */
      readonly originalMaxPositions: number;
      readonly betaFast: number;
      readonly betaSlow: number;
      /** `mscale` (0 when absent: HF then ignores it). */
      readonly mscale: number;
      /** `mscale_all_dim` (0 when absent). DeepSeek also scales its softmax by mscale(factor, mscale_all_dim)². */
      readonly mscaleAllDim: number;
      /** `attention_factor`: the factor on cos/sin, overriding the mscale rule. @default undefined */
      readonly attentionFactor?: number;
      /** `truncate`: floor/ceil the correction range to whole pair indices (HF ≥ 4.5x option). @default true */
      readonly truncate?: boolean;
    };

interface CommonConfig {
  readonly architecture: Architecture;
  readonly vocabSize: number;
  /** d_model (`hidden_size`, GPT-2 `n_embd`). */
  readonly hiddenSize: number;
  readonly numLayers: number;
  /** H, query heads. */
  readonly numHeads: number;
  /** lm_head tied to the token embedding. */
  readonly tieWordEmbeddings: boolean;
  readonly maxPositions: number;
}

/** Llama, Mistral, SmolLM and Qwen2: GQA + RoPE (rotate_half) + RMSNorm + SwiGLU. */
export interface LlamaConfig extends CommonConfig {
  readonly family: "llama";
  /** G, KV heads (`num_key_value_heads`, default H). */
  readonly numKvHeads: number;
  /** d_head (`head_dim`, default hidden_size / H). */
  readonly headDim: number;
  readonly intermediateSize: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly ropeScaling?: RopeScaling;
  /** Biases on q/k/v (Qwen2: always; Llama: `attention_bias`). */
  readonly qkvBias: boolean;
  /** Bias on o_proj (Llama `attention_bias`; never in Qwen2). */
  readonly outputBias: boolean;
  /** Biases in the MLP (`mlp_bias`). */
  readonly mlpBias: boolean;
  /** Mistral/Qwen2 sliding window (only sequences within it are accepted), or undefined. */
  readonly slidingWindow?: number;
}

/** GPT-2: learned positions, LayerNorm with bias, fused Conv1D c_attn, gelu_new. */
export interface Gpt2Config extends CommonConfig {
  readonly family: "gpt2";
  /** n_inner (default 4·n_embd). */
  readonly innerSize: number;
  readonly layerNormEps: number;
  readonly activation: "gelu_new" | "gelu" | "relu" | "gelu_pytorch_tanh";
  readonly scaleAttnWeights: boolean;
  readonly scaleAttnByInverseLayerIdx: boolean;
}

/** DeepSeek-V2 (and V2-Lite): MLA with decoupled RoPE, dense and MoE MLPs. */
export interface DeepseekV2Config extends CommonConfig {
  readonly family: "deepseek_v2";
  /** d_LQ, or null: queries straight from q_proj (V2-Lite). */
  readonly qLoraRank: number | null;
  /** d_L. */
  readonly kvLoraRank: number;
  readonly qkNopeHeadDim: number;
  /** d_R. */
  readonly qkRopeHeadDim: number;
  readonly vHeadDim: number;
  readonly intermediateSize: number;
  readonly moeIntermediateSize: number;
  /** Routed experts, or null for an all-dense model. */
  readonly nRoutedExperts: number | null;
  readonly nSharedExperts: number | null;
  readonly numExpertsPerTok: number;
  readonly topkMethod: "greedy" | "group_limited_greedy";
  readonly nGroup: number;
  readonly topkGroup: number;
  readonly routedScalingFactor: number;
  readonly normTopkProb: boolean;
  readonly firstKDenseReplace: number;
  readonly moeLayerFreq: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly ropeScaling?: RopeScaling;
  readonly attentionBias: boolean;
  /** (qk_nope + qk_rope)^−½, times mscale² under YaRN with mscale_all_dim (DeepSeek's attention). */
  readonly softmaxScale: number;
}

/** The typed config of a supported checkpoint. */
export type PretrainedConfig = LlamaConfig | Gpt2Config | DeepseekV2Config;

type Json = Record<string, unknown>;

class Reader {
  constructor(
    readonly json: Json,
    readonly label: string,
  ) {}
  private err(field: string, expected: string, v: unknown): never {
    throw new FormatError(`${this.label}: ${field}`, expected, v === undefined ? "missing" : describe(v));
  }
  int(field: string, fallback?: number, min = 1): number {
    const v = this.json[field] ?? fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) this.err(field, `an integer ≥ ${min}`, this.json[field]);
    return v;
  }
  intOrNull(field: string, fallback: number | null = null): number | null {
    const v = this.json[field];
    if (v === null || (v === undefined && fallback === null)) return null;
    return this.int(field, fallback ?? undefined);
  }
  num(field: string, fallback?: number, positive = true): number {
    const v = this.json[field] ?? fallback;
    if (typeof v !== "number" || !Number.isFinite(v) || (positive && v <= 0))
      this.err(field, positive ? "a positive number" : "a finite number", this.json[field]);
    return v;
  }
  bool(field: string, fallback: boolean): boolean {
    const v = this.json[field] ?? fallback;
    if (typeof v !== "boolean") this.err(field, "true or false", this.json[field]);
    return v;
  }
  oneOf<T extends string>(field: string, allowed: readonly T[], fallback: T): T {
    const v = this.json[field] ?? fallback;
    if (typeof v !== "string" || !(allowed as readonly string[]).includes(v))
      this.err(field, `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`, this.json[field]);
    return v as T;
  }
}

function ropeScaling(json: Json, label: string, maxPositions: number): { theta?: number; scaling?: RopeScaling } {
  // transformers ≥ 4.5x writes `rope_parameters` (rope_type, rope_theta, …); older files `rope_scaling`.
  const params = json.rope_parameters ?? json.rope_scaling;
  const field = json.rope_parameters !== undefined ? "rope_parameters" : "rope_scaling";
  if (params === undefined || params === null) return {};
  if (typeof params !== "object" || Array.isArray(params))
    throw new FormatError(`${label}: ${field}`, "an object or null", describe(params));
  const r = new Reader(params as Json, `${label}: ${field}`);
  const p = params as Json;
  const theta = p.rope_theta === undefined ? undefined : r.num("rope_theta");
  const kind = p.rope_type ?? p.type;
  if (kind === "default" || (kind === undefined && field === "rope_parameters")) return { theta };
  if (kind === "linear") return { theta, scaling: { kind, factor: r.num("factor") } };
  if (kind === "llama3") {
    return {
      theta,
      scaling: {
        kind,
        factor: r.num("factor"),
        lowFreqFactor: r.num("low_freq_factor"),
        highFreqFactor: r.num("high_freq_factor"),
        originalMaxPositions: r.int("original_max_position_embeddings"),
      },
    };
  }
  if (kind === "yarn") {
    return {
      theta,
      scaling: {
        kind,
        factor: r.num("factor"),
        originalMaxPositions: r.int("original_max_position_embeddings", maxPositions),
        betaFast: r.num("beta_fast", 32),
        betaSlow: r.num("beta_slow", 1),
        mscale: r.num("mscale", 0, false),
        mscaleAllDim: r.num("mscale_all_dim", 0, false),
        attentionFactor: p.attention_factor === undefined || p.attention_factor === null ? undefined : r.num("attention_factor"),
        truncate: r.bool("truncate", true),
      },
    };
  }
  throw new FormatError(`${label}: ${field}.rope_type`, '"default", "linear", "llama3" or "yarn"', describe(kind));
}

/** YaRN's magnitude correction 0.1·m·ln(s) + 1 for s > 1 (DeepSeek `yarn_get_mscale`). */
export function yarnMscale(scale: number, mscale = 1): number {
  return scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1;
}

/**
 * Parses a `config.json` object.
 * @param json the parsed JSON. @param label the file name for errors. @default "config.json"
 * @throws FormatError for an unsupported architecture or a missing/invalid field (named).
 */
export function parseModelConfig(json: unknown, label = "config.json"): PretrainedConfig {
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new FormatError(label, "a JSON object", describe(json));
  const j = json as Json;
  const archs = j.architectures;
  const arch = Array.isArray(archs) ? archs[0] : undefined;
  if (!(ARCHITECTURES as readonly unknown[]).includes(arch)) {
    throw new FormatError(
      `${label}: architectures[0]`,
      `one of ${ARCHITECTURES.join(", ")}`,
      arch === undefined ? (archs === undefined ? "missing" : describe(archs)) : describe(arch),
    );
  }
  const architecture = arch as Architecture;
  const r = new Reader(j, label);
  if (architecture === "GPT2LMHeadModel") {
    const hiddenSize = r.int("n_embd");
    const numHeads = r.int("n_head");
    if (hiddenSize % numHeads !== 0) throw new FormatError(`${label}: n_head`, `a divisor of n_embd = ${hiddenSize}`, String(numHeads));
    return {
      family: "gpt2",
      architecture,
      vocabSize: r.int("vocab_size"),
      hiddenSize,
      numLayers: r.int("n_layer"),
      numHeads,
      tieWordEmbeddings: r.bool("tie_word_embeddings", true),
      maxPositions: r.int("n_positions"),
      innerSize: j.n_inner === null || j.n_inner === undefined ? 4 * hiddenSize : r.int("n_inner"),
      layerNormEps: r.num("layer_norm_epsilon", 1e-5),
      activation: r.oneOf("activation_function", ["gelu_new", "gelu", "relu", "gelu_pytorch_tanh"] as const, "gelu_new"),
      scaleAttnWeights: r.bool("scale_attn_weights", true),
      scaleAttnByInverseLayerIdx: r.bool("scale_attn_by_inverse_layer_idx", false),
    };
  }
  const hiddenSize = r.int("hidden_size");
  const numHeads = r.int("num_attention_heads");
  const maxPositions = r.int("max_position_embeddings", 2048);
  const rope = ropeScaling(j, label, maxPositions);
  const ropeTheta = rope.theta ?? r.num("rope_theta", 10000);
  const common = {
    architecture,
    vocabSize: r.int("vocab_size"),
    hiddenSize,
    numLayers: r.int("num_hidden_layers"),
    numHeads,
    tieWordEmbeddings: r.bool("tie_word_embeddings", false),
    maxPositions,
  };
  const act = r.oneOf("hidden_act", ["silu"] as const, "silu");
  void act;
  if (architecture === "DeepseekV2ForCausalLM") {
    const qkNopeHeadDim = r.int("qk_nope_head_dim", 128);
    const qkRopeHeadDim = r.int("qk_rope_head_dim", 64);
    if (qkRopeHeadDim % 2 !== 0) throw new FormatError(`${label}: qk_rope_head_dim`, "an even integer", String(qkRopeHeadDim));
    const nRoutedExperts = r.intOrNull("n_routed_experts");
    const nGroup = r.int("n_group", 1);
    const topkMethod = r.oneOf("topk_method", ["greedy", "group_limited_greedy"] as const, "greedy");
    if (nRoutedExperts !== null && nRoutedExperts % nGroup !== 0) {
      throw new FormatError(`${label}: n_group`, `a divisor of n_routed_experts = ${nRoutedExperts}`, String(nGroup));
    }
    let softmaxScale = (qkNopeHeadDim + qkRopeHeadDim) ** -0.5;
    if (rope.scaling?.kind === "yarn" && rope.scaling.mscaleAllDim) {
      const m = yarnMscale(rope.scaling.factor, rope.scaling.mscaleAllDim);
      softmaxScale *= m * m;
    }
    const numExpertsPerTok = nRoutedExperts === null ? 1 : r.int("num_experts_per_tok");
    if (nRoutedExperts !== null && numExpertsPerTok > nRoutedExperts) {
      throw new FormatError(`${label}: num_experts_per_tok`, `at most n_routed_experts = ${nRoutedExperts}`, String(numExpertsPerTok));
    }
    return {
      family: "deepseek_v2",
      ...common,
      qLoraRank: r.intOrNull("q_lora_rank"),
      kvLoraRank: r.int("kv_lora_rank"),
      qkNopeHeadDim,
      qkRopeHeadDim,
      vHeadDim: r.int("v_head_dim", 128),
      intermediateSize: r.int("intermediate_size"),
      moeIntermediateSize: nRoutedExperts === null ? 0 : r.int("moe_intermediate_size"),
      nRoutedExperts,
      nSharedExperts: r.intOrNull("n_shared_experts"),
      numExpertsPerTok,
      topkMethod,
      nGroup,
      topkGroup: r.int("topk_group", 1),
      routedScalingFactor: r.num("routed_scaling_factor", 1),
      normTopkProb: r.bool("norm_topk_prob", false),
      firstKDenseReplace: r.int("first_k_dense_replace", 0, 0),
      moeLayerFreq: r.int("moe_layer_freq", 1),
      rmsNormEps: r.num("rms_norm_eps", 1e-6),
      ropeTheta,
      ropeScaling: rope.scaling,
      attentionBias: r.bool("attention_bias", false),
      softmaxScale,
    };
  }
  const numKvHeads = r.int("num_key_value_heads", numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new FormatError(`${label}: num_key_value_heads`, `a divisor of num_attention_heads = ${numHeads}`, String(numKvHeads));
  }
  const headDim = j.head_dim === null || j.head_dim === undefined ? hiddenSize / numHeads : r.int("head_dim");
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new FormatError(`${label}: head_dim`, "an even integer (hidden_size / num_attention_heads by default)", String(headDim));
  }
  const qwen = architecture === "Qwen2ForCausalLM";
  const attentionBias = qwen ? false : r.bool("attention_bias", false);
  const sliding = architecture === "MistralForCausalLM" || (qwen && j.use_sliding_window === true) ? r.intOrNull("sliding_window") : null;
  return {
    family: "llama",
    ...common,
    numKvHeads,
    headDim,
    intermediateSize: r.int("intermediate_size"),
    rmsNormEps: r.num("rms_norm_eps", 1e-6),
    ropeTheta,
    ropeScaling: rope.scaling,
    qkvBias: qwen || attentionBias,
    outputBias: attentionBias,
    mlpBias: qwen ? false : r.bool("mlp_bias", false),
    slidingWindow: sliding ?? undefined,
  };
}

/**
 * RoPE inverse frequencies θ_p for a rotary width `dim`, and the cos/sin magnitude ("attention
 * factor"), exactly as HF's `ROPE_INIT_FUNCTIONS` (default, linear, llama3) and DeepSeek's YaRN
 * rotary embedding compute them — in float64.
 */
export function ropeInverseFrequencies(
  dim: number,
  theta: number,
  scaling?: RopeScaling,
): { frequencies: Float64Array; magnitude: number } {
  const half = dim / 2;
  const base = Float64Array.from({ length: half }, (_, p) => 1 / theta ** ((2 * p) / dim));
  if (!scaling) return { frequencies: base, magnitude: 1 };
  if (scaling.kind === "linear") return { frequencies: base.map((f) => f / scaling.factor), magnitude: 1 };
  if (scaling.kind === "llama3") {
    // Llama 3.1: long wavelengths divided by `factor`, short ones kept, a linear blend in between.
    const { factor, lowFreqFactor, highFreqFactor, originalMaxPositions: old } = scaling;
    const lowWavelen = old / lowFreqFactor;
    const highWavelen = old / highFreqFactor;
    const out = base.map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highWavelen) return f;
      if (wavelen > lowWavelen) return f / factor;
      const smooth = (old / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      return (1 - smooth) * (f / factor) + smooth * f;
    });
    return { frequencies: out, magnitude: 1 };
  }
  // YaRN "NTK-by-parts" (Peng et al. 2023 §3.2), as transformers' `_compute_yarn_parameters`:
  // interpolate between extrapolated θ_p and θ_p/factor with a linear ramp over the pair indices of
  // the correction range of rotations [β_fast, β_slow] (floored/ceiled unless `truncate: false`).
  const { factor, originalMaxPositions, betaFast, betaSlow } = scaling;
  const corrDim = (rot: number) => (dim * Math.log(originalMaxPositions / (rot * 2 * Math.PI))) / (2 * Math.log(theta));
  const truncate = scaling.truncate ?? true;
  const low = Math.max(truncate ? Math.floor(corrDim(betaFast)) : corrDim(betaFast), 0);
  let high = Math.min(truncate ? Math.ceil(corrDim(betaSlow)) : corrDim(betaSlow), dim - 1);
  if (low === high) high += 0.001; // HF: "prevent singularity"
  const out = base.map((f, p) => {
    const ramp = Math.min(1, Math.max(0, (p - low) / (high - low)));
    const extrapolate = 1 - ramp;
    // HF's 1/(factor·b^(2p/d)), not f/factor: the same value up to the last bit.
    const interpolated = 1 / (factor * theta ** ((2 * p) / dim));
    return interpolated * (1 - extrapolate) + f * extrapolate;
  });
  return { frequencies: out, magnitude: yarnAttentionFactor(scaling) };
}

/**
 * The factor YaRN puts on cos and sin, with transformers' precedence: `attention_factor` when
 * given; else mscale(s, mscale) / mscale(s, mscale_all_dim) when both are set and non-zero
 * (DeepSeek-V2/V3); else mscale(s) = 0.1·ln s + 1 (YaRN eq. 21). DeepSeek's hub code
 * (modeling_deepseek.py) differs when only one of the two is set (it defaults mscale to 1 and
 * mscale_all_dim to 0 and always takes the ratio); no released config does that.
 */
export function yarnAttentionFactor(scaling: Extract<RopeScaling, { kind: "yarn" }>): number {
  if (scaling.attentionFactor !== undefined) return scaling.attentionFactor;
  const { factor, mscale, mscaleAllDim } = scaling;
  return mscale && mscaleAllDim ? yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim) : yarnMscale(factor);
}
