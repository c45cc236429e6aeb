import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, RunRefusedError, runPlan } from "@randattn/experiments/internal";
import { tempDir, tinyConfig } from "../helpers.js";

const plan = (c: unknown) => expandPlan(loadConfigObject(c, "/tmp", "c.yaml"));
const quiet = { workers: 0, progress: "none" as const, report: false, log: () => {} };

/** Runs with the journal failing after `k` tasks (an interrupted run). */
async function interrupted(out: string, k: number) {
  process.env.RANDATTN_FAIL_JOURNAL_AFTER = String(k);
  try {
    return await runPlan(plan(tinyConfig()), { ...quiet, outRoot: out });
  } finally {
    delete process.env.RANDATTN_FAIL_JOURNAL_AFTER;
  }
}

describe("resume refuses when the config changed", () => {
  it("resume of a changed config is refused naming the changed keys; --restart starts over", async () => {
    const out = tempDir();
    expect((await interrupted(out, 2)).complete).toBe(false);
    const changed = plan(tinyConfig({ seed: 12 }));
    const e = await runPlan(changed, { ...quiet, outRoot: out, mode: "resume" }).catch((x) => x);
    expect(e).toBeInstanceOf(RunRefusedError);
    expect(e.message).toMatch(
      /holds results of a different run: 2 finished task\(s\) this config would compute differently; changed: seed: 11 → 12\. Refusing to resume/,
    );
    await expect(runPlan(changed, { ...quiet, outRoot: out })).rejects.toBeInstanceOf(RunRefusedError);
    const restarted = await runPlan(changed, { ...quiet, outRoot: out, restart: true });
    expect([restarted.complete, restarted.ok, restarted.skipped]).toEqual([true, 8, 0]);
  });

  it("an interrupted run may be resumed with a grown config (its finished tasks are kept), not run", async () => {
    const out = tempDir();
    await interrupted(out, 2);
    const grown = plan(tinyConfig({ trials: 3 }));
    await expect(runPlan(grown, { ...quiet, outRoot: out })).rejects.toThrow(/unfinished run \(2\/8 tasks done\) of an earlier version/);
    const r = await runPlan(grown, { ...quiet, outRoot: out, mode: "resume" });
    expect([r.complete, r.ran, r.skipped]).toEqual([true, 10, 2]);
  });

  it("run refuses an unfinished run of the same config and points to resume", async () => {
    const out = tempDir();
    await interrupted(out, 2);
    const e = await runPlan(plan(tinyConfig()), { ...quiet, outRoot: out }).catch((x) => x);
    expect(e).toBeInstanceOf(RunRefusedError);
    expect(e.message).toContain(`continue it with \`randattn resume c.yaml --out ${out}\``);
  });
});
