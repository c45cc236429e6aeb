import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FormatError, RandAttnError, parseModelConfig } from "@randattn/core";
import { loadPretrained } from "@randattn/core/node";
import { fixtureDir } from "../pretrained/helpers.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A copy of a fixture folder with one file replaced. */
function copyWith(name: string, file: string, bytes: Uint8Array | string): string {
  const dir = mkdtempSync(join(tmpdir(), "randattn-ckpt-"));
  made.push(dir);
  for (const f of [
    "config.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
  ]) {
    try {
      copyFileSync(join(fixtureDir(name), f), join(dir, f));
    } catch {
      // (absent in this fixture)
    }
  }
  writeFileSync(join(dir, file), bytes);
  return dir;
}

function formatError(f: () => unknown): FormatError {
  try {
    f();
  } catch (e) {
    if (e instanceof FormatError) return e;
    throw e;
  }
  throw new Error("expected a FormatError");
}

describe("checkpoint folders on disk (read tensor by tensor at offsets)", () => {
  it("a truncated shard names the shard file and the tensor cut off", () => {
    const shard = readFileSync(join(fixtureDir("gpt2-sharded"), "model-00002-of-00002.safetensors"));
    const dir = copyWith("gpt2-sharded", "model-00002-of-00002.safetensors", shard.subarray(0, shard.length - 100));
    const e = formatError(() => loadPretrained(dir));
    expect(e.argument).toMatch(/model-00002-of-00002\.safetensors: tensor ".+" data_offsets/);
    expect(e.actual).toContain("truncated");
  });

  it("a config.json that is not JSON, and a folder without weights", () => {
    expect(formatError(() => loadPretrained(copyWith("llama-tied-llama3", "config.json", "{ nope"))).actual).toContain("invalid JSON");
    const dir = copyWith("llama-tied-llama3", "model.safetensors", "");
    rmSync(join(dir, "model.safetensors"));
    expect(formatError(() => loadPretrained(dir)).actual).toBe("absent");
  });
});

describe("config.json fuzz: dropped or retyped fields give a consistent config or a FormatError", () => {
  const configs = ["llama-tied-llama3", "qwen2-bias-f16", "gpt2-sharded", "deepseek-moe-bf16", "deepseek-dense-qlora"].map((n) =>
    JSON.parse(readFileSync(join(fixtureDir(n), "config.json"), "utf8")),
  );
  it("never throws anything but a typed error", () => {
    const junk = fc.oneof(
      fc.constant(null),
      fc.string(),
      fc.integer({ min: -3, max: 3 }),
      fc.double(),
      fc.boolean(),
      fc.constant([]),
      fc.constant({}),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: configs.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.option(junk)), { maxLength: 4 }),
        (i, edits) => {
          const c = structuredClone(configs[i]);
          const keys = Object.keys(c);
          for (const [k, v] of edits) {
            const key = keys[k % keys.length];
            if (v === null) delete c[key];
            else c[key] = v;
          }
          try {
            const t = parseModelConfig(c);
            expect(t.numLayers).toBeGreaterThan(0);
            expect(Number.isInteger(t.hiddenSize)).toBe(true);
          } catch (e) {
            if (!(e instanceof RandAttnError)) throw e;
            expect(e.argument.startsWith("config.json")).toBe(true);
          }
        },
      ),
      { numRuns: 400, seed: 3 },
    );
  });
});
