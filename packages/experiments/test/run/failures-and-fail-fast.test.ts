import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";

// The debug methods are registered at import time only when this is set.
process.env.RANDATTN_DEBUG_METHODS = "1";
const { expandPlan, loadConfigObject, runPlan } = await import("@randattn/experiments");

const plan = () =>
  expandPlan(
    loadConfigObject(
      {
        experiment: "fails",
        seed: 1,
        trials: 3,
        problem: { generator: "gaussian", params: { n: 5, d: 3, dv: 2 } },
        methods: [{ method: "debug-fail", params: { onTrial: 0 } }, { method: "exact" }],
      },
      "/tmp",
      "c.yaml",
    ),
  );
const quiet = { workers: 0, progress: "none" as const, report: false, log: () => {} };

describe("failing cells are recorded without stopping the others", () => {
  it("records status and error per task, and summarizes", async () => {
    const r = await runPlan(plan(), { ...quiet, outRoot: tempDir() });
    expect([r.complete, r.ok, r.failed]).toEqual([true, 5, 1]);
    expect(r.failures).toEqual([
      {
        key: expect.stringMatching(/\/0$/),
        label: "debug-fail",
        cell: expect.stringMatching(/^debug-fail( \(.*\))?, trial 0$/),
        error: "NumericalError: debug-fail: expected no failure, got an injected failure",
      },
    ]);
    const rows = parse(readFileSync(join(r.dir, "results.csv"), "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.filter((x) => x.status === "failed").map((x) => [x.method_label, x.trial])).toEqual([["debug-fail", "0"]]);
    expect(readFileSync(join(r.dir, "summary.csv"), "utf8")).toMatch(/debug-fail,0,rel_frobenius_error,2,1,/);
  });

  it("failFast stops at the first failure and leaves the run resumable", async () => {
    const out = tempDir();
    const r = await runPlan(plan(), { ...quiet, outRoot: out, failFast: true });
    expect(r.complete).toBe(false);
    expect(r.ran).toBe(1);
    const again = await runPlan(plan(), { ...quiet, outRoot: out, mode: "resume" });
    expect([again.complete, again.ran]).toEqual([true, 6]);
  });
});
