/**
 * A checkpoint is hashed into the identity of the tasks that read it, like `.npy` inputs: its
 * config.json, model.safetensors and tokenizer.json and the held-out text. A retrained checkpoint
 * (any byte of those files changed) gives new cell ids, and a run into the old folder is refused
 * with a message naming the file that changed.
 */
import { appendFileSync, copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, RunRefusedError, runPlan } from "@randattn/experiments/internal";
import { tempDir } from "../helpers.js";

const models = fileURLToPath(new URL("../../../../models/", import.meta.url));
const quiet = { workers: 0, progress: "none" as const, report: false, log: () => {} };

function copyCheckpoint(): string {
  const root = tempDir();
  const dir = join(root, "models/llama");
  mkdirSync(dir, { recursive: true });
  for (const f of ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"])
    copyFileSync(join(models, "llama-gqa-fortunes", f), join(dir, f));
  copyFileSync(join(models, "heldout.txt"), join(root, "models/heldout.txt"));
  return root;
}

const config = {
  experiment: "ckpt",
  seed: 3,
  trials: 1,
  metrics: ["rel_frobenius_error"],
  problems: [
    { label: "llama-l0", generator: "model", params: { checkpoint: "models/llama", n: 8, layer: 0, head: 0 } },
    { label: "synthetic", generator: "gaussian", params: { n: 8, d: 4 } },
  ],
  methods: [{ method: "exact" }],
};

describe("checkpoint files are part of the identity of the tasks that read them", () => {
  it("hashes config.json, model.safetensors, tokenizer.json and the held-out text; a changed file changes only those cells and is named", async () => {
    const root = copyCheckpoint();
    const loaded = loadConfigObject(config, root, "c.yaml");
    expect(Object.keys(loaded.dataFiles)).toEqual([
      "models/heldout.txt",
      "models/llama/config.json",
      "models/llama/model.safetensors",
      "models/llama/tokenizer.json",
    ]);
    const before = expandPlan(loaded);
    const out = tempDir();
    expect((await runPlan(before, { ...quiet, outRoot: out })).ok).toBe(2);

    // "Retrain": one more byte at the end of config.json (still valid JSON).
    appendFileSync(join(root, "models/llama/config.json"), "\n");
    const after = expandPlan(loadConfigObject(config, root, "c.yaml"));
    expect(after.cells[0].id).not.toBe(before.cells[0].id);
    expect(after.cells[1].id).toBe(before.cells[1].id); // the synthetic problem reads no checkpoint
    const e = await runPlan(after, { ...quiet, outRoot: out }).catch((x) => x);
    expect(e).toBeInstanceOf(RunRefusedError);
    expect(e.message).toMatch(/changed: .*models\/llama\/config\.json/);
  });

  it("a missing checkpoint file is a config error naming the problem's checkpoint", () => {
    const root = tempDir();
    expect(() => loadConfigObject(config, root, "c.yaml")).toThrow(
      /problems\[0\]\.params\.checkpoint: expected a readable checkpoint folder/,
    );
  });
});
