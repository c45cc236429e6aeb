import { describe, expect, it } from "vitest";
import {
  type DecoderLayerConfig,
  concatRows,
  createLayerCache,
  decoderLayer,
  decoderLayerStep,
  initDecoderLayer,
  randomMatrix,
  sliceRows,
} from "@randattn/core";
import { relErr } from "./literal.js";

// §4: with a KV cache, feeding the tokens in chunks (prefill, then one at a time) gives the same
// rows as the full causal pass — every operation except self-attention is row-wise.
const cases: [string, DecoderLayerConfig][] = [
  ["post-LN MHA with cross-attention", { dModel: 8, numHeads: 2, dHidden: 12 }],
  [
    "pre-LN GQA + RoPE, decoder-only",
    { dModel: 8, numHeads: 4, numKvHeads: 2, headDim: 4, norm: "rms", placement: "pre", ffn: "swiglu", rope: {}, crossAttention: false },
  ],
  [
    "peri-LN MQA with cross-attention + RoPE",
    { dModel: 6, numHeads: 3, numKvHeads: 1, headDim: 2, placement: "peri", ffn: "geglu", rope: { pairing: "half" } },
  ],
];

describe("decoderLayerStep (KV cache) = decoderLayer rows", () => {
  for (const [name, config] of cases) {
    it(name, () => {
      const layer = initDecoderLayer(config, [41, name]);
      const n = 7;
      const x = randomMatrix(n, config.dModel, {}, [41, "x", name]);
      const memory = config.crossAttention === false ? undefined : randomMatrix(4, config.dModel, {}, [41, "m", name]);
      const full = decoderLayer(x, layer, memory);
      const cache = createLayerCache(layer);
      const chunks = [sliceRows(x, 0, 3), ...Array.from({ length: n - 3 }, (_, i) => sliceRows(x, 3 + i, 4 + i))];
      const rows = chunks.map((c) => decoderLayerStep(c, layer, cache, memory));
      expect(cache.length).toBe(n);
      expect(relErr(concatRows(rows), full)).toBeLessThan(1e-12);
    });
  }
});
