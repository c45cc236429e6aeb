import { Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { Matrix, initMlaWeights, mergeMla } from "@randattn/core";
import { relErr } from "./literal.js";

// The merged weights are §4.2's products, checked with ml-matrix as the oracle.
describe("mergeMla forms W_LQK^h = W_LQQ^h (W_LK^h)ᵀ and W_LO = blockdiag(W_LV^h) W_O", () => {
  const cfg = { dIn: 9, numHeads: 4, latentDim: 5, queryLatentDim: 3, headDim: 6, valueDim: 2, dOut: 8, ropeDim: 2 };
  const w = initMlaWeights(cfg, [12, "merge"]);
  const merged = mergeMla(w);
  const ml = (m: Matrix) => m.toMlMatrix();

  it("W_LQK^h", () => {
    for (let h = 0; h < cfg.numHeads; h++) {
      const want = Matrix.fromMlMatrix(ml(w.queryUp[h]).mmul(ml(w.keyUp[h]).transpose()));
      expect(merged.queryKey[h].shape).toBe(`${cfg.queryLatentDim}×${cfg.latentDim}`);
      expect(relErr(merged.queryKey[h], want)).toBeLessThan(1e-14);
    }
  });

  it("W_LO through an explicit block diagonal", () => {
    const bd = MlMatrix.zeros(cfg.numHeads * cfg.latentDim, cfg.numHeads * cfg.valueDim);
    for (let h = 0; h < cfg.numHeads; h++) bd.setSubMatrix(ml(w.valueUp[h]), h * cfg.latentDim, h * cfg.valueDim);
    const want = Matrix.fromMlMatrix(bd.mmul(ml(w.output)));
    expect(merged.latentOutput.shape).toBe(`${cfg.numHeads * cfg.latentDim}×${cfg.dOut}`);
    expect(relErr(merged.latentOutput, want)).toBeLessThan(1e-14);
  });

  it("carries the scale 1/√(d_head + d_R) and the rotary weights unchanged (copies)", () => {
    expect(merged.scale).toBe(1 / Math.sqrt(cfg.headDim + cfg.ropeDim));
    expect(Array.from(merged.keyRope!.data)).toEqual(Array.from(w.keyRope!.data));
    expect(merged.keyRope).not.toBe(w.keyRope);
    expect(merged.queryRope!.map((m) => Array.from(m.data))).toEqual(w.queryRope!.map((m) => Array.from(m.data)));
  });
});
