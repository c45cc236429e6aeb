import { describe, expect, it } from "vitest";
import { type AttentionSpec, ValueError, attentionWeightFloats, kvCacheFloatsPerToken, resolveAttentionSpec } from "@randattn/core";

describe("AttentionSpec validation", () => {
  it("fills defaults: dOut = dIn, valueDim = headDim, G = H for MHA and 1 for MQA", () => {
    expect(resolveAttentionSpec({ form: "mha", dIn: 32, numHeads: 4, headDim: 8 })).toMatchObject({ dOut: 32, valueDim: 8, numKvHeads: 4 });
    expect(resolveAttentionSpec({ form: "mqa", dIn: 32, numHeads: 4, headDim: 8 })).toMatchObject({ numKvHeads: 1 });
    expect(resolveAttentionSpec({ form: "mla", dIn: 32, numHeads: 4, headDim: 8, latentDim: 6 })).toMatchObject({
      queryLatentDim: 0,
      ropeDim: 0,
    });
  });

  const bad: [string, unknown, RegExp][] = [
    [
      "non-divisible GQA heads",
      { form: "gqa", dIn: 32, numHeads: 6, numKvHeads: 4, headDim: 8 },
      /spec\.numKvHeads: expected a divisor of numHeads = 6, got 4/,
    ],
    ["GQA without numKvHeads", { form: "gqa", dIn: 32, numHeads: 6, headDim: 8 }, /spec\.numKvHeads/],
    [
      "GQA with G > H",
      { form: "gqa", dIn: 32, numHeads: 4, numKvHeads: 8, headDim: 8 },
      /spec\.numKvHeads: expected an integer in \[1, 4\], got 8/,
    ],
    ["MHA with G ≠ H", { form: "mha", dIn: 32, numHeads: 4, numKvHeads: 2, headDim: 8 }, /spec\.numKvHeads: expected numHeads = 4/],
    ["MQA with G ≠ 1", { form: "mqa", dIn: 32, numHeads: 4, numKvHeads: 2, headDim: 8 }, /spec\.numKvHeads: expected 1/],
    [
      "unknown form",
      { form: "linear", dIn: 32, numHeads: 4, headDim: 8 },
      /spec\.form: expected one of "mha", "gqa", "mqa", "mla", got "linear"/,
    ],
    ["zero heads", { form: "mha", dIn: 32, numHeads: 0, headDim: 8 }, /spec\.numHeads: expected an integer ≥ 1, got 0/],
    ["fractional dIn", { form: "mha", dIn: 3.5, numHeads: 1, headDim: 8 }, /spec\.dIn: expected an integer ≥ 1, got 3\.5/],
    ["NaN headDim", { form: "mha", dIn: 8, numHeads: 1, headDim: Number.NaN }, /spec\.headDim: expected an integer ≥ 1, got NaN/],
    ["MLA without latentDim", { form: "mla", dIn: 8, numHeads: 1, headDim: 8 }, /spec\.latentDim/],
    [
      "negative ropeDim",
      { form: "mla", dIn: 8, numHeads: 1, headDim: 8, latentDim: 4, ropeDim: -1 },
      /spec\.ropeDim: expected an integer ≥ 0, got -1/,
    ],
    ["not an object", null, /spec: expected an AttentionSpec object, got null/],
  ];
  for (const [name, spec, message] of bad) {
    it(`rejects ${name} with a ValueError naming the field`, () => {
      expect(() => resolveAttentionSpec(spec as AttentionSpec)).toThrow(ValueError);
      expect(() => kvCacheFloatsPerToken(spec as AttentionSpec)).toThrow(message);
      expect(() => attentionWeightFloats(spec as AttentionSpec)).toThrow(message);
    });
  }

  it("rejects an unknown mlaForm", () => {
    expect(() =>
      attentionWeightFloats({ form: "mla", dIn: 8, numHeads: 1, headDim: 8, latentDim: 4 }, { mlaForm: "fused" as unknown as "merged" }),
    ).toThrow(/options\.mlaForm: expected one of "unmerged", "merged", got "fused"/);
  });
});
