/**
 * A problem's SIZES without its tensors (issue 13, `randattn plan`): what a method's cost formula
 * reads. Every `ProblemInstance` has a shape (`shapeOf`), and a generator whose tensors are costly
 * to make — a checkpoint forward, files on disk — gives it from its params alone
 * (`ProblemDefinition.shape`: a checkpoint's sizes from its config.json), so `plan` estimates a
 * sweep's flops without drawing or loading anything. A `ProblemInstance` is itself a valid shape
 * for the tensor fields (a `Matrix` has `rows` and `cols`), so a cost formula written over shapes
 * is the one `run` reports.
 */
import type { PretrainedConfig } from "@randattn/core";
import type { Dims, ModelAttentionShape, ProblemInstance, ProblemShape } from "./types.js";

export type { Dims, HeadShape, ModelAttentionShape, ProblemShape } from "./types.js";

/** The attention sizes of a checkpoint's config (config.json, parsed by core's `parseModelConfig`). */
export function attentionShapeOfConfig(config: PretrainedConfig): ModelAttentionShape {
  if (config.family === "deepseek_v2") {
    return {
      numLayers: config.numLayers,
      numHeads: config.numHeads,
      numKvHeads: config.numHeads,
      dQK: config.qkNopeHeadDim + config.qkRopeHeadDim,
      dV: config.vHeadDim,
      latentDim: config.kvLoraRank,
      ropeDim: config.qkRopeHeadDim,
    };
  }
  const headDim = config.family === "llama" ? config.headDim : config.hiddenSize / config.numHeads;
  const numKvHeads = config.family === "llama" ? config.numKvHeads : config.numHeads;
  return { numLayers: config.numLayers, numHeads: config.numHeads, numKvHeads, dQK: headDim, dV: headDim };
}

/** The pieces of a model an instance's shape is read from (structurally: a checkpoint or core's decoder stack). */
type AnyModel =
  | { readonly config: PretrainedConfig; readonly weights: unknown }
  | {
      readonly kind: "decoder-only";
      readonly layers: readonly {
        readonly selfAttention: { readonly queries: readonly Dims[]; readonly keys: readonly Dims[]; readonly values: readonly Dims[] };
      }[];
      readonly config: { readonly numLayers: number };
    };

/** The attention sizes of a loaded model (a `PretrainedModel`, or core's synthetic decoder stack). */
export function attentionShapeOfModel(model: AnyModel): ModelAttentionShape {
  if ("kind" in model && model.kind === "decoder-only") {
    const w = model.layers[0].selfAttention;
    return {
      numLayers: model.config.numLayers,
      numHeads: w.queries.length,
      numKvHeads: w.keys.length,
      dQK: w.queries[0].cols,
      dV: w.values[0].cols,
    };
  }
  return attentionShapeOfConfig((model as { config: PretrainedConfig }).config);
}

/** The shape of a drawn instance (sharing of K/V objects between heads is kept). */
export function shapeOf(problem: ProblemInstance): ProblemShape {
  const decode = (problem as { decode?: { model: AnyModel; text: readonly number[]; promptLength: number } }).decode;
  return {
    ...problem,
    ...(problem.pretrained
      ? { pretrained: { attention: attentionShapeOfModel(problem.pretrained.model), tokens: problem.pretrained.ids.length } }
      : {}),
    ...(decode
      ? {
          decode: {
            attention: attentionShapeOfModel(decode.model),
            promptLength: decode.promptLength,
            steps: decode.text.length - decode.promptLength,
          },
        }
      : {}),
  } as ProblemShape;
}
