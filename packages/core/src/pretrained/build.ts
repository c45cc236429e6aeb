/**
 * Builds a runnable model from a typed config and a tensor store: the core's own weight types
 * (MultiHeadWeights, MlaWeights, FfnWeights, norm params, Rope), with Hugging Face's tensor names.
 */
import { ValueError } from "../errors.js";
import type { DeepseekV2Config, Gpt2Config, LlamaConfig, PretrainedConfig } from "../checkpoint/config.js";
import { ropeInverseFrequencies } from "../checkpoint/config.js";
import type { TensorStore } from "../checkpoint/store.js";
import type { MultiHeadWeights } from "../attention/multihead.js";
import type { FfnWeights } from "../layers/ffn.js";
import type { LayerNormParams, NormParams, RMSNormParams } from "../norm.js";
import type { MlaWeights } from "../latent/weights.js";
import { Matrix } from "../matrix.js";
import { Rope } from "../position/rope.js";
import { WeightReader, columnBlock, headBlocks } from "./weights.js";

/** Grouped-query attention of a Llama/Qwen2/GPT-2 layer, with the optional biases of those checkpoints. */
export interface GqaLayerAttention {
  readonly kind: "gqa";
  readonly weights: MultiHeadWeights;
  readonly queryBias?: Float64Array[];
  readonly keyBias?: Float64Array[];
  readonly valueBias?: Float64Array[];
  readonly outputBias?: Float64Array;
  /** undefined for GPT-2 (learned absolute positions). */
  readonly rope?: Rope;
  /** Softmax logit scale. */
  readonly scale: number;
  /** Sliding window (Mistral/Qwen2) or undefined. */
  readonly slidingWindow?: number;
}

/** DeepSeek-V2 multi-head latent attention. */
export interface MlaLayerAttention {
  readonly kind: "mla";
  readonly weights: MlaWeights;
  readonly rope: Rope;
  readonly scale: number;
}

/** A mixture of SwiGLU experts (DeepSeekMoE): routed top-k plus always-on shared experts. */
export interface MoeFfn {
  readonly kind: "moe";
  /** Router W_g as stored, E×d (logits = x W_gᵀ). */
  readonly gate: Matrix;
  readonly experts: FfnWeights[];
  readonly shared?: FfnWeights;
  readonly topK: number;
  readonly method: "greedy" | "group_limited_greedy";
  readonly numGroups: number;
  readonly topkGroups: number;
  readonly routedScaling: number;
  readonly normalizeTopK: boolean;
}

export type LayerFfn = { readonly kind: "dense"; readonly weights: FfnWeights } | MoeFfn;

export interface DecoderLayerWeights {
  readonly inputNorm: NormParams;
  readonly attention: GqaLayerAttention | MlaLayerAttention;
  readonly postNorm: NormParams;
  readonly ffn: LayerFfn;
}

/** All weights of a causal LM, in the core's orientation. */
export interface PretrainedWeights {
  /** Token embedding, vocab×d. */
  readonly embed: Matrix;
  /** GPT-2 learned positions, n_positions×d. */
  readonly positions?: Matrix;
  readonly layers: DecoderLayerWeights[];
  readonly finalNorm: NormParams;
  /** Output head as stored, vocab×d (logits = h Wᵀ); the embedding itself when tied. */
  readonly lmHead: Matrix;
}

const rms = (gain: Float64Array, epsilon: number): RMSNormParams => ({ kind: "rms", gain, epsilon });

function swiglu(r: WeightReader, prefix: string, d: number, inner: number, why: string, bias: boolean): FfnWeights {
  return {
    kind: "swiglu",
    w1: r.linear(`${prefix}.gate_proj.weight`, inner, d, why),
    b1: bias ? r.vector(`${prefix}.gate_proj.bias`, inner, why) : undefined,
    v: r.linear(`${prefix}.up_proj.weight`, inner, d, why),
    c: bias ? r.vector(`${prefix}.up_proj.bias`, inner, why) : undefined,
    w2: r.linear(`${prefix}.down_proj.weight`, d, inner, why),
    b2: bias ? r.vector(`${prefix}.down_proj.bias`, d, why) : undefined,
  };
}

function lmHead(r: WeightReader, config: PretrainedConfig, embed: Matrix, name = "lm_head.weight"): Matrix {
  // HF ties lm_head to the embedding when tie_word_embeddings is true, whatever the file holds.
  if (config.tieWordEmbeddings) return embed;
  return r.matrix(name, config.vocabSize, config.hiddenSize, "vocab_size × hidden_size (tie_word_embeddings false)");
}

function buildLlama(config: LlamaConfig, store: TensorStore): PretrainedWeights {
  const r = new WeightReader(store);
  const { hiddenSize: d, numHeads: H, numKvHeads: G, headDim: dh, intermediateSize: inner } = config;
  const embed = r.matrix("model.embed_tokens.weight", config.vocabSize, d, "vocab_size × hidden_size");
  const { frequencies, magnitude } = ropeInverseFrequencies(dh, config.ropeTheta, config.ropeScaling);
  const rope = new Rope(dh, { pairing: "half", frequencies, magnitude });
  const layers: DecoderLayerWeights[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    const p = `model.layers.${l}`;
    const a = `${p}.self_attn`;
    const qWhy = "num_attention_heads·head_dim × hidden_size";
    const kvWhy = "num_key_value_heads·head_dim × hidden_size";
    const bias = (name: string, n: number, why: string) => {
      const b = r.vector(name, n * dh, why);
      return Array.from({ length: n }, (_, h) => b.slice(h * dh, (h + 1) * dh));
    };
    layers.push({
      inputNorm: rms(r.vector(`${p}.input_layernorm.weight`, d, "hidden_size"), config.rmsNormEps),
      attention: {
        kind: "gqa",
        weights: {
          queries: r.linearBlocks(`${a}.q_proj.weight`, H * dh, d, headBlocks(H, dh, 0, dh), qWhy),
          keys: r.linearBlocks(`${a}.k_proj.weight`, G * dh, d, headBlocks(G, dh, 0, dh), kvWhy),
          values: r.linearBlocks(`${a}.v_proj.weight`, G * dh, d, headBlocks(G, dh, 0, dh), kvWhy),
          output: r.linear(`${a}.o_proj.weight`, d, H * dh, "hidden_size × num_attention_heads·head_dim"),
        },
        queryBias: config.qkvBias ? bias(`${a}.q_proj.bias`, H, "num_attention_heads·head_dim") : undefined,
        keyBias: config.qkvBias ? bias(`${a}.k_proj.bias`, G, "num_key_value_heads·head_dim") : undefined,
        valueBias: config.qkvBias ? bias(`${a}.v_proj.bias`, G, "num_key_value_heads·head_dim") : undefined,
        outputBias: config.outputBias ? r.vector(`${a}.o_proj.bias`, d, "hidden_size") : undefined,
        rope,
        scale: dh ** -0.5,
        slidingWindow: config.slidingWindow,
      },
      postNorm: rms(r.vector(`${p}.post_attention_layernorm.weight`, d, "hidden_size"), config.rmsNormEps),
      ffn: { kind: "dense", weights: swiglu(r, `${p}.mlp`, d, inner, "intermediate_size × hidden_size", config.mlpBias) },
    });
  }
  return {
    embed,
    layers,
    finalNorm: rms(r.vector("model.norm.weight", d, "hidden_size"), config.rmsNormEps),
    lmHead: lmHead(r, config, embed),
  };
}

function buildGpt2(config: Gpt2Config, store: TensorStore): PretrainedWeights {
  // Hub GPT-2 files name tensors without the "transformer." prefix HF's GPT2LMHeadModel adds.
  const r = new WeightReader(store, store.has("transformer.wte.weight") ? "transformer." : "");
  const { hiddenSize: d, numHeads: H, innerSize: inner } = config;
  const dh = d / H;
  const ln = (name: string): LayerNormParams => ({
    kind: "layer",
    gain: r.vector(`${name}.weight`, d, "n_embd"),
    shift: r.vector(`${name}.bias`, d, "n_embd"),
    epsilon: config.layerNormEps,
  });
  const embed = r.matrix("wte.weight", config.vocabSize, d, "vocab_size × n_embd");
  const positions = r.matrix("wpe.weight", config.maxPositions, d, "n_positions × n_embd");
  const kind = config.activation === "relu" ? "relu" : config.activation === "gelu" ? "gelu" : "gelu-tanh";
  const layers: DecoderLayerWeights[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    const p = `h.${l}`;
    // Conv1D c_attn: [n_embd, 3·n_embd] = [in, out], columns [queries | keys | values], head-major.
    const cAttn = r.matrix(`${p}.attn.c_attn.weight`, d, 3 * d, "n_embd × 3·n_embd (Conv1D [in, out])");
    const cAttnBias = r.vector(`${p}.attn.c_attn.bias`, 3 * d, "3·n_embd");
    const cols = (part: number) => Array.from({ length: H }, (_, h) => columnBlock(cAttn, part * d + h * dh, dh));
    const bias = (part: number) => Array.from({ length: H }, (_, h) => cAttnBias.slice(part * d + h * dh, part * d + (h + 1) * dh));
    let scale = config.scaleAttnWeights ? dh ** -0.5 : 1;
    if (config.scaleAttnByInverseLayerIdx) scale /= l + 1;
    layers.push({
      inputNorm: ln(`${p}.ln_1`),
      attention: {
        kind: "gqa",
        weights: {
          queries: cols(0),
          keys: cols(1),
          values: cols(2),
          output: r.matrix(`${p}.attn.c_proj.weight`, d, d, "n_embd × n_embd (Conv1D)"),
        },
        queryBias: bias(0),
        keyBias: bias(1),
        valueBias: bias(2),
        outputBias: r.vector(`${p}.attn.c_proj.bias`, d, "n_embd"),
        scale,
      },
      postNorm: ln(`${p}.ln_2`),
      ffn: {
        kind: "dense",
        weights: {
          kind,
          w1: r.matrix(`${p}.mlp.c_fc.weight`, d, inner, "n_embd × n_inner (Conv1D)"),
          b1: r.vector(`${p}.mlp.c_fc.bias`, inner, "n_inner"),
          w2: r.matrix(`${p}.mlp.c_proj.weight`, inner, d, "n_inner × n_embd (Conv1D)"),
          b2: r.vector(`${p}.mlp.c_proj.bias`, d, "n_embd"),
        },
      },
    });
  }
  const head = config.tieWordEmbeddings ? embed : r.matrix("lm_head.weight", config.vocabSize, d, "vocab_size × n_embd");
  return { embed, positions, layers, finalNorm: ln("ln_f"), lmHead: head };
}

/** DeepSeek's q_a_layernorm and kv_a_layernorm are built with RMSNorm's default ε = 1e-6, not rms_norm_eps. */
const DEEPSEEK_LATENT_NORM_EPS = 1e-6;

function buildDeepseek(config: DeepseekV2Config, store: TensorStore): PretrainedWeights {
  if (config.attentionBias)
    throw new ValueError("config.json: attention_bias", "false (DeepSeek-V2 checkpoints have no attention biases)", "true");
  const r = new WeightReader(store);
  const { hiddenSize: d, numHeads: H, qkNopeHeadDim: nope, qkRopeHeadDim: dR, vHeadDim: dV, kvLoraRank: dL, qLoraRank } = config;
  const dQ = nope + dR;
  const embed = r.matrix("model.embed_tokens.weight", config.vocabSize, d, "vocab_size × hidden_size");
  const { frequencies, magnitude } = ropeInverseFrequencies(dR, config.ropeTheta, config.ropeScaling);
  // DeepSeek rotates pairs (2p, 2p+1) of the rotary part (the in-library complex form; the hub code's
  // interleaved→half permutation followed by rotate_half pairs the same coordinates): "interleaved".
  const rope = new Rope(dR, { pairing: "interleaved", frequencies, magnitude });
  const layers: DecoderLayerWeights[] = [];
  // One identity W_LQ shared by every layer when q_lora_rank is null (d² floats once, not per layer).
  const identity = qLoraRank === null ? Matrix.identity(d) : undefined;
  for (let l = 0; l < config.numLayers; l++) {
    const p = `model.layers.${l}`;
    const a = `${p}.self_attn`;
    const qWhy = "num_attention_heads·(qk_nope_head_dim + qk_rope_head_dim)";
    let queryDown: Matrix;
    let queryNorm: RMSNormParams | undefined;
    let qIn: number;
    let qName: string;
    if (qLoraRank === null) {
      // q_lora_rank null (V2-Lite): Q = X W_Q, i.e. W_LQ = I (exact: x·1 + Σ 0).
      queryDown = identity as Matrix;
      qIn = d;
      qName = `${a}.q_proj.weight`;
    } else {
      queryDown = r.linear(`${a}.q_a_proj.weight`, qLoraRank, d, "q_lora_rank × hidden_size");
      queryNorm = rms(r.vector(`${a}.q_a_layernorm.weight`, qLoraRank, "q_lora_rank"), DEEPSEEK_LATENT_NORM_EPS);
      qIn = qLoraRank;
      qName = `${a}.q_b_proj.weight`;
    }
    const qWhyFull = `${qWhy} × ${qLoraRank === null ? "hidden_size" : "q_lora_rank"}`;
    const kvA = r.linearBlocks(
      `${a}.kv_a_proj_with_mqa.weight`,
      dL + dR,
      d,
      [
        { start: 0, width: dL },
        { start: dL, width: dR },
      ],
      "(kv_lora_rank + qk_rope_head_dim) × hidden_size",
    );
    const kvWhy = "num_attention_heads·(qk_nope_head_dim + v_head_dim) × kv_lora_rank";
    const weights: MlaWeights = {
      queryDown,
      queryUp: r.linearBlocks(qName, H * dQ, qIn, headBlocks(H, dQ, 0, nope), qWhyFull),
      queryRope: r.linearBlocks(qName, H * dQ, qIn, headBlocks(H, dQ, nope, dR), qWhyFull),
      queryNorm,
      latentDown: kvA[0],
      keyRope: kvA[1],
      latentNorm: rms(r.vector(`${a}.kv_a_layernorm.weight`, dL, "kv_lora_rank"), DEEPSEEK_LATENT_NORM_EPS),
      keyUp: r.linearBlocks(`${a}.kv_b_proj.weight`, H * (nope + dV), dL, headBlocks(H, nope + dV, 0, nope), kvWhy),
      valueUp: r.linearBlocks(`${a}.kv_b_proj.weight`, H * (nope + dV), dL, headBlocks(H, nope + dV, nope, dV), kvWhy),
      output: r.linear(`${a}.o_proj.weight`, d, H * dV, "hidden_size × num_attention_heads·v_head_dim"),
    };
    const moe = config.nRoutedExperts !== null && l >= config.firstKDenseReplace && l % config.moeLayerFreq === 0;
    let ffn: LayerFfn;
    if (moe) {
      const E = config.nRoutedExperts as number;
      const mi = config.moeIntermediateSize;
      const why = "moe_intermediate_size × hidden_size";
      ffn = {
        kind: "moe",
        gate: r.matrix(`${p}.mlp.gate.weight`, E, d, "n_routed_experts × hidden_size"),
        experts: Array.from({ length: E }, (_, e) => swiglu(r, `${p}.mlp.experts.${e}`, d, mi, why, false)),
        shared:
          config.nSharedExperts === null
            ? undefined
            : swiglu(r, `${p}.mlp.shared_experts`, d, mi * config.nSharedExperts, "moe_intermediate_size·n_shared_experts", false),
        topK: config.numExpertsPerTok,
        method: config.topkMethod,
        numGroups: config.nGroup,
        topkGroups: config.topkGroup,
        routedScaling: config.routedScalingFactor,
        normalizeTopK: config.normTopkProb,
      };
    } else {
      ffn = { kind: "dense", weights: swiglu(r, `${p}.mlp`, d, config.intermediateSize, "intermediate_size × hidden_size", false) };
    }
    layers.push({
      inputNorm: rms(r.vector(`${p}.input_layernorm.weight`, d, "hidden_size"), config.rmsNormEps),
      attention: { kind: "mla", weights, rope, scale: config.softmaxScale },
      postNorm: rms(r.vector(`${p}.post_attention_layernorm.weight`, d, "hidden_size"), config.rmsNormEps),
      ffn,
    });
  }
  return {
    embed,
    layers,
    finalNorm: rms(r.vector("model.norm.weight", d, "hidden_size"), config.rmsNormEps),
    lmHead: lmHead(r, config, embed),
  };
}

/**
 * Reads every weight of `config`'s architecture from `store`.
 * @throws FormatError naming the file, tensor and config field on a missing tensor or a shape that
 *   contradicts config.json.
 */
export function buildPretrainedWeights(config: PretrainedConfig, store: TensorStore): PretrainedWeights {
  if (config.family === "llama") return buildLlama(config, store);
  if (config.family === "gpt2") return buildGpt2(config, store);
  return buildDeepseek(config, store);
}
