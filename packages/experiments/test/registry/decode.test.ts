import { budgetOptions, kvCacheFactory } from "@randattn/sketch";
import { describe, expect, it } from "vitest";
import { evaluateDecode, kvCacheDecode, syntheticDecodeProblem, syntheticDecoder } from "../../src/registry/decode.js";
import { getMethod, getProblem } from "@randattn/experiments/internal";

const params = {
  vocabSize: 16,
  numLayers: 2,
  dModel: 8,
  numHeads: 2,
  numKvHeads: 1,
  promptLength: 12,
  steps: 5,
  qkScale: 2.5,
  embeddingStd: 0.5,
};

describe("decode evaluation", () => {
  const problem = syntheticDecodeProblem(params, [1]);

  it("the full cache equals the exact cache: zero error and KL, full agreement, same perplexity, same bits", () => {
    const r = evaluateDecode(problem, kvCacheFactory("full", {}, [2]));
    expect(r.steps).toHaveLength(5);
    expect(r.meanAttentionError).toBeLessThan(1e-12);
    expect(r.meanKl).toBeLessThan(1e-12);
    expect(r.top1Agreement).toBe(1);
    expect(Math.abs(r.perplexity / r.perplexityExact - 1)).toBeLessThan(1e-12);
    expect(r.bitsStored).toBe(r.exactBits);
    expect(r.exactBits).toBe(64 * 2 * 16 * (4 + 4)); // 2 layers × 16 tokens kept × (d_QK + d_V) for 1 KV head
  });

  it("errors order as the budgets: an 8-bit KIVI cache is close, a 2-token window is not", () => {
    const kivi = evaluateDecode(problem, kvCacheFactory("kivi", { bits: 8, groupSize: 4 }, [2]));
    const window = evaluateDecode(problem, kvCacheFactory("sliding-window", budgetOptions("sliding-window", 2), [2]));
    expect(kivi.meanKl).toBeLessThan(1e-3);
    expect(window.meanKl).toBeGreaterThan(10 * kivi.meanKl);
    expect(window.bitsStored).toBe(64 * 2 * 2 * 8);
  });

  it("is registered (problem synthetic-decoder, method kv-cache-decode) and deterministic in its seeds", () => {
    expect(getProblem("synthetic-decoder")).toBe(syntheticDecoder);
    expect(getMethod("kv-cache-decode")).toBe(kvCacheDecode);
    const instance = syntheticDecoder.generate(params, { baseDir: ".", wantWeights: false, kernel: { kind: "softmax" }, mask: null }, [3]);
    const a = kvCacheDecode.run(instance, { cache: "qjl", budget: 8 }, { baseDir: ".", wantWeights: false }, [4]);
    const b = kvCacheDecode.run(instance, { cache: "qjl", budget: 8 }, { baseDir: ".", wantWeights: false }, [4]);
    expect(a.extras).toEqual(b.extras);
    expect(a.output).toBeNull();
    expect(a.extras?.bits_fraction).toBeGreaterThan(0);
  });
});
