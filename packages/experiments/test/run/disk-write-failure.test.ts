import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expandPlan, loadConfigObject, regenerateOutputs, runPlan } from "@randattn/experiments/internal";
import { tempDir, tinyConfig } from "../helpers.js";

const plan = () => expandPlan(loadConfigObject(tinyConfig(), "/tmp", "c.yaml"));
const quiet = { workers: 0, progress: "none" as const, report: false, log: () => {} };

async function withEnv<T>(name: string, value: string, f: () => Promise<T>): Promise<T> {
  process.env[name] = value;
  try {
    return await f();
  } finally {
    delete process.env[name];
  }
}

describe("a failing disk write is reported and loses no completed cell", () => {
  it("journal append fails after 3 tasks: reported, 3 tasks kept, resume completes to the same bytes", async () => {
    const ref = await runPlan(plan(), { ...quiet, outRoot: tempDir() });
    const out = tempDir();
    const r = await withEnv("RANDATTN_FAIL_JOURNAL_AFTER", "3", () => runPlan(plan(), { ...quiet, outRoot: out }));
    expect(r.complete).toBe(false);
    expect(r.ioError).toContain("could not record a finished task");
    expect(r.ioError).toContain("EIO");
    expect(
      readFileSync(join(out, "tiny", "journal.jsonl"), "utf8")
        .trim()
        .split("\n"),
    ).toHaveLength(1 + 3);
    const again = await runPlan(plan(), { ...quiet, outRoot: out, mode: "resume" });
    expect([again.complete, again.skipped, again.ran]).toEqual([true, 3, 5]);
    expect(readFileSync(join(again.dir, "results.csv"), "utf8")).toBe(readFileSync(join(ref.dir, "results.csv"), "utf8"));
  });

  it("results.csv write fails: reported, no half file, `report` regenerates it from the journal", async () => {
    const out = tempDir();
    const r = await withEnv("RANDATTN_FAIL_WRITE", "results.csv", () => runPlan(plan(), { ...quiet, outRoot: out }));
    expect(r.ioError).toContain("could not write the outputs");
    expect(r.ioError).toContain("results.csv: expected a writable file, got EIO");
    expect(existsSync(join(out, "tiny", "results.csv"))).toBe(false);
    const m = regenerateOutputs(plan(), out);
    expect(m.status).toEqual({ ok: 8, failed: 0 });
    expect(readFileSync(join(out, "tiny", "results.csv"), "utf8").split("\n")).toHaveLength(1 + 8 + 1);
  });
});
