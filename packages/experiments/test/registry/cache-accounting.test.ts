import { describe, expect, it } from "vitest";
import { DEEPSEEK_V2, GEMMA3_27B, LLAMA3_70B } from "@randattn/core";
import { getMethod, getProblem } from "@randattn/experiments/internal";

const run = (preset: string, params: Record<string, unknown>, tokens = 1000) => {
  const inst = getProblem("model-preset").generate(
    { preset, tokens },
    { baseDir: "/", wantWeights: false, kernel: { kind: "softmax" }, mask: null },
    [1],
  );
  return getMethod("kv-cache").run(
    inst,
    { scope: "token-layer", includeRotaryKey: true, asMha: false, ...params } as never,
    {
      baseDir: "/",
      wantWeights: false,
    },
    [1],
  );
};

describe("kv-cache accounting regenerates Table 3's cache figures from the preset dimensions", () => {
  it("GQA presets: 2·G·d_head floats per token and layer", () => {
    for (const [name, p] of [
      ["llama3-70b", LLAMA3_70B],
      ["gemma3-27b", GEMMA3_27B],
    ] as const) {
      const a = p.attention as { numKvHeads: number; headDim: number };
      expect(run(name, {}).cost.floatsStored).toBe(2 * a.numKvHeads * a.headDim);
    }
  });

  it("DeepSeek-V2: d_L = 512 latent only (Table 3), 576 with the rotary key (ERRATA), 2·H·d_head as MHA", () => {
    const a = DEEPSEEK_V2.attention as { latentDim: number; ropeDim: number; numHeads: number; headDim: number };
    expect(run("deepseek-v2", { includeRotaryKey: false }).cost.floatsStored).toBe(a.latentDim);
    expect(run("deepseek-v2", {}).cost.floatsStored).toBe(a.latentDim + a.ropeDim);
    expect(run("deepseek-v2", { asMha: true }).cost.floatsStored).toBe(2 * a.numHeads * a.headDim);
  });

  it("model scope multiplies by tokens and layers", () => {
    const per = run("llama3-70b", {}).cost.floatsStored;
    expect(run("llama3-70b", { scope: "model" }, 4096).cost.floatsStored).toBe(per * 4096 * LLAMA3_70B.numLayers);
  });
});
