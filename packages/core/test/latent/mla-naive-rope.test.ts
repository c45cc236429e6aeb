import { describe, expect, it } from "vitest";
import {
  Rope,
  ValueError,
  initMlaWeights,
  matmul,
  matmulTransB,
  maxAbsDiff,
  mergeMla,
  mergedMlaAttention,
  mlaAttention,
  mlaToMultiHead,
  multiHeadAttention,
  randomMatrix,
} from "@randattn/core";
import { relErr } from "./literal.js";

// §4.2: RoPE applied to K_h = L W_LK^h after it is built puts R_i R_jᵀ between W_LQQ^h and
// (W_LK^h)ᵀ — no fixed merged W_LQK^h reproduces it.
describe("naive RoPE on the latent keys is not mergeable", () => {
  const cfg = { dIn: 10, numHeads: 2, latentDim: 4, queryLatentDim: 5, headDim: 6 };
  const w = initMlaWeights(cfg, [15, "naive"]);
  const rope = new Rope(cfg.headDim);
  const x = randomMatrix(7, cfg.dIn, {}, [15, "x"]);
  const pos = Array.from({ length: 7 }, (_, i) => i);
  const opts = { rope, queryPositions: pos, keyPositions: pos, mask: { kind: "causal" as const } };

  it("rotated unmerged MLA = its low-rank MHA with RoPE", () => {
    const mha = multiHeadAttention(x, x, mlaToMultiHead(w), opts);
    expect(relErr(mlaAttention(x, x, w, opts), mha)).toBeLessThan(1e-12);
  });

  it("merged-without-rotation differs from the rotated unmerged form", () => {
    const rotated = mlaAttention(x, x, w, opts);
    const merged = mergedMlaAttention(x, x, mergeMla(w), { mask: { kind: "causal" } });
    expect(relErr(merged, rotated)).toBeGreaterThan(1e-3);
  });

  it("the merged form refuses RoPE without a decoupled rotary part", () => {
    expect(() => mergedMlaAttention(x, x, mergeMla(w), opts)).toThrow(ValueError);
    expect(() => mergedMlaAttention(x, x, mergeMla(w), opts)).toThrow(/options.rope: expected merged weights with a decoupled rotary part/);
  });

  it("the bilinear form W_LQQ^h R_i R_jᵀ (W_LK^h)ᵀ changes with i − j, so no single W_LQK^h exists", () => {
    const h = 0;
    const form = (i: number, j: number) =>
      matmulTransB(matmulTransB(matmul(w.queryUp[h], rope.rotationMatrix(i)), rope.rotationMatrix(j)), w.keyUp[h]);
    const merged = mergeMla(w).queryKey[h];
    expect(maxAbsDiff(form(4, 4), merged)).toBeLessThan(1e-12); // i = j: R_i R_iᵀ = I, the merge holds
    expect(maxAbsDiff(form(5, 3), form(2, 0))).toBeLessThan(1e-12); // depends on i − j only …
    expect(maxAbsDiff(form(5, 3), merged)).toBeGreaterThan(1e-2); // … but not constant in it
  });
});
