import { describe, expect, it } from "vitest";
import { decodeTarget, encodeSource, encoderDecoderForward, initEncoderDecoder, outputProbabilities } from "@randattn/core";

// Fig. 8 end to end: source ids (N_src) → encoder → E_{N_L} (N_src×d) → decoder over the target
// prefix (N_tgt) with cross-attention → logits N_tgt×N_T(target) → softmax rows.
describe("encoder–decoder Transformer: shapes through the full model", () => {
  for (const placement of ["post", "pre", "peri"] as const) {
    it(`placement ${placement}: source vocab 13, target vocab 11, N_src = 6, N_tgt = 4, 2 + 3 layers`, () => {
      const model = initEncoderDecoder(
        {
          vocabSize: 11,
          sourceVocabSize: 13,
          numLayers: 2,
          numDecoderLayers: 3,
          dModel: 8,
          numHeads: 2,
          dHidden: 16,
          placement,
          maxPositions: 16,
        },
        [51, placement],
      );
      expect([model.encoderLayers.length, model.decoderLayers.length]).toEqual([2, 3]);
      expect([model.sourceInput.embedding.vocabSize, model.targetInput.embedding.vocabSize]).toEqual([13, 11]);
      const source = [12, 0, 5, 7, 3, 1];
      const target = [0, 10, 4, 2];
      const memory = encodeSource(model, source);
      expect(memory.shape).toBe("6×8");
      const logits = encoderDecoderForward(model, source, target);
      expect(logits.shape).toBe("4×11");
      expect(decodeTarget(model, memory, target).data).toEqual(logits.data);
      const probs = outputProbabilities(logits);
      for (let i = 0; i < probs.rows; i++) {
        const row = probs.row(i);
        expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-15 * row.length);
        expect(row.every((p) => p > 0 && p < 1)).toBe(true);
      }
      // the decoder reads the source: another source sentence changes the logits
      expect(encoderDecoderForward(model, [1, 2, 3], target).data).not.toEqual(logits.data);
    });
  }
});
