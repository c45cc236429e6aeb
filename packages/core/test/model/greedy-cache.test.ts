import { describe, expect, it } from "vitest";
import {
  type EncoderDecoderConfig,
  type ModelConfig,
  decodeTarget,
  decoderOnlyForward,
  encodeSource,
  greedyGenerate,
  greedyGenerateSeq2Seq,
  initDecoderOnly,
  initEncoderDecoder,
} from "@randattn/core";
import { relDiff, rows } from "./helpers.js";

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
  return best;
}

// The reference: recompute the full causal forward pass on the growing sequence at every step and
// take the argmax of its last row — no cache involved.
const base = { vocabSize: 23, numLayers: 2, dModel: 8, numHeads: 2, dHidden: 16, maxPositions: 40 };
const gpt: [string, ModelConfig][] = [
  ["post-LN, sinusoidal, MHA", { ...base }],
  [
    "pre-LN, learned positions, GQA 4/2, untied head",
    { ...base, numHeads: 4, numKvHeads: 2, placement: "pre", positional: "learned", tieEmbeddings: false },
  ],
  [
    "peri-LN, RoPE, MQA, SwiGLU, RMSNorm",
    { ...base, numHeads: 4, numKvHeads: 1, placement: "peri", positional: "rope", ffn: "swiglu", norm: "rms" },
  ],
];

describe("greedy generation with the KV cache = recomputing the full causal pass each step", () => {
  for (const [name, config] of gpt) {
    it(`decoder-only: ${name}`, () => {
      const model = initDecoderOnly(config, [71, name]);
      const prompt = [4, 19, 7, 1];
      const steps = 12;
      const cached = greedyGenerate(model, prompt, { maxNewTokens: steps });
      const seq = prompt.slice();
      for (let s = 0; s < steps; s++) {
        const logits = decoderOnlyForward(model, seq);
        const last = rows(logits, logits.rows - 1, logits.rows);
        expect(relDiff(rows(cached.logits, s, s + 1), last)).toBeLessThan(1e-12);
        seq.push(argmax(last));
      }
      expect(cached.tokens).toEqual(seq.slice(prompt.length));
      // the model's own uncached path agrees as well
      expect(greedyGenerate(model, prompt, { maxNewTokens: steps, cache: false }).tokens).toEqual(cached.tokens);
      // a degenerate output (the same logits every step) would make the check weak
      expect(relDiff(rows(cached.logits, 1, 2), rows(cached.logits, 0, 1))).toBeGreaterThan(1e-3);
    });
  }

  for (const placement of ["post", "pre"] as const) {
    it(`encoder–decoder (${placement}-LN, GQA, RoPE): cached decoding = full decoder pass each step`, () => {
      const config: EncoderDecoderConfig = {
        ...base,
        sourceVocabSize: 29,
        numHeads: 4,
        numKvHeads: 2,
        placement,
        positional: "rope",
      };
      const model = initEncoderDecoder(config, [72, placement]);
      const source = [3, 28, 11, 5, 17];
      const steps = 10;
      const cached = greedyGenerateSeq2Seq(model, source, { startToken: 0, maxNewTokens: steps });
      const memory = encodeSource(model, source);
      const seq = [0];
      for (let s = 0; s < steps; s++) {
        const logits = decodeTarget(model, memory, seq);
        const last = rows(logits, logits.rows - 1, logits.rows);
        expect(relDiff(rows(cached.logits, s, s + 1), last)).toBeLessThan(1e-12);
        seq.push(argmax(last));
      }
      expect(cached.tokens).toEqual(seq.slice(1));
      expect(relDiff(rows(cached.logits, 1, 2), rows(cached.logits, 0, 1))).toBeGreaterThan(1e-3);
    });
  }

  it("stops after the stop token (included)", () => {
    const model = initDecoderOnly(gpt[0][1], [71, gpt[0][0]]);
    const full = greedyGenerate(model, [4, 19, 7, 1], { maxNewTokens: 12 });
    const stop = full.tokens[3];
    const first = full.tokens.indexOf(stop);
    const stopped = greedyGenerate(model, [4, 19, 7, 1], { maxNewTokens: 12, stopToken: stop });
    expect(stopped.tokens).toEqual(full.tokens.slice(0, first + 1));
    expect(stopped.logits.rows).toBe(first + 1);
  });
});
