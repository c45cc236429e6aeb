import { describe, expect, it } from "vitest";
import {
  type AttentionSpec,
  DEEPSEEK_V2,
  GEMMA3_27B,
  kvCacheBreakdown,
  kvCacheFloatsPerToken,
  LLAMA3_70B,
  mhaEquivalentCacheFloatsPerToken,
} from "@randattn/core";

// Per-token-per-layer KV cache (notes, "Memory comparison"): MHA 2·H·d_head, GQA 2·G·d_head, MLA d_L (+ d_R).
describe("KV cache floats per token per layer", () => {
  it("reproduces the paper's figures for the three presets", () => {
    expect(kvCacheFloatsPerToken(LLAMA3_70B.attention)).toBe(2 * 8 * 128);
    expect(kvCacheFloatsPerToken(GEMMA3_27B.attention)).toBe(2 * 16 * 128);
    // DeepSeek-V2: 32,768 as MHA versus the 512-float latent: 64× smaller.
    expect(mhaEquivalentCacheFloatsPerToken(DEEPSEEK_V2.attention)).toBe(2 * 128 * 128);
    expect(kvCacheFloatsPerToken(DEEPSEEK_V2.attention, { includeRotaryKey: false })).toBe(512);
    expect(
      mhaEquivalentCacheFloatsPerToken(DEEPSEEK_V2.attention) / kvCacheFloatsPerToken(DEEPSEEK_V2.attention, { includeRotaryKey: false }),
    ).toBe(64);
    // ERRATA: with the decoupled rotary key d_R = 64 the cache is 576 (default: included).
    expect(kvCacheFloatsPerToken(DEEPSEEK_V2.attention)).toBe(512 + 64);
    expect(kvCacheBreakdown(DEEPSEEK_V2.attention)).toEqual({ keys: 0, values: 0, latent: 512, rotaryKey: 64, total: 576 });
  });

  it("GQA with G = H equals MHA, and MQA equals GQA with G = 1", () => {
    const base = { dIn: 96, numHeads: 6, headDim: 16, valueDim: 8 };
    const mha: AttentionSpec = { form: "mha", ...base };
    const gqaFull: AttentionSpec = { form: "gqa", ...base, numKvHeads: 6 };
    const mqa: AttentionSpec = { form: "mqa", ...base };
    const gqaOne: AttentionSpec = { form: "gqa", ...base, numKvHeads: 1 };
    expect(kvCacheFloatsPerToken(gqaFull)).toBe(kvCacheFloatsPerToken(mha));
    expect(kvCacheFloatsPerToken(mha)).toBe(6 * (16 + 8));
    expect(kvCacheFloatsPerToken(mqa)).toBe(kvCacheFloatsPerToken(gqaOne));
    expect(kvCacheFloatsPerToken(mqa)).toBe(16 + 8);
    for (const G of [1, 2, 3, 6]) expect(kvCacheFloatsPerToken({ form: "gqa", ...base, numKvHeads: G })).toBe(G * (16 + 8));
  });

  it("GQA divides the MHA cache by the group size H/G", () => {
    const { numHeads, numKvHeads } = LLAMA3_70B.attention as { numHeads: number; numKvHeads: number };
    expect(mhaEquivalentCacheFloatsPerToken(LLAMA3_70B.attention) / kvCacheFloatsPerToken(LLAMA3_70B.attention)).toBe(
      numHeads / numKvHeads,
    );
  });

  it("rejects a non-boolean includeRotaryKey", () => {
    expect(() => kvCacheFloatsPerToken(DEEPSEEK_V2.attention, { includeRotaryKey: "yes" as unknown as boolean })).toThrow(
      /includeRotaryKey/,
    );
  });
});
