/**
 * Compressed caches (issue 12) in the shipped checkpoints' decoding: a cache whose budget covers
 * the whole sequence equals the exact cache token for token (and its logits to rounding); a small
 * window changes the continuation; MLA layers take a latent cache the same way.
 */
import { fileURLToPath } from "node:url";
import { derive } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { describe, expect, it } from "vitest";
import { kvCacheFactory, latentCacheFactory } from "../../src/index.js";

const root = (m: string) => fileURLToPath(new URL(`../../../../models/${m}`, import.meta.url));
const SEED = derive([12], "pretrained-caches");

function maxRel(a: Float64Array, b: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
}

describe("pretrained decoding with issue-12 caches", () => {
  const llama = loadPretrained(root("llama-gqa-fortunes"));
  const prompt = llama.tokenizer!.encode("The best way to predict the future is");

  it("a covering sliding window and the full cache equal the exact cache token for token", () => {
    const exact = llama.generate(prompt, { maxNewTokens: 16 });
    const total = prompt.length + 16;
    for (const caches of [
      { cacheFactory: kvCacheFactory("sliding-window", { window: total }, SEED) },
      { cacheFactory: kvCacheFactory("full", {}, SEED) },
    ]) {
      expect(llama.generate(prompt, { maxNewTokens: 16, caches })).toEqual(exact);
      // Logits of a prefill plus one step, against the exact cache's.
      const a = llama.createState(caches);
      const b = llama.createState();
      expect(maxRel(llama.step(a, prompt).logits.data, llama.step(b, prompt).logits.data)).toBeLessThan(1e-12);
      expect(maxRel(llama.step(a, [exact[0]]).logits.data, llama.step(b, [exact[0]]).logits.data)).toBeLessThan(1e-12);
    }
  });

  it("a 4-token window forgets the prompt: the continuation changes", () => {
    const exact = llama.generate(prompt, { maxNewTokens: 16 });
    const caches = { cacheFactory: kvCacheFactory("sliding-window", { window: 4 }, SEED) };
    expect(llama.generate(prompt, { maxNewTokens: 16, caches })).not.toEqual(exact);
  });

  it("MLA layers decode with a latent cache: exact and full-rank online SVD match the exact cache", () => {
    const ds = loadPretrained(root("deepseek-mla-fortunes"));
    const p = ds.tokenizer!.encode("A fool and his money");
    const exact = ds.generate(p, { maxNewTokens: 12 });
    expect(ds.generate(p, { maxNewTokens: 12, caches: { latentCacheFactory: latentCacheFactory("exact", {}, SEED) } })).toEqual(exact);
    const low = ds.generate(p, { maxNewTokens: 12, caches: { latentCacheFactory: latentCacheFactory("online-svd", { rank: 2 }, SEED) } });
    expect(low).toHaveLength(12);
  });
});
