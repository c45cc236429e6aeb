import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, regenerateOutputs, RunRefusedError, runPlan } from "@randattn/experiments/internal";
import { tempDir, tinyConfig } from "../helpers.js";

const opts = (outRoot: string) => ({ outRoot, workers: 0, progress: "none" as const, log: () => {} });
const plan = (c: Record<string, unknown>) => expandPlan(loadConfigObject(c, "/tmp", "t.yaml"));
// 1 size × 2 methods × 2 trials = 4 tasks, grown to 3 sizes × 3 methods × 3 trials = 27.
const small = tinyConfig({ sweep: { "problem.n": [5] } });
const grown = {
  ...small,
  trials: 3,
  sweep: { "problem.n": [5, 9, 17] },
  methods: [...(small.methods as object[]), { method: "exact-streaming", label: "blocks-2", params: { blockSize: 2 } }],
};

describe("sweeps that grow", () => {
  it("adding trials, sweep values and methods runs only the new tasks; results.csv equals a from-scratch run", async () => {
    const out = tempDir();
    expect((await runPlan(plan(small), opts(out))).ran).toBe(4);
    const r = await runPlan(plan(grown), opts(out));
    expect([r.ran, r.skipped]).toEqual([23, 4]);
    const fresh = tempDir();
    expect((await runPlan(plan(grown), opts(fresh))).ran).toBe(27);
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
  });

  it("from committed files only (no journal, as on a fresh clone) the grown run reuses them too", async () => {
    const out = tempDir();
    await runPlan(plan(small), opts(out));
    rmSync(join(out, "tiny/journal.jsonl"));
    const r = await runPlan(plan(grown), opts(out));
    expect([r.ran, r.skipped]).toEqual([23, 4]);
    const fresh = tempDir();
    await runPlan(plan(grown), opts(fresh));
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
  });

  it("changing what a finished task computed is refused, naming the changed keys", async () => {
    const out = tempDir();
    await runPlan(plan(small), opts(out));
    const changed = { ...small, seed: 99, problem: { generator: "gaussian", params: { d: 6, dv: 3 } } };
    const e = await runPlan(plan(changed), opts(out)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunRefusedError);
    expect((e as Error).message).toContain("problem.params.d: 4 → 6; seed: 11 → 99");
    const fewer = await runPlan(plan({ ...small, trials: 1 }), opts(out)).catch((x: unknown) => x);
    expect((fewer as Error).message).toContain("trials: 2 → 1");
  });

  it("presentation is not identity: a new description and figure redraw with `report`, from results.csv alone", async () => {
    const out = tempDir();
    const r = await runPlan(plan(small), opts(out));
    const before = readFileSync(join(out, "tiny/results.csv"), "utf8");
    rmSync(join(out, "tiny/journal.jsonl"));
    const edited = { ...small, description: "new words", report: { figures: [{ name: "by-n", x: "problem_n", title: "New title" }] } };
    expect(plan(edited).loaded.hash).toBe(plan(small).loaded.hash);
    writeFileSync(join(out, "tiny/figures/by-n.svg"), "old");
    const m = regenerateOutputs(plan(edited), out);
    expect(m.results_sha256).toBe(r.manifest!.results_sha256);
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(before);
    expect(readFileSync(join(out, "tiny/figures/by-n.svg"), "utf8")).toContain("New title");
    expect(readFileSync(join(out, "tiny/report.html"), "utf8")).toContain("new words");
  });
});
