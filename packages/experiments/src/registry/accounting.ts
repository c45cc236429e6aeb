/** KV-cache accounting methods of Table 3 (core accounting/), run on the `model-preset` problem. */
import { defineMethod } from "./define.js";
import { attentionFlops, kvCacheFloatsPerToken, mhaEquivalentCacheFloatsPerToken, modelKvCacheFloats, ValueError } from "@randattn/core";
import { MODEL_PRESETS } from "./problems.js";
import type { ProblemShape } from "./shape.js";
import type { Cost } from "./types.js";

function presetOf(problem: Pick<ProblemShape, "accounting">, method: string) {
  if (!problem.accounting) throw new ValueError("problem", `the model-preset problem for method "${method}"`, "a tensor problem");
  return MODEL_PRESETS[problem.accounting.preset];
}

export const kvCache = defineMethod({
  name: "kv-cache",
  description:
    "KV-cache accounting of a Table 3 model (core accounting): floats_stored = cached floats (per token and layer, or whole model at `tokens`); flops = one decode step.",
  family: "accounting",
  paramsSchema: {
    type: "object",
    properties: {
      scope: {
        type: "string",
        enum: ["token-layer", "model"],
        default: "token-layer",
        description: "per token and layer (Table 3) or whole model",
      },
      includeRotaryKey: { type: "boolean", default: true, description: "MLA: count the decoupled rotary key d_R (ERRATA: 512 vs 576)" },
      asMha: { type: "boolean", default: false, description: "the cache the same layer would need as plain MHA, H·(d_QK + d_V)" },
    },
    additionalProperties: false,
  },
  exposesWeights: false,
  estimateCost: (problem, params) => kvCacheCost(problem, params),
  run(problem, params) {
    return { output: null, cost: kvCacheCost(problem, params) };
  },
});

/** The accounting of `kv-cache` (a closed form of the preset's sizes): run and plan share it. */
function kvCacheCost(
  problem: Pick<ProblemShape, "accounting">,
  params: { scope: "token-layer" | "model"; includeRotaryKey: boolean; asMha: boolean },
): Cost {
  const preset = presetOf(problem, "kv-cache");
  const tokens = problem.accounting!.tokens;
  const opts = { includeRotaryKey: params.includeRotaryKey };
  const perTokenLayer = params.asMha ? mhaEquivalentCacheFloatsPerToken(preset.attention) : kvCacheFloatsPerToken(preset.attention, opts);
  const floatsStored =
    params.scope === "model"
      ? params.asMha
        ? perTokenLayer * tokens * preset.numLayers
        : modelKvCacheFloats(preset.attention, tokens, preset.numLayers, opts)
      : perTokenLayer;
  const step = attentionFlops(preset.attention, { numQueries: 1, numKeys: tokens, numNewKeys: 1 }).total;
  const flops = params.scope === "model" ? step * preset.numLayers : step;
  return { flops, floatsStored };
}
