/**
 * The multi-problem form (issue 11/13) must leave every single-`problem:` config's identity alone:
 * each shipped config whose tasks read no checkpoint expands to exactly the cell ids, in exactly the
 * order, of its committed results.csv (the `cell` and `problem` columns), and its config hash is the
 * one in the committed manifest. Checkpoint-reading configs are excluded on purpose: their cells now
 * hash the checkpoint's files (config/load.ts checkpointDataPaths), so they change id once. A config
 * grown into `problems:` (frontier) must still contain every committed task that read no checkpoint.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_GENERATORS, expandPlan, loadConfigFile, planTasks } from "@randattn/experiments/internal";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const configs = join(root, "packages/experiments/configs");

describe("identity of the shipped single-problem configs is unchanged", () => {
  const files = readdirSync(configs).filter((f) => f.endsWith(".yaml"));
  for (const file of files) {
    const loaded = loadConfigFile(join(configs, file));
    const resultsPath = join(root, "results", loaded.config.experiment, "results.csv");
    const readsCheckpoint = loaded.problems.some((p) => CHECKPOINT_GENERATORS.has(p.problem.generator));
    if (!existsSync(resultsPath)) continue;
    if (loaded.config.problems) {
      // A config grown into named problems (frontier: its two scale regimes became `diffuse` and
      // `peaked`, real heads were added): every committed task that read no checkpoint is still one of
      // its tasks, in the same relative order, so a regenerate reuses it.
      it(`${file}: every committed synthetic task is still a task of the grown config, in order`, () => {
        const rows = parse(readFileSync(resultsPath, "utf8"), { columns: true }) as Record<string, string>[];
        // The `problem` column is a label now (the generator in results committed before the change).
        const generatorOf = (label: string) => loaded.problems.find((p) => p.label === label)?.problem.generator ?? label;
        const committed = rows.filter((r) => !CHECKPOINT_GENERATORS.has(generatorOf(r.problem))).map((r) => `${r.cell}/${r.trial}`);
        const keys = planTasks(expandPlan(loaded)).map((t) => t.key);
        const position = new Map(keys.map((k, i) => [k, i]));
        expect(committed.filter((k) => !position.has(k))).toEqual([]);
        const at = committed.map((k) => position.get(k)!);
        expect(at).toEqual([...at].sort((a, b) => a - b));
      });
      continue;
    }
    if (readsCheckpoint) continue;
    it(`${file}: cell ids, order and config hash equal the committed results`, () => {
      const rows = parse(readFileSync(resultsPath, "utf8"), { columns: true }) as Record<string, string>[];
      const plan = expandPlan(loaded);
      const tasks = planTasks(plan);
      // Only the committed trials (a config may have grown its trials since; new trials add rows).
      const committedTrials = new Set(rows.map((r) => r.trial)).size;
      const expected = tasks.filter((t) => t.trial < committedTrials);
      expect(rows.map((r) => `${r.cell}/${r.trial}`)).toEqual(expected.map((t) => t.key));
      expect(rows.map((r) => r.problem)).toEqual(expected.map((t) => plan.cells[t.cell].problem.generator));
      const manifest = JSON.parse(readFileSync(join(root, "results", loaded.config.experiment, "manifest.json"), "utf8"));
      if (committedTrials === loaded.config.trials) expect(manifest.config_sha256 ?? manifest.configHash).toBe(loaded.hash);
    });
  }
});
