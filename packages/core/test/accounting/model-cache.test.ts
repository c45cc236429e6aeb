import { describe, expect, it } from "vitest";
import { DEEPSEEK_V2, GEMMA3_27B, LLAMA3_70B, bytesPerElement, modelKvCacheBytes, modelKvCacheFloats } from "@randattn/core";

// Whole-model cache (notes §4): 2·N_L·N_heads·N_KV·d floats for MHA; here G heads (GQA) or d_L + d_R (MLA).
describe("whole-model KV cache", () => {
  it("multiplies per-token-per-layer floats by tokens, layers and batch", () => {
    expect(modelKvCacheFloats(LLAMA3_70B.attention, 8192, 80)).toBe(8192 * 80 * 2 * 8 * 128);
    expect(modelKvCacheFloats(GEMMA3_27B.attention, 1000, 62, { batchSize: 3 })).toBe(3 * 1000 * 62 * 2 * 16 * 128);
    expect(modelKvCacheFloats(DEEPSEEK_V2.attention, 4096, 60)).toBe(4096 * 60 * (512 + 64));
    expect(modelKvCacheFloats(DEEPSEEK_V2.attention, 4096, 60, { includeRotaryKey: false })).toBe(4096 * 60 * 512);
    expect(modelKvCacheFloats(LLAMA3_70B.attention, 0, 80)).toBe(0);
  });

  it("converts to bytes with the dtype's width (bfloat16 by default)", () => {
    expect(modelKvCacheBytes(LLAMA3_70B.attention, 131072, 80)).toBe(131072 * 80 * 2048 * 2);
    // 128k tokens of Llama 3 70B in bf16 = 40 GiB exactly: 2^17 · 80 · 2^11 · 2 = 80 · 2^29 B.
    expect(modelKvCacheBytes(LLAMA3_70B.attention, 131072, 80) / 2 ** 30).toBe(40);
    expect(modelKvCacheBytes(LLAMA3_70B.attention, 10, 2, "float32")).toBe(10 * 2 * 2048 * 4);
    expect(modelKvCacheBytes(LLAMA3_70B.attention, 10, 2, "int4")).toBe((10 * 2 * 2048) / 2);
    expect([bytesPerElement("float64"), bytesPerElement("float16"), bytesPerElement("float8")]).toEqual([8, 2, 1]);
  });

  it("rejects bad counts and dtypes", () => {
    expect(() => modelKvCacheFloats(LLAMA3_70B.attention, 10, 0)).toThrow(/numLayers: expected an integer ≥ 1, got 0/);
    expect(() => modelKvCacheFloats(LLAMA3_70B.attention, 10, 2, { batchSize: 0 })).toThrow(/options\.batchSize/);
    expect(() => modelKvCacheBytes(LLAMA3_70B.attention, 10, 2, "fp12" as "float32")).toThrow(/dtype: expected one of .*got "fp12"/);
  });
});
