/**
 * Sizes of a checkpoint read off its config: parameter count, weight memory and the KV-cache floats
 * per token in the style of the paper's Table 3 (what one token adds to the cache, per layer and in
 * all layers, against the MHA cache of the same heads).
 */
import type { PretrainedConfig } from "../checkpoint/config.js";

/** Summary printed by `randattn model info`. */
export interface ModelInfo {
  readonly architecture: string;
  readonly attention: "MHA" | "GQA" | "MQA" | "MLA";
  readonly numLayers: number;
  readonly hiddenSize: number;
  readonly numHeads: number;
  /** G (GQA) or H (MHA/MLA). */
  readonly numKvHeads: number;
  readonly vocabSize: number;
  /** Parameters as Hugging Face counts them (tied embeddings once). */
  readonly parameters: number;
  /** Cache floats one token adds in one layer: 2·G·d_head (GQA) or d_L + d_R (MLA). */
  readonly kvFloatsPerTokenPerLayer: number;
  /** Same for the whole model. */
  readonly kvFloatsPerToken: number;
  /** The MHA cache of the same H heads per token and layer: 2·H·d_head (MLA: H·(d_qk + d_v)). */
  readonly mhaFloatsPerTokenPerLayer: number;
  /** Bytes of float64 weights (parameters × 8), what loading into RandAttn needs. */
  readonly float64Bytes: number;
}

/** Parameter count of a config (every weight and bias tensor the checkpoint holds). */
export function parameterCount(c: PretrainedConfig): number {
  const d = c.hiddenSize;
  const embed = c.vocabSize * d;
  const head = c.tieWordEmbeddings ? 0 : c.vocabSize * d;
  if (c.family === "gpt2") {
    const perLayer = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * c.innerSize + c.innerSize) + (c.innerSize * d + d);
    return embed + head + c.maxPositions * d + c.numLayers * perLayer + 2 * d;
  }
  if (c.family === "llama") {
    const { numHeads: H, numKvHeads: G, headDim: dh, intermediateSize: f } = c;
    const attn = d * H * dh + 2 * d * G * dh + H * dh * d + (c.qkvBias ? (H + 2 * G) * dh : 0) + (c.outputBias ? d : 0);
    const mlp = 3 * d * f + (c.mlpBias ? 2 * f + d : 0);
    return embed + head + c.numLayers * (attn + mlp + 2 * d) + d;
  }
  const { numHeads: H, qkNopeHeadDim: nope, qkRopeHeadDim: dR, vHeadDim: dV, kvLoraRank: dL, qLoraRank: dQ } = c;
  const q = dQ === null ? d * H * (nope + dR) : d * dQ + dQ + dQ * H * (nope + dR);
  const attn = q + d * (dL + dR) + dL + dL * H * (nope + dV) + H * dV * d;
  let total = embed + head + d;
  for (let l = 0; l < c.numLayers; l++) {
    const moe = c.nRoutedExperts !== null && l >= c.firstKDenseReplace && l % c.moeLayerFreq === 0;
    const mlp = moe
      ? c.nRoutedExperts! * d + c.nRoutedExperts! * 3 * d * c.moeIntermediateSize + (c.nSharedExperts ?? 0) * 3 * d * c.moeIntermediateSize
      : 3 * d * c.intermediateSize;
    total += attn + mlp + 2 * d;
  }
  return total;
}

/** The {@link ModelInfo} of a config. */
export function modelInfo(c: PretrainedConfig): ModelInfo {
  const parameters = parameterCount(c);
  const base = {
    architecture: c.architecture,
    numLayers: c.numLayers,
    hiddenSize: c.hiddenSize,
    numHeads: c.numHeads,
    vocabSize: c.vocabSize,
  };
  let perLayer: number;
  let mha: number;
  let G: number;
  let kind: ModelInfo["attention"];
  if (c.family === "deepseek_v2") {
    perLayer = c.kvLoraRank + c.qkRopeHeadDim;
    mha = c.numHeads * (c.qkNopeHeadDim + c.qkRopeHeadDim + c.vHeadDim);
    G = c.numHeads;
    kind = "MLA";
  } else {
    const dh = c.family === "gpt2" ? c.hiddenSize / c.numHeads : c.headDim;
    G = c.family === "gpt2" ? c.numHeads : c.numKvHeads;
    perLayer = 2 * G * dh;
    mha = 2 * c.numHeads * dh;
    kind = G === c.numHeads ? "MHA" : G === 1 ? "MQA" : "GQA";
  }
  return {
    ...base,
    attention: kind,
    numKvHeads: G,
    parameters,
    kvFloatsPerTokenPerLayer: perLayer,
    kvFloatsPerToken: perLayer * c.numLayers,
    mhaFloatsPerTokenPerLayer: mha,
    float64Bytes: parameters * 8,
  };
}
