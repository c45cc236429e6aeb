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
    // Fewer trials together with a changed param is still a change (trial 0 would be computed differently).
    const fewerChanged = await runPlan(plan({ ...small, trials: 1, seed: 12 }), opts(out)).catch((x: unknown) => x);
    expect(fewerChanged).toBeInstanceOf(RunRefusedError);
    expect((fewerChanged as Error).message).toContain(
      "2 finished task(s) this config would compute differently; changed: seed: 11 → 12; trials: 2 → 1",
    );
  });

  it("shrinking (fewer trials, sweep values, methods) runs nothing; results.csv equals a from-scratch run; growing back reuses all", async () => {
    const out = tempDir();
    const big = await runPlan(plan(grown), opts(out));
    const bigCsv = readFileSync(join(out, "tiny/results.csv"), "utf8");
    const journalLines = () =>
      readFileSync(join(out, "tiny/journal.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"type":"task"')).length;
    expect([big.ran, journalLines()]).toEqual([27, 27]);
    // 2 sizes × 2 methods × 2 trials: drops a trial, a sweep value and the "blocks-2" method.
    const shrunk = { ...grown, trials: 2, sweep: { "problem.n": [5, 17] }, methods: small.methods };
    const lines: string[] = [];
    const r = await runPlan(plan(shrunk), { ...opts(out), log: (l: string) => lines.push(l) });
    expect([r.ran, r.skipped, r.total]).toEqual([0, 8, 8]);
    expect(lines.join("\n")).toContain("8 finished task(s) reused, 0 new; 19 finished task(s) outside this grid kept in journal.jsonl");
    const fresh = tempDir();
    expect((await runPlan(plan(shrunk), opts(fresh))).ran).toBe(8);
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
    expect(readFileSync(join(out, "tiny/summary.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/summary.csv"), "utf8"));
    expect(journalLines()).toBe(27); // nothing deleted
    // Shrink and grow at once: n = 9 is new, n = 17 is dropped (kept), the rest reused.
    const moved = await runPlan(plan({ ...shrunk, sweep: { "problem.n": [5, 9] } }), opts(out));
    expect([moved.ran, moved.skipped]).toEqual([0, 8]); // n = 9 was run by the big config
    const back = await runPlan(plan(grown), opts(out));
    expect([back.ran, back.skipped]).toEqual([0, 27]);
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(bigCsv);
  });

  it("a shrunk config of an interrupted run is refused by run (resume finishes the shrunk grid)", async () => {
    const out = tempDir();
    process.env.RANDATTN_FAIL_JOURNAL_AFTER = "20";
    try {
      expect((await runPlan(plan(grown), opts(out))).complete).toBe(false);
    } finally {
      delete process.env.RANDATTN_FAIL_JOURNAL_AFTER;
    }
    const shrunk = plan({ ...grown, trials: 1 });
    await expect(runPlan(shrunk, opts(out))).rejects.toThrow(/unfinished run \(20\/27 tasks done\) of an earlier version/);
    const r = await runPlan(shrunk, { ...opts(out), mode: "resume" });
    expect(r.complete).toBe(true);
    const fresh = tempDir();
    await runPlan(shrunk, opts(fresh));
    expect(readFileSync(join(out, "tiny/results.csv"), "utf8")).toBe(readFileSync(join(fresh, "tiny/results.csv"), "utf8"));
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
