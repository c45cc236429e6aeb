import { describe, expect, it } from "vitest";
import { type ModelConfig, decoderOnlyForward, initDecoderOnly } from "@randattn/core";
import { relDiff, rows } from "./helpers.js";

// GPT (Fig. 9) is causal: logits row t depends on tokens 0 … t only.
const base = { vocabSize: 17, numLayers: 2, dModel: 8, numHeads: 2, dHidden: 16, maxPositions: 32 };
const cases: [string, ModelConfig][] = [
  ["post-LN, sinusoidal", { ...base }],
  ["pre-LN, learned positions, GQA", { ...base, numHeads: 4, numKvHeads: 2, placement: "pre", positional: "learned" }],
  ["peri-LN, RoPE, SwiGLU, RMSNorm", { ...base, placement: "peri", positional: "rope", ffn: "swiglu", norm: "rms" }],
];

describe("decoder-only: output at position t is independent of tokens after t", () => {
  for (const [name, config] of cases) {
    it(name, () => {
      const model = initDecoderOnly(config, [61, name]);
      const ids = [3, 14, 1, 5, 9, 2, 6, 0];
      const ref = decoderOnlyForward(model, ids);
      for (const t of [0, 3, 6]) {
        const changed = ids.slice();
        for (let j = t + 1; j < ids.length; j++) changed[j] = (ids[j] + 7) % 17;
        const out = decoderOnlyForward(model, changed);
        // rows ≤ t agree to rounding; row t + 1 (which sees a changed token) does not
        expect(relDiff(rows(out, 0, t + 1), rows(ref, 0, t + 1))).toBeLessThan(1e-13);
        expect(relDiff(rows(out, t + 1, t + 2), rows(ref, t + 1, t + 2))).toBeGreaterThan(1e-3);
        // and the prefix alone gives the same rows
        expect(relDiff(decoderOnlyForward(model, ids.slice(0, t + 1)).data, rows(ref, 0, t + 1))).toBeLessThan(1e-13);
      }
    });
  }
});
