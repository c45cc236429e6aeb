import { describe, expect, it } from "vitest";
import { encoderOnlyForward, encoderOnlyHidden, initEncoderOnly } from "@randattn/core";
import { relDiff, rows } from "./helpers.js";

// BERT-like (§3.3): every token attends to every token — bidirectional, unlike the GPT stack.
describe("encoder-only stack", () => {
  const model = initEncoderOnly(
    { vocabSize: 15, numLayers: 2, dModel: 8, numHeads: 2, dHidden: 12, placement: "pre", positional: "learned", maxPositions: 12 },
    [91],
  );
  const ids = [1, 7, 3, 12, 4, 0];
  it("shapes: hidden N×d, logits N×N_T", () => {
    expect(encoderOnlyHidden(model, ids).shape).toBe("6×8");
    expect(encoderOnlyForward(model, ids).shape).toBe("6×15");
  });
  it("is bidirectional: changing the last token changes the first row", () => {
    const a = encoderOnlyHidden(model, ids);
    const b = encoderOnlyHidden(model, [...ids.slice(0, 5), 9]);
    expect(relDiff(rows(b, 0, 1), rows(a, 0, 1))).toBeGreaterThan(1e-3);
  });
  it("padding: with sourceLength = 4 the real rows ignore the padded tokens and equal the unpadded pass", () => {
    const real = encoderOnlyHidden(model, ids.slice(0, 4));
    const padA = encoderOnlyHidden(model, ids, { sourceLength: 4 });
    const padB = encoderOnlyHidden(model, [...ids.slice(0, 4), 14, 14], { sourceLength: 4 });
    expect(relDiff(rows(padA, 0, 4), real.data)).toBeLessThan(1e-13);
    expect(relDiff(rows(padB, 0, 4), real.data)).toBeLessThan(1e-13);
  });
});
