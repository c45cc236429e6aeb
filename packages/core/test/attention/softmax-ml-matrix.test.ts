// Softmax weights σ(Q[i,:]Kᵀ/√d_QK) (§2.1) against logits computed by ml-matrix's mmul, an
// independent oracle for the QKᵀ product and the scale.
import { Matrix as MlMatrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { Matrix, attentionWeights, randomMatrix } from "@randattn/core";
import { relErr } from "./reference.js";

describe("softmax weights = σ(ml-matrix QKᵀ · scale)", () => {
  for (const [nQ, nKV, d] of [
    [4, 6, 3],
    [13, 8, 16],
    [32, 40, 64],
  ]) {
    it(`${nQ}×${nKV}, d_QK = ${d}`, () => {
      const q = randomMatrix(nQ, d, {}, [13, "q", d]);
      const k = randomMatrix(nKV, d, {}, [13, "k", d]);
      const logits = new MlMatrix(q.toArray()).mmul(new MlMatrix(k.toArray()).transpose()).mul(1 / Math.sqrt(d));
      const ref = Matrix.from(nQ, nKV, () => 0);
      for (let i = 0; i < nQ; i++) {
        const row = logits.getRow(i);
        const mx = Math.max(...row);
        const e = row.map((x) => Math.exp(x - mx));
        const s = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j < nKV; j++) ref.set(i, j, e[j] / s);
      }
      expect(relErr(attentionWeights(q, k), ref)).toBeLessThan(1e-12);
    });
  }
});
