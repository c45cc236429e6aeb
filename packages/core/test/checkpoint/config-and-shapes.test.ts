import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  FormatError,
  Matrix,
  PretrainedModel,
  Rope,
  ShapeError,
  ValueError,
  encodeSafetensors,
  memoryStore,
  modelInfo,
  parameterCount,
  parseModelConfig,
  parseSafetensors,
  ropeInverseFrequencies,
} from "@randattn/core";
import { loadPretrained, openCheckpointStore, readModelConfig } from "@randattn/core/node";
import { fixtureDir } from "../pretrained/helpers.js";

function catchError<T extends Error>(f: () => unknown, type: new (...a: never[]) => T): T {
  try {
    f();
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error(`expected a ${type.name}`);
}

const LLAMA = JSON.parse(readFileSync(`${fixtureDir("llama-tied-llama3")}/config.json`, "utf8"));

describe("config.json → typed config, as transformers computes it", () => {
  it("Llama defaults: G = H, head_dim = d/H, untied, θ = 10000; llama3 scaling keeps/blends/divides the three bands", () => {
    const c = parseModelConfig({
      architectures: ["LlamaForCausalLM"],
      vocab_size: 10,
      hidden_size: 8,
      intermediate_size: 4,
      num_hidden_layers: 1,
      num_attention_heads: 2,
    });
    if (c.family !== "llama") throw new Error("llama");
    expect([c.numKvHeads, c.headDim, c.tieWordEmbeddings, c.ropeTheta, c.rmsNormEps, c.qkvBias]).toEqual([2, 4, false, 10000, 1e-6, false]);
    const scaling = { kind: "llama3", factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } as const;
    const base = ropeInverseFrequencies(128, 500000).frequencies;
    const f = ropeInverseFrequencies(128, 500000, scaling).frequencies;
    const wave = (x: number) => (2 * Math.PI) / x;
    for (let p = 0; p < 64; p++) {
      if (wave(base[p]) < 8192 / 4) expect(f[p]).toBe(base[p]);
      else if (wave(base[p]) > 8192) expect(f[p]).toBe(base[p] / 8);
      else expect(f[p]).toBeGreaterThan(base[p] / 8);
    }
  });

  it("Rope takes explicit frequencies and a cos/sin magnitude (YaRN's mscale ratio)", () => {
    const x = Matrix.from(3, 4, (i, j) => i - j + 0.5);
    const pos = [0, 1, 5];
    const f = [0.5, 0.25];
    const r1 = new Rope(4, { pairing: "half", frequencies: f }).apply(x, pos);
    const r2 = new Rope(4, { pairing: "half", frequencies: f, magnitude: 2 }).apply(x, pos);
    for (let i = 0; i < r1.data.length; i++) expect(r2.data[i]).toBe(2 * r1.data[i]);
    // row 2 pair 0 is coordinates (0, 2) rotated by 5·0.5
    const [a, b] = [x.get(2, 0), x.get(2, 2)];
    expect(r1.get(2, 0)).toBeCloseTo(a * Math.cos(2.5) - b * Math.sin(2.5), 15);
    expect(() => new Rope(4, { frequencies: [1] })).toThrow(ShapeError);
    const y = ropeInverseFrequencies(8, 10000, {
      kind: "yarn",
      factor: 4,
      originalMaxPositions: 64,
      betaFast: 32,
      betaSlow: 1,
      mscale: 1,
      mscaleAllDim: 0,
    });
    expect(y.magnitude).toBeCloseTo(0.1 * Math.log(4) + 1, 15);
    const base = ropeInverseFrequencies(8, 10000).frequencies;
    // θ_0 rotates ≫ β_fast times over 64 positions: extrapolated (kept); the slowest is interpolated (÷ factor)
    expect(y.frequencies[0]).toBe(base[0]);
    expect(y.frequencies[3]).toBeCloseTo(base[3] / 4, 15);
  });

  it("Qwen2 always has q/k/v biases and never an o_proj bias; GPT-2 n_inner null = 4·n_embd", () => {
    const q = parseModelConfig({ ...LLAMA, architectures: ["Qwen2ForCausalLM"] });
    expect(q.family === "llama" && [q.qkvBias, q.outputBias]).toEqual([true, false]);
    const g = parseModelConfig({
      architectures: ["GPT2LMHeadModel"],
      vocab_size: 5,
      n_embd: 8,
      n_layer: 1,
      n_head: 2,
      n_positions: 4,
      n_inner: null,
    });
    expect(g.family === "gpt2" && [g.innerSize, g.tieWordEmbeddings, g.activation]).toEqual([32, true, "gelu_new"]);
  });

  it("DeepSeek-V2: scale (nope + rope)^−½, YaRN mscale², MoE defaults", () => {
    const base = {
      architectures: ["DeepseekV2ForCausalLM"],
      vocab_size: 5,
      hidden_size: 8,
      intermediate_size: 4,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      kv_lora_rank: 4,
      qk_nope_head_dim: 4,
      qk_rope_head_dim: 2,
      v_head_dim: 4,
    };
    const c = parseModelConfig(base);
    expect(c.family === "deepseek_v2" && c.softmaxScale).toBe(6 ** -0.5);
    const y = parseModelConfig({
      ...base,
      max_position_embeddings: 163840,
      rope_scaling: { type: "yarn", factor: 40, mscale: 0.6, mscale_all_dim: 0.6, original_max_position_embeddings: 4096 },
    });
    const m = 0.1 * 0.6 * Math.log(40) + 1;
    expect(y.family === "deepseek_v2" && y.softmaxScale).toBeCloseTo(6 ** -0.5 * m * m, 15);
  });

  it("a missing field, a wrong type and an unsupported architecture name the file and field", () => {
    const { hidden_size: _, ...noHidden } = LLAMA;
    const e = catchError(() => parseModelConfig(noHidden, "m/config.json"), FormatError);
    expect([e.argument, e.actual]).toEqual(["m/config.json: hidden_size", "missing"]);
    expect(catchError(() => parseModelConfig({ ...LLAMA, num_attention_heads: "4" }), FormatError).argument).toBe(
      "config.json: num_attention_heads",
    );
    expect(catchError(() => parseModelConfig({ ...LLAMA, num_key_value_heads: 3 }), FormatError).argument).toBe(
      "config.json: num_key_value_heads",
    );
    const arch = catchError(() => parseModelConfig({ ...LLAMA, architectures: ["BertModel"] }), FormatError);
    expect(arch.argument).toBe("config.json: architectures[0]");
    expect(arch.actual).toBe('"BertModel"');
    expect(catchError(() => parseModelConfig({ ...LLAMA, rope_scaling: { rope_type: "dynamic", factor: 2 } }), FormatError).argument).toBe(
      "config.json: rope_scaling.rope_type",
    );
    expect(catchError(() => readModelConfig("/nonexistent-dir"), ValueError).argument).toBe("dir");
  });
});

describe("checkpoints that contradict their config", () => {
  const dir = fixtureDir("llama-tied-llama3");
  const tensors = parseSafetensors(readFileSync(`${dir}/model.safetensors`)).tensors;
  const config = parseModelConfig(LLAMA);
  const withTensors = (edit: (t: Record<string, { shape: number[]; data: Float64Array }>) => void) => {
    const t: Record<string, { shape: number[]; data: Float64Array }> = {};
    for (const [k, v] of tensors) t[k] = { shape: [...v.shape], data: v.data };
    edit(t);
    return memoryStore({ "model.safetensors": encodeSafetensors(t, { dtype: "F32" }) }, "ckpt");
  };

  it("a tensor whose shape contradicts config.json: FormatError naming file, tensor and the config fields", () => {
    const store = withTensors((t) => {
      const k = t["model.layers.1.self_attn.k_proj.weight"];
      t["model.layers.1.self_attn.k_proj.weight"] = { shape: [8, 32], data: k.data.slice(0, 256) };
    });
    const e = catchError(() => PretrainedModel.fromStore(config, store), FormatError);
    expect(e.argument).toBe('model.safetensors: tensor "model.layers.1.self_attn.k_proj.weight" shape');
    expect(e.expected).toContain("[16, 32] (from config.json num_key_value_heads·head_dim × hidden_size)");
    expect(e.actual).toBe("[8, 32]");
  });

  it("a missing tensor, and an untied head without lm_head.weight", () => {
    const store = withTensors((t) => {
      delete t["model.layers.0.mlp.up_proj.weight"];
    });
    expect(catchError(() => PretrainedModel.fromStore(config, store), FormatError).argument).toBe(
      'ckpt: tensor "model.layers.0.mlp.up_proj.weight"',
    );
    const untied = parseModelConfig({ ...LLAMA, tie_word_embeddings: false });
    expect(
      catchError(
        () =>
          PretrainedModel.fromStore(
            untied,
            withTensors(() => {}),
          ),
        FormatError,
      ).argument,
    ).toBe('ckpt: tensor "lm_head.weight"');
  });

  it("token ids outside the vocabulary name the id; the decoding state is unchanged", () => {
    const m = loadPretrained(dir);
    const e = catchError(() => m.forward([1, 2, 64]), ValueError);
    expect(e.argument).toBe("ids[2]");
    expect(e.expected).toContain("[0, 64) (config.json vocab_size = 64)");
    expect(catchError(() => m.forward([1.5]), ValueError).argument).toBe("ids[0]");
    const state = m.createState();
    m.step(state, [1, 2]);
    expect(() => m.step(state, [-1])).toThrow(ValueError);
    expect(state.position).toBe(2);
    expect(state.caches[0].length).toBe(2);
  });

  it("parameter counts from config equal the tensors each checkpoint holds", () => {
    for (const name of [
      "llama-tied-llama3",
      "llama-untied-bf16",
      "qwen2-bias-f16",
      "gpt2-sharded",
      "deepseek-dense-qlora",
      "deepseek-moe-bf16",
    ]) {
      const store = openCheckpointStore(fixtureDir(name));
      const stored = store.names().reduce((s, n) => s + store.shape(n).reduce((a, b) => a * b, 1), 0);
      store.close();
      expect(parameterCount(readModelConfig(fixtureDir(name))), name).toBe(stored);
    }
    const info = modelInfo(readModelConfig(fixtureDir("deepseek-moe-bf16")));
    expect([info.attention, info.kvFloatsPerTokenPerLayer, info.mhaFloatsPerTokenPerLayer]).toEqual(["MLA", 16 + 4, 4 * (8 + 4 + 8)]);
  });
});
