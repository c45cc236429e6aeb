import { describe, expect, it } from "vitest";
import { ValueError, initMlaWeights, mergeMla, mergedMlaAttention, mlaAttention, randomMatrix } from "@randattn/core";
import { relErr } from "./literal.js";

// ERRATA: the merged form keeps the unmerged scale 1/√d_QK (1/√(d_head + d_R) with decoupled
// RoPE); it is not the 1/√d_L the merged vectors' width would suggest, so it is carried along.
describe("MLA kernel scale and kernel kinds", () => {
  const cfg = { dIn: 8, numHeads: 2, latentDim: 9, queryLatentDim: 4, headDim: 3 };
  const w = initMlaWeights(cfg, [16, "scale"]);
  const merged = mergeMla(w);
  const x = randomMatrix(6, cfg.dIn, {}, [16, "x"]);
  const unmerged = mlaAttention(x, x, w);

  it("the carried scale is 1/√d_head; the merged width's 1/√d_L would be wrong", () => {
    expect(merged.scale).toBe(1 / Math.sqrt(cfg.headDim));
    const wrong = mergedMlaAttention(x, x, merged, { kernel: { kind: "softmax", scale: 1 / Math.sqrt(cfg.latentDim) } });
    expect(relErr(wrong, unmerged)).toBeGreaterThan(1e-3);
  });

  it("an explicit softmax scale is honoured by both forms", () => {
    const kernel = { kind: "softmax" as const, scale: 0.37 };
    const u = mlaAttention(x, x, w, { kernel });
    expect(relErr(u, unmerged)).toBeGreaterThan(1e-3);
    expect(relErr(mergedMlaAttention(x, x, merged, { kernel }), u)).toBeLessThan(1e-12);
  });

  it("a dot kernel f(⟨q,k⟩) merges too", () => {
    const kernel = { kind: "dot" as const, f: (s: number) => s * s + 0.5, scale: 0.5 };
    const u = mlaAttention(x, x, w, { kernel });
    expect(relErr(mergedMlaAttention(x, x, merged, { kernel }), u)).toBeLessThan(1e-12);
  });

  it("a pairwise kernel is refused (it does not depend on ⟨q,k⟩ only)", () => {
    const kernel = { kind: "pairwise" as const, fn: () => 1 };
    expect(() => mlaAttention(x, x, w, { kernel })).toThrow(ValueError);
    expect(() => mergedMlaAttention(x, x, merged, { kernel })).toThrow(
      /options.kernel: expected kind "softmax" or "dot".*got kind "pairwise"/,
    );
  });
});
