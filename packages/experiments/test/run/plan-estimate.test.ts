/**
 * `randattn plan` on a fresh folder (issue 13): the estimated flops of a sweep of sketch methods
 * equal, to the flop, the sum of the flops its run then records; after the run, a grown config's
 * time estimate comes from the recorded timings scaled by flops.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, runPlan } from "@randattn/experiments/internal";
import { estimatePlan } from "../../src/run/plan-report.js";
import { tempDir } from "../helpers.js";

const config = (trials: number) => ({
  experiment: "estimate",
  seed: 5,
  trials,
  problem: { generator: "low-rank", params: { d: 6, dv: 4, rank: 3 } },
  methods: [
    { method: "exact" },
    { method: "row-sampling", params: { scheme: "value-norm" } },
    { method: "random-features", params: { features: "positive" } },
    { method: "nystromformer" },
  ],
  sweep: {
    "problem.n": [24, 40],
    "row-sampling.samples": [4, 8],
    "random-features.numFrequencies": [8, 16],
    "nystromformer.landmarks": [4],
  },
});

describe("plan estimates every method's flops", () => {
  it("a fresh sweep's estimated flops are the flops its run records; timings then scale to a grown sweep", async () => {
    const out = tempDir();
    const plan = expandPlan(loadConfigObject(config(2), "/tmp", "e.yaml"));
    const before = estimatePlan(plan, { outRoot: out, workers: 1 });
    expect([before.tasks, before.reused, before.tasksWithoutFlops, before.seconds]).toEqual([24, 0, 0, null]);
    // exact at N = 24, d = 6, d_V = 4: 2·576·6 + 5·576 + 2·576·4 + 24·4 = 14496 flops.
    expect(before.lines.join("\n")).toMatch(/flops per task × tasks, per cell:\n\s+14496 ×\s+2 {2}exact \(problem\.n=24\)/);
    const r = await runPlan(plan, { outRoot: out, workers: 0, progress: "none", report: false, log: () => {} });
    expect(r.ok).toBe(24);
    const rows: Record<string, string>[] = parse(readFileSync(join(r.dir, "results.csv"), "utf8"), { columns: true });
    const recorded = rows.reduce((a, row) => a + Number(row.flops), 0);
    expect(before.flops).toBe(recorded);
    const grown = estimatePlan(expandPlan(loadConfigObject(config(3), "/tmp", "e.yaml")), { outRoot: out, workers: 1 });
    expect([grown.reused, grown.tasks - grown.reused]).toEqual([24, 12]);
    expect(grown.flops).toBe(recorded / 2);
    expect(grown.seconds).not.toBeNull();
    expect(grown.lines.join("\n")).toContain("from earlier timings scaled by flops");
  });
});
