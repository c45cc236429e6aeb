import { describe, expect, it } from "vitest";
import { type EncoderLayer, type LayerConfig, encoderLayer, initEncoderLayer, randomMatrix } from "@randattn/core";
import { block, ffn, mha, perturbNorms, relErr } from "./literal.js";

// Encoder layer (§3.1.1, Fig. 5) = Block(Block(X, MHA_self), FFN), each sublayer written out literally.
function literalEncoder(x: ReturnType<typeof randomMatrix>, l: EncoderLayer, keyLength?: number) {
  const p = l.config.placement;
  const h = block(x, (t) => mha(t, t, l.selfAttention, { rope: l.rope, keyLength }), p, l.norms.selfAttention);
  return block(h, (t) => ffn(t, l.ffn), p, l.norms.ffn);
}

function perturbed(l: EncoderLayer): EncoderLayer {
  return {
    ...l,
    ffn: l.ffn.b1 ? { ...l.ffn, b1: l.ffn.b1.map((_, j) => 0.1 * Math.sin(j)), b2: l.ffn.b2?.map((_, j) => 0.1 * Math.cos(j)) } : l.ffn,
    norms: { selfAttention: perturbNorms(l.norms.selfAttention, 1), ffn: perturbNorms(l.norms.ffn, 2) },
  };
}

const cases: [string, LayerConfig][] = [
  ["post-LN, LayerNorm, ReLU, MHA", { dModel: 8, numHeads: 2, dHidden: 16 }],
  [
    "pre-LN, RMSNorm, GELU, GQA 4/2",
    { dModel: 8, numHeads: 4, numKvHeads: 2, headDim: 3, dHidden: 12, norm: "rms", placement: "pre", ffn: "gelu" },
  ],
  ["peri-LN, LayerNorm, SwiGLU, MQA", { dModel: 6, numHeads: 3, numKvHeads: 1, headDim: 4, dHidden: 10, placement: "peri", ffn: "swiglu" }],
  [
    "pre-LN, RoPE (half pairing), GEGLU",
    { dModel: 8, numHeads: 2, headDim: 4, dHidden: 8, placement: "pre", ffn: "geglu", rope: { pairing: "half" } },
  ],
];

describe("encoderLayer = literal composition of its sublayers", () => {
  for (const [name, config] of cases) {
    it(name, () => {
      const layer = perturbed(initEncoderLayer(config, [21, "enc", name]));
      const x = randomMatrix(5, config.dModel, {}, [21, "x", name]);
      expect(relErr(encoderLayer(x, layer), literalEncoder(x, layer))).toBeLessThan(1e-12);
    });
  }
  it("with a padding mask: keys ≥ keyLength are ignored", () => {
    const layer = perturbed(initEncoderLayer(cases[1][1], [21, "enc-pad"]));
    const x = randomMatrix(6, 8, {}, [21, "x-pad"]);
    const y = encoderLayer(x, layer, { mask: { kind: "padding", keyLength: 4 } });
    expect(relErr(y, literalEncoder(x, layer, 4))).toBeLessThan(1e-12);
  });
});
