import { describe, expect, it } from "vitest";
import { Matrix, applyNorm, decoderLayer, decoderOnlyForward, initDecoderOnly, sinusoidalPositionalEncoding } from "@randattn/core";
import { relDiff } from "./helpers.js";

// Fig. 9 as a literal chain: X = E[ids] + PE → (Peri-LN input norm) → decoder layers → (final norm) → logits = H Eᵀ.
describe("decoderOnlyForward = embedding + positions → [input norm] → layers → [final norm] → tied head", () => {
  for (const placement of ["post", "pre", "peri"] as const) {
    it(`placement ${placement}`, () => {
      const V = 9;
      const d = 6;
      const model = initDecoderOnly({ vocabSize: V, numLayers: 2, dModel: d, numHeads: 2, dHidden: 8, placement, maxPositions: 10 }, [
        81,
        placement,
      ]);
      // which model-level norms exist: Peri-LN both, Pre-LN the final one, Post-LN none
      expect([model.input.norm !== undefined, model.finalNorm !== undefined]).toEqual(
        { post: [false, false], pre: [false, true], peri: [true, true] }[placement],
      );
      const ids = [2, 8, 0, 5];
      const E = model.input.embedding.table;
      const pe = sinusoidalPositionalEncoding(ids.length, d);
      let x = Matrix.from(ids.length, d, (i, j) => E.get(ids[i], j) + pe.get(i, j));
      if (model.input.norm) x = applyNorm(x, model.input.norm);
      for (const layer of model.layers) x = decoderLayer(x, layer);
      if (model.finalNorm) x = applyNorm(x, model.finalNorm);
      const logits = Matrix.from(ids.length, V, (i, v) => {
        let s = 0;
        for (let j = 0; j < d; j++) s += x.get(i, j) * E.get(v, j);
        return s;
      });
      expect(relDiff(decoderOnlyForward(model, ids).data, logits.data)).toBeLessThan(1e-13);
    });
  }
});
