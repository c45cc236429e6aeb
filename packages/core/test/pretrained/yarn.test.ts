import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FormatError, parseModelConfig, ropeInverseFrequencies } from "@randattn/core";
import { fixtureDir, relError } from "./helpers.js";

// YaRN's inverse frequencies and attention factor against a torch transcription of transformers'
// `_compute_yarn_parameters` (scripts/models/make_fixtures.py `yarn_inv_freq`, float64), through
// config.json parsing, on every branch HF has: attention_factor given, mscale and/or mscale_all_dim,
// truncate false, no original_max_position_embeddings, default betas, low == high. The two YaRN
// checkpoints (llama-yarn, deepseek-yarn) are compared logit for logit in torch-fixtures.test.ts.
// Both sides evaluate the same float64 formula (pow, log, one division): agreement is to the last
// bit or two, so 1e-15 still catches a wrong ramp step (≥ 1e-2) or a wrong factor.
interface YarnCase {
  head_dim: number;
  rope_theta: number;
  max_position_embeddings: number;
  rope_scaling: Record<string, unknown>;
  inv_freq: number[];
  attention_factor: number;
}
const { cases } = JSON.parse(readFileSync(fixtureDir("yarn-cases.json"), "utf8")) as { cases: YarnCase[] };

function llamaConfig(c: YarnCase): Record<string, unknown> {
  return {
    architectures: ["LlamaForCausalLM"],
    vocab_size: 8,
    hidden_size: 2 * c.head_dim,
    head_dim: c.head_dim,
    intermediate_size: 4,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    max_position_embeddings: c.max_position_embeddings,
    rope_theta: c.rope_theta,
    rope_scaling: c.rope_scaling,
  };
}

describe("YaRN rotary parameters equal transformers' (torch reference)", () => {
  it.each(cases.map((c, i) => [i, JSON.stringify(c.rope_scaling), c] as const))("case %i %s", (_, __, c) => {
    const config = parseModelConfig(llamaConfig(c));
    if (config.family !== "llama") throw new Error("expected a Llama config");
    const { frequencies, magnitude } = ropeInverseFrequencies(c.head_dim, config.ropeTheta, config.ropeScaling);
    expect(relError(frequencies, c.inv_freq)).toBeLessThan(1e-15);
    expect(Math.abs(magnitude - c.attention_factor)).toBeLessThan(1e-15);
  });

  it("a non-positive attention_factor or a non-boolean truncate is a FormatError naming the field", () => {
    const c = cases[0];
    for (const [field, value] of [
      ["attention_factor", 0],
      ["truncate", "no"],
    ] as const) {
      const bad = llamaConfig({ ...c, rope_scaling: { ...c.rope_scaling, [field]: value } });
      expect(() => parseModelConfig(bad)).toThrow(FormatError);
      try {
        parseModelConfig(bad);
      } catch (e) {
        expect((e as FormatError).argument).toBe(`config.json: rope_scaling: ${field}`);
      }
    }
  });
});
