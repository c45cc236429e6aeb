import { describe, expect, it } from "vitest";
import {
  type AttentionSpec,
  DEEPSEEK_V2,
  LLAMA3_70B,
  attentionLayerFloats,
  attentionWeightBreakdown,
  attentionWeightFloats,
} from "@randattn/core";

// Table 1: N_heads·N_KV·(d_QK + d_head) + 2·N_heads·d_in·d_QK + N_heads·d_head·(d_in + d_out),
// with N_heads → G in the W_K, W_V and cache terms for GQA.
function table1Literal(H: number, G: number, nKV: number, dIn: number, dOut: number, dQK: number, dHead: number): number {
  const cache = G * nKV * (dQK + dHead);
  const wQ = H * dIn * dQK;
  const wK = G * dIn * dQK;
  const wV = G * dIn * dHead;
  const wO = H * dHead * dOut;
  return cache + wQ + wK + wV + wO;
}

describe("Table 1 weight and layer floats", () => {
  it("MHA equals the paper's total formula literally", () => {
    for (const [H, nKV, dIn, dOut, dQK, dHead] of [
      [1, 1, 1, 1, 1, 1],
      [4, 10, 32, 24, 8, 6],
      [8, 0, 64, 64, 16, 16],
      [64, 4096, 8192, 8192, 128, 128],
    ]) {
      const spec: AttentionSpec = { form: "mha", dIn, dOut, numHeads: H, headDim: dQK, valueDim: dHead };
      const paper = H * nKV * (dQK + dHead) + 2 * H * dIn * dQK + H * dHead * (dIn + dOut);
      expect(attentionLayerFloats(spec, nKV)).toBe(paper);
      expect(attentionWeightFloats(spec)).toBe(paper - H * nKV * (dQK + dHead));
    }
  });

  it("GQA replaces N_heads by G in W_K, W_V and the cache", () => {
    for (const [H, G] of [
      [8, 1],
      [8, 2],
      [8, 8],
      [64, 8],
    ]) {
      const spec: AttentionSpec = { form: "gqa", dIn: 40, dOut: 24, numHeads: H, numKvHeads: G, headDim: 12, valueDim: 10 };
      expect(attentionLayerFloats(spec, 33)).toBe(table1Literal(H, G, 33, 40, 24, 12, 10));
    }
  });

  it("Llama 3 70B attention weights per layer: W_Q, W_K, W_V, W_O", () => {
    const b = attentionWeightBreakdown(LLAMA3_70B.attention);
    expect(b.terms.map((t) => [t.name, t.floats])).toEqual([
      ["W_Q", 8192 * 128 * 64],
      ["W_K", 8192 * 128 * 8],
      ["W_V", 8192 * 128 * 8],
      ["W_O", 64 * 128 * 8192],
    ]);
    expect(b.total).toBe(table1Literal(64, 8, 0, 8192, 8192, 128, 128));
  });

  it("MLA unmerged and merged weights follow the §4.2 factorization", () => {
    const [dIn, H, dQK, dV, dL, dLQ, dR] = [5120, 128, 128, 128, 512, 1536, 64];
    const unmerged = dIn * dLQ + dLQ * dQK * H + dIn * dL + dL * dQK * H + dL * dV * H + H * dV * dIn + dLQ * dR * H + dIn * dR;
    const merged = dIn * dLQ + dLQ * dL * H + dIn * dL + H * dL * dIn + dLQ * dR * H + dIn * dR;
    expect(attentionWeightFloats(DEEPSEEK_V2.attention)).toBe(unmerged);
    expect(attentionWeightFloats(DEEPSEEK_V2.attention, { mlaForm: "merged" })).toBe(merged);
    const names = attentionWeightBreakdown(DEEPSEEK_V2.attention, { mlaForm: "merged" }).terms.map((t) => t.name);
    expect(names).toEqual(["W_LQ", "W_LQK", "W_L", "W_LO", "W_QR", "W_KR"]);
  });

  it("MLA without a query latent projects queries straight from X", () => {
    const spec: AttentionSpec = { form: "mla", dIn: 20, numHeads: 3, headDim: 4, valueDim: 5, latentDim: 6 };
    const b = attentionWeightBreakdown(spec);
    expect(b.terms.map((t) => t.name)).toEqual(["W_Q", "W_L", "W_LK", "W_LV", "W_O"]);
    expect(b.total).toBe(20 * 4 * 3 + 20 * 6 + 6 * 4 * 3 + 6 * 5 * 3 + 3 * 5 * 20);
    expect(attentionWeightFloats(spec, { mlaForm: "merged" })).toBe(20 * 6 * 3 + 20 * 6 + 3 * 6 * 20);
  });

  it("rejects a negative or fractional token count", () => {
    expect(() => attentionLayerFloats(LLAMA3_70B.attention, -1)).toThrow(/numTokens: expected an integer ≥ 0, got -1/);
    expect(() => attentionLayerFloats(LLAMA3_70B.attention, 1.5)).toThrow(/numTokens/);
  });
});
