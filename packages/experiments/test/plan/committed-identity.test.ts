/**
 * The multi-problem form (issues 11/13) must leave every single-`problem:` config's identity alone.
 * For each shipped experiment, the config its committed results were computed from (the identity
 * recorded in its manifest) is expanded by today's code: the cell ids, in order, must be exactly
 * those of the committed results.csv (`cell` column, per trial), with the generator in its `problem`
 * column. This holds for results committed before `problems:` existed (single-problem configs) and
 * after (the `problem` column then holds labels).
 *
 * A failure means today's code computes other ids for the config that produced the committed
 * results: either an identity change (fix it) or a deliberate one (a method's params gained a
 * default, a checkpoint was retrained): then regenerate the committed results (`pnpm regenerate`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, planTasks } from "@randattn/experiments/internal";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const configs = join(root, "packages/experiments/configs");

describe("today's code gives the committed results' cell ids for the configs that produced them", () => {
  for (const dir of readdirSync(join(root, "results")).sort()) {
    const manifestPath = join(root, "results", dir, "manifest.json");
    const resultsPath = join(root, "results", dir, "results.csv");
    if (!existsSync(manifestPath) || !existsSync(resultsPath)) continue;
    it(`${dir}: cell ids and order of results.csv (regenerate the results if this fails after a deliberate identity change)`, () => {
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
      const rows = parse(readFileSync(resultsPath, "utf8"), { columns: true }) as Record<string, string>[];
      const loaded = loadConfigObject(manifest.identity.config, configs, `${dir} (manifest)`);
      const plan = expandPlan(loaded, { maxCells: Number.POSITIVE_INFINITY });
      expect(rows.map((r) => `${r.cell}/${r.trial}`)).toEqual(planTasks(plan).map((t) => t.key));
      expect(rows.map((r) => r.problem)).toEqual(planTasks(plan).map((t) => plan.cells[t.cell].problemLabel));
      expect(loaded.hash).toBe(manifest.config_sha256);
    });
  }
});
