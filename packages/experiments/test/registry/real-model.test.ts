/**
 * The `model` problem and the `sketch-perplexity` evaluation (issue 10 §4) on the shipped
 * checkpoints, checked against independent computations: the problem's Q/K/V are the forward's
 * captures, the exact "sketch" scores KL 0 and top-1 100 %, and the perplexity equals the one
 * computed here from the forward's logits.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { derive, Matrix, ValueError } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { describe, expect, it } from "vitest";
import { getMethod } from "../../src/registry/methods.js";
import { getProblem } from "../../src/registry/problems.js";
import { downstreamScores, parseLayers, sketchParamsFor, tokenizeDocuments } from "../../src/registry/real.js";
import type { Params, ProblemInstance } from "../../src/registry/types.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const LLAMA = join(ROOT, "models/llama-gqa-fortunes");
const DEEPSEEK = join(ROOT, "models/deepseek-mla-fortunes");
const SEED = derive([7], "test");

function generate(params: Params, mask: { kind: "causal" } | null = { kind: "causal" }): ProblemInstance {
  const def = getProblem("model");
  const full: Params = { text: "", offset: 0, n: 64, nQueries: 0, layer: 0, head: -1, tensors: "post-rope", ...params };
  return def.generate(full, { baseDir: ROOT, wantWeights: false, kernel: { kind: "softmax" }, mask }, SEED);
}

function maxDiff(a: Matrix, b: Matrix): number {
  expect(a.shape).toEqual(b.shape);
  let m = 0;
  for (let i = 0; i < a.data.length; i++) m = Math.max(m, Math.abs(a.data[i] - b.data[i]));
  return m;
}

describe("model problem", () => {
  it("hands out the forward's own post-RoPE Q, K, V, GQA groups sharing K and V", () => {
    const inst = generate({ checkpoint: "models/llama-gqa-fortunes", layer: 2 });
    const model = loadPretrained(LLAMA);
    const ids = inst.pretrained!.ids;
    expect(ids.length).toBe(64);
    expect(ids[0]).toBe(1023); // BOS before the first document, as the training script
    const cap = model.forward(ids, { capture: { layers: [2], tensors: ["q", "k", "v"] } }).layers[0];
    expect(inst.heads).toHaveLength(4);
    expect(inst.numKvHeads).toBe(2);
    for (let h = 0; h < 4; h++) {
      expect(maxDiff(inst.heads[h].queries, cap.q![h])).toBe(0);
      expect(maxDiff(inst.heads[h].keys, cap.k![h >> 1])).toBe(0);
      expect(maxDiff(inst.heads[h].values, cap.v![h >> 1])).toBe(0);
    }
    expect(inst.heads[0].keys).toBe(inst.heads[1].keys);
    expect(inst.kernel).toEqual({ kind: "softmax", scale: 0.25 }); // head_dim 16
  });

  it("one head, the last queries, pre-RoPE keys (MLA: [nope | rope] wide)", () => {
    const inst = generate({ checkpoint: "models/deepseek-mla-fortunes", layer: 1, head: 3, nQueries: 16, tensors: "pre-rope", offset: 10 });
    const model = loadPretrained(DEEPSEEK);
    const cap = model.forward(inst.pretrained!.ids, { capture: { layers: [1], tensors: ["qPre", "kPre", "v"] } }).layers[0];
    expect(inst.heads).toHaveLength(1);
    const h = inst.heads[0];
    expect(h.queries.shape).toBe("16×32");
    for (let i = 0; i < 16; i++) for (let j = 0; j < 32; j++) expect(h.queries.get(i, j)).toBe(cap.qPre![3].get(48 + i, j));
    expect(maxDiff(h.keys, cap.kPre![3])).toBe(0);
    expect(maxDiff(h.values, cap.v![3])).toBe(0);
    expect(inst.kernel.scale).toBeCloseTo(32 ** -0.5, 15);
  });

  it("tokenizes fortune-format text one BOS per document", () => {
    const model = loadPretrained(LLAMA);
    const ids = tokenizeDocuments(model, "Hello there.\n%\nA second one.\n", 1023, "t");
    const a = model.tokenizer!.encode("Hello there.");
    const b = model.tokenizer!.encode("A second one.");
    expect(a[0]).toBe(1023); // tokenizer_config add_bos_token: no second BOS is added
    expect(ids).toEqual([...a, ...b]);
  });

  it("rejects a window past the text, a layer or head the model lacks", () => {
    expect(() => generate({ checkpoint: "models/llama-gqa-fortunes", offset: 1 << 20, n: 64 })).toThrow(ValueError);
    expect(() => generate({ checkpoint: "models/llama-gqa-fortunes", layer: 4 })).toThrow(/problem.params.layer/);
    expect(() => generate({ checkpoint: "models/llama-gqa-fortunes", head: 4 })).toThrow(/problem.params.head/);
  });
});

describe("sketch-perplexity", () => {
  const method = getMethod("sketch-perplexity");
  const run = (inst: ProblemInstance, p: Params) =>
    method.run(inst, { sketch: "exact", sketchParams: "{}", budget: 0, layers: "all", ...p }, { baseDir: ROOT, wantWeights: false }, SEED);

  it("the exact sketch scores KL 0, top-1 100 % and the forward's own perplexity", () => {
    for (const checkpoint of ["models/llama-gqa-fortunes", "models/deepseek-mla-fortunes"]) {
      const inst = generate({ checkpoint, n: 96 });
      const r = run(inst, {});
      expect(r.extras!.mean_kl_nats).toBeLessThan(1e-12);
      expect(r.extras!.top1_agreement).toBe(1);
      expect(Math.abs(r.extras!.perplexity_ratio! - 1)).toBeLessThan(1e-12);
      // Independent perplexity: log-softmax of the plain forward's logits, literal formula.
      const model = loadPretrained(join(ROOT, checkpoint));
      const ids = inst.pretrained!.ids;
      const logits = model.forward(ids).logits;
      let nll = 0;
      for (let i = 0; i + 1 < ids.length; i++) {
        const row = Array.from(logits.rowView(i));
        const z = row.reduce((s, v) => s + Math.exp(v), 0);
        nll -= row[ids[i + 1]] - Math.log(z);
      }
      const ppl = Math.exp(nll / (ids.length - 1));
      expect(Math.abs(r.extras!.exact_perplexity! / ppl - 1)).toBeLessThan(1e-12);
      // Trained models: far below the 1,024-token uniform perplexity.
      expect(ppl).toBeLessThan(300);
      // Cost: exact attention of 4 layers × 4 heads, causal flops charged like the exact method.
      expect(r.cost.flops).toBe(r.extras!.exact_attention_flops);
      expect(r.extras!.flops_ratio).toBe(1);
    }
  });

  it("a random-feature sketch in one layer costs less and moves the distribution (KL > 0)", () => {
    const inst = generate({ checkpoint: "models/llama-gqa-fortunes", n: 96 });
    const one = run(inst, { sketch: "random-features", budget: 16, layers: "1" });
    const all = run(inst, { sketch: "random-features", budget: 16, layers: "all" });
    expect(one.extras!.mean_kl_nats).toBeGreaterThan(1e-4);
    expect(all.extras!.mean_kl_nats).toBeGreaterThan(one.extras!.mean_kl_nats!);
    expect(one.extras!.top1_agreement).toBeLessThan(1);
    expect(one.cost.flops).toBeLessThan(one.extras!.exact_attention_flops!);
    expect(all.extras!.exact_attention_flops).toBe(4 * one.extras!.exact_attention_flops!);
    // Same seed, same draws: deterministic.
    expect(run(inst, { sketch: "random-features", budget: 16, layers: "1" }).extras).toEqual(one.extras);
  });

  it("scores an independent pair of logit matrices by the literal formulas", () => {
    const e = Matrix.fromArray([
      [0, 1, 2],
      [2, 0, 0],
    ]);
    const a = Matrix.fromArray([
      [0, 0, 2],
      [0, 2, 0],
    ]);
    const s = downstreamScores(e, a, [0, 2]);
    const sm = (r: number[]) => r.map((v) => Math.exp(v) / r.reduce((t, u) => t + Math.exp(u), 0));
    const pe = [sm([0, 1, 2]), sm([2, 0, 0])];
    const pa = [sm([0, 0, 2]), sm([0, 2, 0])];
    const kl = pe.map((p, i) => p.reduce((t, v, j) => t + v * Math.log(v / pa[i][j]), 0));
    expect(s.meanKl).toBeCloseTo((kl[0] + kl[1]) / 2, 14);
    expect(s.top1Agreement).toBe(0.5);
    expect(s.perplexity).toBeCloseTo(1 / pa[0][2], 12);
    expect(s.exactPerplexity).toBeCloseTo(1 / pe[0][2], 12);
  });

  it("rejects bad sketch params, layers and problems", () => {
    const rf = getMethod("random-features");
    expect(() => sketchParamsFor(rf, '{"nope": 1}', 0)).toThrow(/sketchParams.nope/);
    expect(() => sketchParamsFor(rf, "[1]", 0)).toThrow(ValueError);
    expect(sketchParamsFor(rf, "{}", 32).numFrequencies).toBe(32);
    expect(() => parseLayers("0,7", 4)).toThrow(/method.params.layers/);
    expect(parseLayers("2, 0,2", 4)).toEqual([0, 2]);
    const gaussian = getProblem("gaussian").generate(
      { n: 8, nQueries: 0, d: 4, dv: 4, scale: 1 },
      { baseDir: ROOT, wantWeights: false, kernel: { kind: "softmax" }, mask: null },
      SEED,
    );
    expect(() => run(gaussian, {})).toThrow(/"model" problem/);
  });
});
