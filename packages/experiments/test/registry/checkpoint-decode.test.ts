/**
 * The decode evaluation on the shipped checkpoints (issue 12, problem `checkpoint-decode`): a
 * sliding window covering the whole sequence is the exact cache (KL 0, top-1 100 %, the
 * perplexity the full forward's logits give), a small window is not; the MLA checkpoint takes the
 * latent caches only, online-svd at full rank being exact.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { derive, ValueError } from "@randattn/core";
import { describe, expect, it } from "vitest";
import type { DecodeStructure } from "../../src/registry/decode.js";
import { getMethod } from "../../src/registry/methods.js";
import { getProblem } from "../../src/registry/problems.js";
import type { Params, ProblemInstance } from "../../src/registry/types.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const SEED = derive([12], "test");
const PROMPT = 24;
const STEPS = 6;

function problem(checkpoint: string): ProblemInstance & { decode: DecodeStructure } {
  const params: Params = { checkpoint, text: "", offset: 0, promptLength: PROMPT, steps: STEPS };
  const ctx = { baseDir: ROOT, wantWeights: false, kernel: { kind: "softmax" as const }, mask: { kind: "causal" as const } };
  return getProblem("checkpoint-decode").generate(params, ctx, SEED) as ProblemInstance & { decode: DecodeStructure };
}

function run(p: ProblemInstance, cache: string, budget: number) {
  const r = getMethod("kv-cache-decode").run(p, { cache, budget }, { baseDir: ROOT, wantWeights: false }, SEED);
  return r.extras as Record<string, number>;
}

describe("checkpoint-decode on the Llama (GQA) checkpoint", () => {
  const llama = problem("models/llama-gqa-fortunes");

  it("takes promptLength + steps tokens of the held-out text", () => {
    expect(llama.decode.text).toHaveLength(PROMPT + STEPS);
    expect(llama.decode.promptLength).toBe(PROMPT);
  });

  it("a covering sliding window is exact: KL < 1e-12, top-1 1, the full forward's perplexity", () => {
    const e = run(llama, "sliding-window", PROMPT + STEPS);
    expect(e.next_token_kl).toBeLessThan(1e-12);
    expect(e.attention_error).toBeLessThan(1e-12);
    expect(e.top1_agreement).toBe(1);
    expect(e.bits_fraction).toBe(1);
    // Independent reference: the teacher-forced perplexity from one full forward's logits.
    const { model, text } = llama.decode as { model: import("@randattn/core").PretrainedModel; text: number[] };
    const logits = model.forward(text).logits;
    let nll = 0;
    for (let s = 0; s < STEPS; s++) {
      const row = logits.rowView(PROMPT - 1 + s);
      let m = Number.NEGATIVE_INFINITY;
      for (const v of row) m = Math.max(m, v);
      let z = 0;
      for (const v of row) z += Math.exp(v - m);
      nll -= row[text[PROMPT + s]] - m - Math.log(z);
    }
    expect(Math.abs(e.perplexity / Math.exp(nll / STEPS) - 1)).toBeLessThan(1e-10);
    expect(e.perplexity_exact).toBeCloseTo(e.perplexity, 10);
  });

  it("a small window is not: KL > 0, and its bits are window / tokens held by the exact cache", () => {
    const e = run(llama, "sliding-window", 4);
    expect(e.next_token_kl).toBeGreaterThan(1e-6);
    expect(e.attention_error).toBeGreaterThan(1e-6);
    // The exact caches hold the prompt and the STEPS − 1 fed continuation tokens.
    expect(e.bits_fraction).toBeCloseTo(4 / (PROMPT + STEPS - 1), 12);
  });

  it("refuses a latent cache on a GQA model (typed error)", () => {
    expect(() => run(llama, "online-svd", 4)).toThrow(ValueError);
  });
});

describe("checkpoint-decode on the DeepSeek (MLA) checkpoint", () => {
  const deepseek = problem("models/deepseek-mla-fortunes");

  it("online-svd at full rank (d_L = 32) is exact, at rank 4 it is not and stores fewer bits", () => {
    const full = run(deepseek, "online-svd", 32);
    expect(full.next_token_kl).toBeLessThan(1e-12);
    expect(full.top1_agreement).toBe(1);
    const low = run(deepseek, "online-svd", 4);
    expect(low.next_token_kl).toBeGreaterThan(1e-8);
    expect(low.attention_error).toBeGreaterThan(1e-6);
    expect(low.cache_bits).toBeLessThan(full.cache_bits);
    expect(run(deepseek, "exact", 1).next_token_kl).toBe(0);
  });

  it("refuses a KV cache on an MLA model (typed error naming the cache)", () => {
    expect(() => run(deepseek, "sliding-window", 8)).toThrow(/method\.params\.cache|latent cache/);
    expect(() => run(deepseek, "kivi", 4)).toThrow(ValueError);
  });
});
