import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadPretrained, readNpyFile } from "@randattn/core/node";
import { relError } from "./helpers.js";

// The trained checkpoints under models/ (engineer "train": float32 weights, torch reference
// fixtures in float64 from those weights). Measured max relative logit error ≤ 1e-15; the bound
// 1e-12 is the hand-built fixtures' (summation order and libm last bits only, see torch-fixtures).
const root = (m: string) => fileURLToPath(new URL(`../../../../models/${m}`, import.meta.url));

describe.each(["llama-gqa-fortunes", "deepseek-mla-fortunes"])("shipped checkpoint %s", (name) => {
  const meta = JSON.parse(readFileSync(`${root(name)}/fixtures/meta.json`, "utf8"));
  const model = loadPretrained(root(name));
  const npy = (file: string) => readNpyFile(`${root(name)}/fixtures/${file}`).data;

  it.each([0, 1, 2])("prompt %i: tokenizer.json, logits and the greedy continuation equal torch's", (p) => {
    const prompt = meta.prompts[p];
    const ids = Array.from(npy(prompt.files.ids));
    expect(model.tokenizer!.encode(prompt.text)).toEqual(ids);
    expect(relError(model.forward(ids).logits.data, npy(prompt.files.logits))).toBeLessThan(1e-12);
    const greedy = Array.from(npy(prompt.files.greedy));
    expect(model.generate(ids, { maxNewTokens: greedy.length })).toEqual(greedy);
  });
});
