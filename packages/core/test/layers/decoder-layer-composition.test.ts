import { describe, expect, it } from "vitest";
import { type DecoderLayer, type DecoderLayerConfig, type Matrix, decoderLayer, initDecoderLayer, randomMatrix } from "@randattn/core";
import { block, ffn, mha, perturbNorms, relErr } from "./literal.js";

// Decoder layer (§3.2, Fig. 6): causal self-attention → cross-attention over the encoder output → FFN.
function literalDecoder(x: Matrix, l: DecoderLayer, memory?: Matrix, keyLength?: number): Matrix {
  const p = l.config.placement;
  let h = block(x, (t) => mha(t, t, l.selfAttention, { causal: true, rope: l.rope }), p, l.norms.selfAttention);
  if (memory && l.crossAttention && l.norms.crossAttention) {
    const cross = l.crossAttention;
    h = block(h, (t) => mha(t, memory, cross, { keyLength }), p, l.norms.crossAttention);
  }
  return block(h, (t) => ffn(t, l.ffn), p, l.norms.ffn);
}

function perturbed(l: DecoderLayer): DecoderLayer {
  return {
    ...l,
    norms: {
      selfAttention: perturbNorms(l.norms.selfAttention, 1),
      crossAttention: l.norms.crossAttention && perturbNorms(l.norms.crossAttention, 2),
      ffn: perturbNorms(l.norms.ffn, 3),
    },
  };
}

const cases: [string, DecoderLayerConfig][] = [
  ["post-LN, LayerNorm, ReLU, MHA", { dModel: 8, numHeads: 2, dHidden: 16 }],
  [
    "pre-LN, RMSNorm, ReGLU, GQA 4/2",
    { dModel: 8, numHeads: 4, numKvHeads: 2, headDim: 3, dHidden: 12, norm: "rms", placement: "pre", ffn: "reglu" },
  ],
  [
    "peri-LN, RMSNorm, GLU, MQA, RoPE",
    { dModel: 6, numHeads: 2, numKvHeads: 1, headDim: 4, dHidden: 10, placement: "peri", norm: "rms", ffn: "glu", rope: {} },
  ],
];

describe("decoderLayer = literal composition (masked self-attention → cross-attention → FFN)", () => {
  for (const [name, config] of cases) {
    it(`${name}, with cross-attention (N_tgt = 5 ≠ N_src = 7)`, () => {
      const layer = perturbed(initDecoderLayer(config, [31, "dec", name]));
      const x = randomMatrix(5, config.dModel, {}, [31, "x", name]);
      const memory = randomMatrix(7, config.dModel, {}, [31, "mem", name]);
      expect(relErr(decoderLayer(x, layer, memory), literalDecoder(x, layer, memory))).toBeLessThan(1e-12);
      // a padded source: cross-attention ignores memory rows ≥ 4
      const masked = decoderLayer(x, layer, memory, { memoryMask: { kind: "padding", keyLength: 4 } });
      expect(relErr(masked, literalDecoder(x, layer, memory, 4))).toBeLessThan(1e-12);
    });
    it(`${name}, decoder-only (no cross-attention)`, () => {
      const layer = perturbed(initDecoderLayer({ ...config, crossAttention: false }, [31, "gpt", name]));
      expect(layer.crossAttention).toBeUndefined();
      const x = randomMatrix(6, config.dModel, {}, [31, "x2", name]);
      expect(relErr(decoderLayer(x, layer), literalDecoder(x, layer))).toBeLessThan(1e-12);
    });
  }
});
